# frozen_string_literal: true

module LeaseMachines
  module Fences
    class Postgres < Table
      # The SQL of a PostgreSQL fence (the table: db/postgres/002_create_lease_machines_fences.sql).
      module Statements
        # The conflict clause of every mark: the mark rises to a greater
        # token (recording its owner $3, or NULL), or stays at an equal one
        # (recording $3 when no owner was), unless both the mark and the guard
        # name an owner and they differ: a reissued token, refused.
        ON_CONFLICT = <<~SQL.gsub(/\s+/, " ").strip
          ON CONFLICT (resource) DO UPDATE SET highest = excluded.highest,
          lease_owner = CASE WHEN fence.highest = excluded.highest THEN coalesce(fence.lease_owner, excluded.lease_owner)
          ELSE excluded.lease_owner END
          WHERE fence.highest IS NULL OR fence.highest < excluded.highest OR (fence.highest = excluded.highest AND
          (fence.lease_owner IS NULL OR excluded.lease_owner IS NULL OR fence.lease_owner = excluded.lease_owner))
        SQL
        # Raises the mark of resource $1 to token $2 for owner $3, or changes
        # nothing (0 rows: fenced). Locks the row either way, which orders
        # concurrent guards of one resource.
        MARK_SQL = "INSERT INTO #{TABLE} AS fence (resource, highest, lease_owner) VALUES ($1, $2::numeric, " \
                   "$3::numeric) #{ON_CONFLICT}".freeze
        # The database clock in ns since the Unix epoch, as numeric.
        CLOCK_NS_SQL = "floor(extract(epoch FROM clock_timestamp()) * 1e9)"
        # The bound forms ({Admission}), with the same two parameters.
        ISSUED = "store.name = $1::text AND store.last_issued >= $2::numeric"
        # Strict: the lease holds the token, has not run out, and (when the guard
        # shows one) is the guard's owner's: a token issued twice (a failover
        # that lost the first grant) is not admitted for its first holder.
        LIVE = "#{ISSUED} AND store.lease_token = $2::numeric AND store.lease_expires_at_ns > #{CLOCK_NS_SQL} " \
               "AND ($3::numeric IS NULL OR store.lease_owner = $3::numeric)".freeze
        private_constant :ISSUED, :LIVE
        MARK_SQLS = {
          any: MARK_SQL,
          issued: "INSERT INTO #{TABLE} AS fence (resource, highest, lease_owner) SELECT $1::text, $2::numeric, " \
                  "$3::numeric FROM #{STORE_TABLE} AS store WHERE #{ISSUED} #{ON_CONFLICT}",
          live: "INSERT INTO #{TABLE} AS fence (resource, highest, lease_owner) SELECT $1::text, $2::numeric, " \
                "$3::numeric FROM #{STORE_TABLE} AS store WHERE #{LIVE} #{ON_CONFLICT}"
        }.freeze
        HIGHEST_SQL = "SELECT highest FROM #{TABLE} WHERE resource = $1".freeze
        OWNER_SQL = "SELECT lease_owner::text FROM #{TABLE} WHERE resource = $1".freeze
        STORE_ROW_SQL = "SELECT last_issued::text, lease_token::text, lease_expires_at_ns::text, " \
                        "#{CLOCK_NS_SQL}::numeric(20,0)::text, lease_owner::text FROM #{STORE_TABLE} WHERE name = $1".freeze
        SAVEPOINT = "lease_machines_fence"
        # pg_advisory_xact_lock key serializing concurrent #setup! calls ("lm_fence").
        SETUP_LOCK_KEY = 7_813_006_137_384_576_357

        # MARK_SQLS[mode] with its values written in, to share BEGIN's round trip.
        def self.mark_literal(connection, resource, token, mode = :any, owner = nil)
          values = { "1" => connection.escape_literal(resource), "2" => token.to_s, "3" => owner&.to_s || "NULL" }
          MARK_SQLS.fetch(mode).gsub(/\$([123])(?!\d)/) { values.fetch(Regexp.last_match(1)) }
        end

        # The binds of MARK_SQLS[mode] (the owner as decimal text; nil: none).
        def self.mark_binds(_mode, resource, token, owner = nil)
          [resource, token.to_s, owner&.to_s]
        end

        # How a fence speaks PostgreSQL through ActiveRecord.
        DIALECT = ActiveRecordSession::Dialect.new(
          engine: "PostgreSQL", adapter: /postg/i,
          mark_sqls: MARK_SQLS, mark_binds: method(:mark_binds), highest_sql: HIGHEST_SQL, owner_sql: OWNER_SQL,
          store_row_sql: STORE_ROW_SQL, clock_ns: nil,
          setup: lambda do |sql|
            ["SET LOCAL client_min_messages = warning", "SELECT pg_advisory_xact_lock(#{SETUP_LOCK_KEY})", sql]
          end
        ).freeze
      end
    end
  end
end
