# frozen_string_literal: true

require_relative "connection_fault_cases"
require_relative "server_guard_cases"
require_relative "active_record_guard_cases"
require_relative "mysql_fence_helper"
require "active_record"

module LeaseMachines
  # Fences::MySQL given a URL: the fence opens (and owns) its connection.
  class MySQLUrlGuardTest < Minitest::Test
    include GuardContract
    include ServerGuardCases
    include ForkedChildCases
    include LostConnectionCases
    include FenceTestHelper::MySQLData

    def new_fences
      Fences::MySQL.new(@url).tap { |fences| @closing << fences }
    end

    def unreachable_url = "mysql2://root@127.0.0.1:1/none?connect_timeout=1"

    def server_name = "MySQL"

    def write(conn, name, body)
      assert_kind_of Mysql2::Client, conn
      driver_write(conn, name, body)
    end

    def test_a_missing_table_raises_store_error_naming_the_fix
      database = MySQLServer.scratch_database
      uri = URI.parse(@url)
      uri.path = "/#{database}"
      empty = Fences::MySQL.new(uri.to_s)
      error = assert_raises(StoreError) { empty.guard("r", 1) { flunk "ran" } }
      assert_match(/\AMySQL: Table '#{database}.lease_machines_fences' doesn't exist \(nothing was written\); /, error.message)
      assert_match(/create the table with fences.setup!/, error.message)
      assert_kind_of Mysql2::Error, error.cause
      assert_raises(StoreError) { empty.highest("r") }
      assert_same empty, empty.setup!
      empty.guard("r", 1) { nil }
      assert_equal 1, empty.highest("r")
      empty.close
    end

    # KILL CONNECTION while the block runs: the guard's COMMIT fails on a
    # lost connection, an unknown outcome; the fence opens a new connection.
    def test_a_connection_killed_before_commit_raises_outcome_unknown
      resource = unique_name
      error = assert_raises(OutcomeUnknownError) do
        fences.guard(resource, 4) do |conn|
          write(conn, resource, "by 4, lost")
          @admin.query("KILL CONNECTION #{conn.thread_id}")
        end
      end
      assert_kind_of Mysql2::Error, error.cause
      assert_nil committed_body(resource)
      fences.guard(resource, 4) { |conn| write(conn, resource, "by 4") }
      assert_equal "by 4", committed_body(resource)
    end

    def test_setup_refuses_a_table_that_is_not_innodb
      database = MySQLServer.scratch_database
      client = MySQLServer.connect(database: database)
      @closing << client
      client.query(Fences::MySQL::SCHEMA_SQL.sub("ENGINE = InnoDB", "ENGINE = MyISAM"))
      error = assert_raises(StoreError) { Fences::MySQL.new(client).setup! }
      assert_match(/uses the "MyISAM" engine; fences need InnoDB/, error.message)
    end
  end

  # Fences::MySQL given a Mysql2::Client the caller owns.
  class MySQLClientGuardTest < Minitest::Test
    include GuardContract
    include JoiningContract
    include LostConnectionCases
    include FenceTestHelper::MySQLData

    def new_fences
      @client = mysql_client
      Fences::MySQL.new(@client)
    end

    def write(conn, name, body)
      assert_same @client, conn, "the block gets the caller's own client"
      driver_write(conn, name, body)
    end

    def outer_transaction(commit:)
      fences
      @client.query("START TRANSACTION")
      begin
        yield @client
      rescue Exception # rubocop:disable Lint/RescueException
        @client.query("ROLLBACK")
        raise
      end
      @client.query(commit ? "COMMIT" : "ROLLBACK")
    end

    # REPEATABLE READ (the default): the caller's transaction took its
    # snapshot before another guard raised the mark; the guard's UPDATE still
    # compares with the newest committed mark. MariaDB 11.6 and later
    # (innodb_snapshot_isolation, on by default) refuse the UPDATE of a row
    # changed since the snapshot instead, and roll back the whole
    # transaction: the guard says so. Either way nothing stale is written.
    def test_under_repeatable_read_a_guard_compares_with_the_newest_mark
      resource = unique_name
      fences.guard(resource, 1) { |conn| write(conn, resource, "by 1") }
      @client.query("START TRANSACTION WITH CONSISTENT SNAPSHOT")
      @client.query("SELECT 1 FROM lease_machines_fences LIMIT 1").to_a
      other = Fences::MySQL.new(@url)
      other.guard(resource, 3) { |c| driver_write(c, resource, "by 3") }
      other.close
      if snapshot_isolation?
        error = assert_raises(StoreError) { fences.guard(resource, 2) { flunk "ran" } }
        assert_match(/the server rolled back the whole transaction with it/, error.message)
      else
        assert_fenced(resource, 2, 3) { fences.guard(resource, 2) { flunk "ran" } }
      end
      @client.query("ROLLBACK")
      assert_equal ["by 3", 3], [committed_body(resource), fences.highest(resource)]
    end

    def snapshot_isolation?
      @admin.query("SELECT @@innodb_snapshot_isolation", as: :array).to_a.dig(0, 0).to_i == 1
    rescue Mysql2::Error
      false # MySQL, and MariaDB before 10.6.18, have no such setting (and behave as off)
    end

    def test_setup_inside_a_transaction_is_refused
      fences
      @client.query("START TRANSACTION")
      error = assert_raises(StoreError) { fences.setup! }
      assert_match(/commits the open transaction/, error.message)
      @client.query("ROLLBACK")
    end
  end

  # Fences::MySQL given a pool.
  class MySQLPoolGuardTest < Minitest::Test
    include GuardContract
    include LostConnectionCases
    include FenceTestHelper::MySQLData

    # connection_pool's `with`, reentrant per thread, over real clients.
    class Pool
      def initialize(clients)
        @idle = clients
        @held = {}
        @mutex = Mutex.new
      end

      def with
        thread = Thread.current
        return yield @held[thread] if @held[thread]

        client = @mutex.synchronize { @idle.pop or raise "pool exhausted" }
        @held[thread] = client
        begin
          yield client
        ensure
          @held.delete(thread)
          @mutex.synchronize { @idle.push(client) }
        end
      end
    end

    def new_fences
      Fences::MySQL.new(Pool.new([mysql_client, mysql_client]))
    end

    def write(conn, name, body)
      assert_kind_of Mysql2::Client, conn
      driver_write(conn, name, body)
    end
  end

  class FenceMySQLRecord < ::ActiveRecord::Base
    self.abstract_class = true
  end

  class FenceMySQLReport < FenceMySQLRecord
    self.table_name = FenceTestHelper::REPORTS
  end

  # Fences::MySQL given ActiveRecord's mysql2 adapter.
  class MySQLActiveRecordGuardTest < Minitest::Test
    include GuardContract
    include JoiningContract
    include FenceTestHelper::MySQLData
    include ActiveRecordGuardCases

    def setup
      super
      FenceMySQLRecord.establish_connection(@url) unless FenceMySQLRecord.connected?
    end

    def record_class = FenceMySQLRecord

    def report_model = FenceMySQLReport

    def write(conn, name, body)
      assert_same FenceMySQLRecord.connection, conn, "the block gets the thread's own ActiveRecord connection"
      driver_write(conn.raw_connection, name, body)
    end

    def test_setup_inside_a_transaction_is_refused
      FenceMySQLRecord.transaction do
        error = assert_raises(StoreError) { fences.setup! }
        assert_match(/commits the open transaction/, error.message)
      end
      assert_same fences, fences.setup!
    end
  end
end
