# frozen_string_literal: true

require_relative "concurrent_bound_guard_cases"

module LeaseMachines
  class SQLiteConcurrentBoundGuardsTest < Minitest::Test
    include ConcurrentBoundGuardCases
    include FenceTestHelper::SQLiteData

    def setup
      super
      with_sqlite do |db|
        db.execute("CREATE TABLE #{LOG} (id INTEGER PRIMARY KEY AUTOINCREMENT, resource TEXT NOT NULL, token TEXT NOT NULL)")
      end
      Stores::SQLite.new(@path).tap(&:setup!).close
    end

    def child_fences = Fences::SQLite.new(@path, busy_timeout: 30, store: true)

    def child_store = Stores::SQLite.new(@path, busy_timeout: 30)

    def fence_connection = @path
  end

  class PostgresConcurrentBoundGuardsTest < Minitest::Test
    include ConcurrentBoundGuardCases
    include FenceTestHelper::PostgresData

    def setup
      super
      @admin.exec("SET client_min_messages = warning")
      @admin.exec("SET search_path TO #{PostgresServer.schema}")
      @admin.exec("CREATE TABLE IF NOT EXISTS #{LOG} (id bigserial PRIMARY KEY, resource text NOT NULL, " \
                  "token numeric(20,0) NOT NULL)")
    end

    def child_fences = Fences::Postgres.new(@url, store: true)

    def child_store = Stores::Postgres.new(@url)

    def fence_connection = @url
  end
end
