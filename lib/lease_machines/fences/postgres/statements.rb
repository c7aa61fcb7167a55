# frozen_string_literal: true

module LeaseMachines
  module Fences
    class Postgres < Table
      # The SQL of a PostgreSQL fence (the table: db/postgres/002_create_lease_machines_fences.sql).
      module Statements
        # Raises the mark of resource $1 to token $2, or changes nothing
        # (0 rows: fenced). Locks the row either way, which orders concurrent
        # guards of one resource.
        MARK_SQL = <<~SQL.gsub(/\s+/, " ").strip
          INSERT INTO #{TABLE} AS fence (resource, highest) VALUES ($1, $2::numeric)
          ON CONFLICT (resource) DO UPDATE SET highest = excluded.highest
          WHERE fence.highest IS NULL OR fence.highest <= excluded.highest
        SQL
        HIGHEST_SQL = "SELECT highest FROM #{TABLE} WHERE resource = $1".freeze
        SAVEPOINT = "lease_machines_fence"
        # pg_advisory_xact_lock key serializing concurrent #setup! calls ("lm_fence").
        SETUP_LOCK_KEY = 7_813_006_137_384_576_357

        # MARK_SQL with its two values written in, for the simple-query
        # protocol, which runs it in the same round trip as BEGIN (or
        # SAVEPOINT). `resource` is quoted by the driver; `token` is a checked
        # Integer.
        def self.mark_literal(connection, resource, token)
          literal = connection.escape_literal(resource)
          MARK_SQL.sub("$1") { literal }.sub("$2") { token.to_s }
        end

        # How a fence speaks PostgreSQL through ActiveRecord.
        DIALECT = ActiveRecordSession::Dialect.new(
          engine: "PostgreSQL", adapter: /postg/i,
          mark_sql: MARK_SQL, highest_sql: HIGHEST_SQL, token: :to_s.to_proc,
          setup: lambda do |sql|
            ["SET LOCAL client_min_messages = warning", "SELECT pg_advisory_xact_lock(#{SETUP_LOCK_KEY})", sql]
          end
        ).freeze
      end
    end
  end
end
