# frozen_string_literal: true

require_relative "concurrent_guard_cases"

module LeaseMachines
  class SQLiteConcurrentGuardsTest < Minitest::Test
    include ConcurrentGuardCases
    include FenceTestHelper::SQLiteData

    def setup
      super
      with_sqlite do |db|
        db.execute("CREATE TABLE #{LOG} (id INTEGER PRIMARY KEY AUTOINCREMENT, resource TEXT NOT NULL, token TEXT NOT NULL)")
      end
    end

    def child_fences = Fences::SQLite.new(@path, busy_timeout: 30)

    def fence_connection = @path

    # SQLite's waiters sleep in the busy handler, which shows nowhere: give
    # them time to have started and reached BEGIN IMMEDIATE.
    def wait_until_both_wait(*)
      sleep 0.5
    end
  end

  class PostgresConcurrentGuardsTest < Minitest::Test
    include ConcurrentGuardCases
    include FenceTestHelper::PostgresData

    def setup
      super
      @admin.exec("SET client_min_messages = warning")
      @admin.exec("SET search_path TO #{PostgresServer.schema}")
      @admin.exec("CREATE TABLE IF NOT EXISTS #{LOG} (id bigserial PRIMARY KEY, resource text NOT NULL, " \
                  "token numeric(20,0) NOT NULL)")
    end

    def child_fences = Fences::Postgres.new(@url)

    def fence_connection = @url

    # Both children wait for the row lock token 2 holds.
    def wait_until_both_wait(*)
      wait_for do
        @admin.exec("SELECT pg_stat_clear_snapshot()")
        waiting = @admin.exec("SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND " \
                              "query LIKE '%INSERT INTO lease_machines_fences%'").getvalue(0, 0)
        Integer(waiting) >= 2
      end
    end
  end
end
