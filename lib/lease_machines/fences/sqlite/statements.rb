# frozen_string_literal: true

module LeaseMachines
  module Fences
    class SQLite < Table
      # The SQL of an SQLite fence (the table: db/sqlite/002_create_lease_machines_fences.sql).
      # Tokens are bound as their 20-digit text ({StoredToken}).
      module Statements
        # Raises the mark of resource ?1 to token ?2, or changes nothing
        # (0 rows: fenced). Runs under the database's write lock (BEGIN
        # IMMEDIATE), which orders concurrent guards.
        MARK_SQL = <<~SQL.gsub(/\s+/, " ").strip
          INSERT INTO #{TABLE} (resource, highest) VALUES (?, ?)
          ON CONFLICT (resource) DO UPDATE SET highest = excluded.highest
          WHERE #{TABLE}.highest IS NULL OR #{TABLE}.highest <= excluded.highest
        SQL
        HIGHEST_SQL = "SELECT highest FROM #{TABLE} WHERE resource = ?".freeze
        SAVEPOINT = "lease_machines_fence"
        BEGIN_SQL = "BEGIN IMMEDIATE"

        # How a fence speaks SQLite through ActiveRecord.
        DIALECT = ActiveRecordSession::Dialect.new(
          engine: "SQLite", adapter: /sqlite/i,
          mark_sql: MARK_SQL, highest_sql: HIGHEST_SQL,
          token: StoredToken.method(:text), setup: ->(sql) { [sql] }
        ).freeze
      end
    end
  end
end
