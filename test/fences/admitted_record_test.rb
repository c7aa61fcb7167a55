# frozen_string_literal: true

require_relative "admitted_record_cases"
require "lease_machines/fences/active_record"

module LeaseMachines
  class AdmittedSQLiteBase < ::ActiveRecord::Base
    self.abstract_class = true
  end

  class AdmittedPostgresBase < ::ActiveRecord::Base
    self.abstract_class = true
  end

  class AdmittedSQLiteRecordTest < Minitest::Test
    include AdmittedRecordCases
    include FenceTestHelper::SQLiteData

    def setup
      super
      AdmittedSQLiteBase.establish_connection(adapter: "sqlite3", database: @path, timeout: 10_000)
      create_table
    end

    def teardown
      AdmittedSQLiteBase.remove_connection
      @store&.close
      @signing_store&.close
      super
    end

    def base = AdmittedSQLiteBase

    def token_column(table) = table.string(:lease_token, limit: 20)

    def store_class = Stores::SQLite

    def store_target = @path

    def store
      @store ||= Stores::SQLite.new(@path).tap(&:setup!)
    end
  end

  class AdmittedPostgresRecordTest < Minitest::Test
    include AdmittedRecordCases
    include FenceTestHelper::PostgresData

    def setup
      super
      unless AdmittedPostgresBase.connected?
        AdmittedPostgresBase.establish_connection(adapter: "postgresql", url: PostgresServer.base_url,
                                                  schema_search_path: PostgresServer.schema)
      end
      create_table
    end

    def teardown
      @store&.close
      @signing_store&.close
      super
    end

    def base = AdmittedPostgresBase

    def token_column(table) = table.decimal(:lease_token, precision: 20, scale: 0)

    def store_class = Stores::Postgres

    def store_target = @url

    def store
      @store ||= Stores::Postgres.new(@url).tap(&:setup!)
    end
  end
end
