# frozen_string_literal: true

require_relative "active_record_guard_cases"
require "active_record"

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

    def record_class = FencePostgresRecord

    def report_model = FencePostgresReport
  end
end
