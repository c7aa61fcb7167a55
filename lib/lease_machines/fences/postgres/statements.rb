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
        # The database clock in ns since the Unix epoch, as numeric.
        CLOCK_NS_SQL = "floor(extract(epoch FROM clock_timestamp()) * 1e9)"
        # The bound forms ({Admission}), with the same two parameters.
        ISSUED = "store.name = $1::text AND store.last_issued >= $2::numeric"
        LIVE = "#{ISSUED} AND store.lease_token = $2::numeric AND store.lease_expires_at_ns > #{CLOCK_NS_SQL}".freeze
        private_constant :ISSUED, :LIVE
        MARK_SQLS = {
          any: MARK_SQL,
          issued: <<~SQL.gsub(/\s+/, " ").strip,
            INSERT INTO #{TABLE} AS fence (resource, highest)
            SELECT $1::text, $2::numeric FROM #{STORE_TABLE} AS store WHERE #{ISSUED}
            ON CONFLICT (resource) DO UPDATE SET highest = excluded.highest
            WHERE fence.highest IS NULL OR fence.highest <= excluded.highest
          SQL
          live: <<~SQL.gsub(/\s+/, " ").strip
            INSERT INTO #{TABLE} AS fence (resource, highest)
            SELECT $1::text, $2::numeric FROM #{STORE_TABLE} AS store WHERE #{LIVE}
            ON CONFLICT (resource) DO UPDATE SET highest = excluded.highest
            WHERE fence.highest IS NULL OR fence.highest <= excluded.highest
          SQL
        }.freeze
        HIGHEST_SQL = "SELECT highest FROM #{TABLE} WHERE resource = $1".freeze
        STORE_ROW_SQL = "SELECT last_issued::text, lease_token::text, lease_expires_at_ns::text, " \
                        "#{CLOCK_NS_SQL}::numeric(20,0)::text FROM #{STORE_TABLE} WHERE name = $1".freeze
        SAVEPOINT = "lease_machines_fence"
        # pg_advisory_xact_lock key serializing concurrent #setup! calls ("lm_fence").
        SETUP_LOCK_KEY = 7_813_006_137_384_576_357

        # MARK_SQLS[mode] with its values written in, to share BEGIN's round trip.
        def self.mark_literal(connection, resource, token, mode = :any)
          literal = connection.escape_literal(resource)
          MARK_SQLS.fetch(mode).gsub(/\$([12])(?!\d)/) { Regexp.last_match(1) == "1" ? literal : token.to_s }
        end

        # The binds of MARK_SQLS[mode].
        def self.mark_binds(_mode, resource, token)
          [resource, token.to_s]
        end

        # How a fence speaks PostgreSQL through ActiveRecord.
        DIALECT = ActiveRecordSession::Dialect.new(
          engine: "PostgreSQL", adapter: /postg/i,
          mark_sqls: MARK_SQLS, mark_binds: method(:mark_binds), highest_sql: HIGHEST_SQL,
          store_row_sql: STORE_ROW_SQL, clock_ns: nil,
          setup: lambda do |sql|
            ["SET LOCAL client_min_messages = warning", "SELECT pg_advisory_xact_lock(#{SETUP_LOCK_KEY})", sql]
          end
        ).freeze
      end
    end
  end
end
