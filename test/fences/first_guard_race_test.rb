# frozen_string_literal: true

require_relative "first_guard_race"

module LeaseMachines
  # The first-guard race (FirstGuardRaceCases) on SQLite: the database's
  # write lock orders the six guards.
  class SQLiteFirstGuardRaceTest < Minitest::Test
    include FirstGuardRaceInTransactionCases
    include FenceTestHelper::SQLiteData

    def race_fences = Fences::SQLite.new(@path, busy_timeout: 30)

    def race_client
      db = SQLite3::Database.new(@path)
      db.busy_timeout = 30_000
      db
    end

    def race_commit(db) = db.execute("COMMIT")

    def race_connection(conn) = conn

    def race_mark_connection = (@race_mark_connection ||= sqlite_database)
  end

  # The first-guard race on PostgreSQL: the first INSERT ... ON CONFLICT
  # waits on the uncommitted row of the other, and compares with its mark
  # once it commits.
  class PostgresFirstGuardRaceTest < Minitest::Test
    include FirstGuardRaceInTransactionCases
    include FenceTestHelper::PostgresData

    def race_fences = Fences::Postgres.new(@url)

    def race_client = PG.connect(@url)

    def race_commit(conn) = conn.exec("COMMIT")

    def race_connection(conn) = conn

    def race_mark_connection = @admin
  end
end
