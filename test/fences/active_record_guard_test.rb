# frozen_string_literal: true

require_relative "active_record_guard_cases"
require "active_record"
require "timeout"

module LeaseMachines
  # The connection classes of the ActiveRecord fence tests, one per engine.
  class FenceSQLiteRecord < ::ActiveRecord::Base
    self.abstract_class = true
  end

  class FencePostgresRecord < ::ActiveRecord::Base
    self.abstract_class = true
  end

  # A model on each engine's reports table, written inside guards.
  class FenceSQLiteReport < FenceSQLiteRecord
    self.table_name = FenceTestHelper::REPORTS
  end

  class FencePostgresReport < FencePostgresRecord
    self.table_name = FenceTestHelper::REPORTS
  end

  class ActiveRecordSQLiteGuardTest < Minitest::Test
    include GuardContract
    include JoiningContract
    include FenceTestHelper::SQLiteData
    include ActiveRecordGuardCases
    include ActiveRecordSetupJoinsCases

    def setup
      super
      FenceSQLiteRecord.establish_connection(adapter: "sqlite3", database: @path, timeout: 10_000)
    end

    def teardown
      FenceSQLiteRecord.remove_connection
      super
    end

    def record_class = FenceSQLiteRecord

    def report_model = FenceSQLiteReport
  end

  class ActiveRecordPostgresGuardTest < Minitest::Test
    include GuardContract
    include JoiningContract
    include FenceTestHelper::PostgresData
    include ActiveRecordGuardCases
    include ActiveRecordSetupJoinsCases

    def setup
      super
      return if FencePostgresRecord.connected?

      FencePostgresRecord.establish_connection(adapter: "postgresql", url: PostgresServer.base_url,
                                               schema_search_path: PostgresServer.schema)
    end

    # Timeout lands while the mark waits for the fence row another transaction holds. The guard cancels the
    # mark before ActiveRecord's rollback reads it out, so the Timeout reaches the caller while the row is still
    # held (before, only once it was free), and the thread's connection goes on guarding.
    def test_an_interrupt_while_the_mark_waits_for_the_fence_row_ends_the_guard_at_once
      fences = Fences::Postgres.new(record_class)
      resource = unique_name
      fences.guard(resource, 1) { nil }
      holder = hold_fence_row(resource)
      used = nil
      waiting = Thread.new do
        Thread.current.report_on_exception = false
        record_class.connection_pool.with_connection do |adapter|
          used = adapter
          Timeout.timeout(0.3) { fences.guard(resource, 2) { |conn| ar_write(conn, resource, "by 2") } }
        end
      end
      assert_ended_while_held(waiting, holder, Timeout::Error)
      refute_predicate used, :transaction_open?
      Fences::Postgres.new(used).guard(resource, 3) { |conn| ar_write(conn, resource, "by 3") }
      assert_equal ["by 3", 3], [committed_body(resource), fences.highest(resource)]
    end

    def record_class = FencePostgresRecord

    def report_model = FencePostgresReport

    private

    def ar_write(conn, name, body) = conn.exec_update(POSTGRES_UPSERT, "test", [name, body])
  end
end
