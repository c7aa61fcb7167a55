# frozen_string_literal: true

require_relative "fence_helper"
require "open3"
require "uri"
require "lease_machines/fences/mysql"

module LeaseMachines
  # A MySQL/MariaDB fence across a restart of its server: every guard while
  # the server is down or just back fails with the gem's errors, never a raw
  # Mysql2 error, and a fence on a URL guards again once the server is back.
  # A server of this test's own (the test server's port plus 11, its own
  # folder), started and stopped with script/mysql.
  class MySQLRestartTest < Minitest::Test
    include FenceTestHelper

    SCRIPT = File.expand_path("../../script/mysql", __dir__)
    PORT = (URI(ENV.fetch("MYSQL_URL", "mysql2://root@127.0.0.1:33069/x")).port || 33_069) + 11
    SERVER = { "LEASE_MACHINES_MYSQL_PORT" => PORT.to_s, "LEASE_MACHINES_MYSQL_DIR" => "/tmp/lm_restart_mysql_#{PORT}" }.freeze

    def setup
      super
      @url = server("start")
      @fences = Fences::MySQL.new(@url).setup!
      @client = Mysql2::Client.new(**Stores::MySQL.const_get(:URL).options(@url))
    end

    def teardown
      @fences&.close
      @client&.close
      server("stop")
      super
    end

    def server(command)
      out, err, status = Open3.capture3(SERVER, SCRIPT, command)
      assert_predicate status, :success?, "script/mysql #{command} failed: #{err}"
      out.strip
    end

    def test_a_fence_on_a_url_guards_again_after_a_restart_and_fails_only_with_store_error_meanwhile
      resource = unique_name("restart")
      @fences.guard(resource, 5) { nil }
      server("stop")
      2.times { assert_raises(StoreError) { @fences.guard(resource, 6) { flunk "ran" } } }
      server("start")

      @fences.guard(resource, 6) { nil }
      assert_equal 6, @fences.highest(resource)
    end

    # A client the caller gave is not reopened (as for a store): after the
    # restart its guards are refused with StoreError.
    def test_a_fence_on_the_callers_client_fails_only_with_store_error_after_a_restart
      fences = Fences::MySQL.new(@client)
      resource = unique_name("restart-client")
      fences.guard(resource, 5) { nil }
      server("stop")
      server("start")

      error = assert_raises(StoreError) { fences.guard(resource, 6) { flunk "ran" } }
      refute_kind_of OutcomeUnknownError, error
      error = assert_raises(StoreError) { fences.guard(resource, 6) { flunk "ran" } }
      assert_match(/connection is closed/, error.message)
    end
  end
end
