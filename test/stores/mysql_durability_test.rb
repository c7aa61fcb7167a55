# frozen_string_literal: true

require "minitest/autorun"
require_relative "../support/mysql_server"
require "lease_machines/stores/mysql"

module LeaseMachines
  # Store#durability read from a real MySQL or MariaDB server's global
  # variables and status (the rules themselves: durability_test.rb).
  class MySQLDurabilityTest < Minitest::Test
    def setup
      @store = Stores::MySQL.new(MySQLServer.url)
      @admin = MySQLServer.connect
    end

    def teardown
      @store&.close
      @admin&.close
    end

    def test_the_server_settings_give_the_verdict
      durability = @store.durability

      assert_equal "1", durability.settings.fetch("innodb_flush_log_at_trx_commit")
      assert_includes %w[ON OFF], durability.settings.fetch("log_bin")
      assert_equal :survives_crash, durability.verdict, durability.to_s
    end

    # A server that flushes its log once a second loses the last second of
    # acknowledged grants in a crash.
    def test_a_log_flushed_once_a_second_loses_grants_in_a_crash
      before = @admin.query("SELECT @@GLOBAL.innodb_flush_log_at_trx_commit", as: :array).first.first
      @admin.query("SET GLOBAL innodb_flush_log_at_trx_commit = 2")
      durability = @store.durability

      assert_equal :loses_on_crash, durability.verdict
      assert_match(/innodb_flush_log_at_trx_commit = 2/, durability.reasons.join)
    ensure
      @admin&.query("SET GLOBAL innodb_flush_log_at_trx_commit = #{Integer(before.to_s, 10)}") if before
    end
  end
end
