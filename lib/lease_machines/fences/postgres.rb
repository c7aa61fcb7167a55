# frozen_string_literal: true

require "pg"
require "lease_machines/fences"
require "lease_machines/stores/postgres"

module LeaseMachines
  module Fences
    # Fences in a PostgreSQL database: one row per resource in `lease_machines_fences`
    # (found through the search_path), marks as numeric(20,0). The connection: a
    # PG::Connection, a URL (owned by the fence), a pool (`with`), or ActiveRecord.
    class Postgres < Table
      SCHEMA_SQL = Fences.schema_sql(:postgres)

      # @param prepared_statements [Boolean] prepare the mark once per server session
      #   (false: for a pooler that cannot keep them); ActiveRecord follows its own setting
      # @param store [Boolean] admit only tokens the store issued for the resource (its
      #   table is in this database; docs/FENCES.md, "Bound fences")
      # @param strict [Boolean] with store: only the token of the store's lease, live at clock_timestamp()
      # @param signing_keys [Array<String>, nil] admit only tokens with a proof one of them made
      def initialize(connection, prepared_statements: true, store: false, strict: false, signing_keys: nil)
        @admission = Admission.from(store: store, strict: strict)
        unless [true, false].include?(prepared_statements)
          raise TypeError, "prepared_statements must be true or false, got #{prepared_statements.inspect}"
        end

        @prepared = prepared_statements
        super(source(connection), signing_keys)
      end

      # The SQL of a PostgreSQL fence.
      module Statements
        # The mark rises to a greater token (recording owner $3, or NULL), or stays at an
        # equal one (recording $3 when none was), unless both name owners that differ.
        ON_CONFLICT = <<~SQL.gsub(/\s+/, " ").strip
          ON CONFLICT (resource) DO UPDATE SET highest = excluded.highest,
          lease_owner = CASE WHEN fence.highest = excluded.highest THEN coalesce(fence.lease_owner, excluded.lease_owner)
          ELSE excluded.lease_owner END
          WHERE fence.highest IS NULL OR fence.highest < excluded.highest OR (fence.highest = excluded.highest AND
          (fence.lease_owner IS NULL OR excluded.lease_owner IS NULL OR fence.lease_owner = excluded.lease_owner))
        SQL
        # Raises the mark of $1 to $2 for owner $3, or changes nothing (0 rows: fenced).
        # Locks the row either way, which orders concurrent guards of one resource.
        MARK_SQL = "INSERT INTO #{TABLE} AS fence (resource, highest, lease_owner) VALUES ($1, $2::numeric, " \
                   "$3::numeric) #{ON_CONFLICT}".freeze
        CLOCK_NS_SQL = "floor(extract(epoch FROM clock_timestamp()) * 1e9)"
        ISSUED = "store.name = $1::text AND store.last_issued >= $2::numeric"
        # Strict: a token issued twice (a failover lost the first grant) is not admitted for its first holder.
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
        SETUP_LOCK_KEY = 7_813_006_137_384_576_357 # pg_advisory_xact_lock key of #setup! ("lm_fence")

        # MARK_SQLS[mode] with its values written in, to share BEGIN's round trip.
        def self.mark_literal(connection, resource, token, mode = :any, owner = nil)
          values = { "1" => connection.escape_literal(resource), "2" => token.to_s, "3" => owner&.to_s || "NULL" }
          MARK_SQLS.fetch(mode).gsub(/\$([123])(?!\d)/) { values.fetch(Regexp.last_match(1)) }
        end

        def self.mark_binds(_mode, resource, token, owner = nil)
          [resource, token.to_s, owner&.to_s]
        end

        DIALECT = ActiveRecordSession::Dialect.new(
          engine: "PostgreSQL", adapter: /postg/i,
          mark_sqls: MARK_SQLS, mark_binds: method(:mark_binds), highest_sql: HIGHEST_SQL, owner_sql: OWNER_SQL,
          store_row_sql: STORE_ROW_SQL, clock_ns: nil,
          setup: lambda do |sql|
            ["SET LOCAL client_min_messages = warning", "SELECT pg_advisory_xact_lock(#{SETUP_LOCK_KEY})", sql]
          end
        ).freeze
      end

      private

      def source(connection)
        driver_failures = failures("PostgreSQL")
        sources = Connections::Sources.new(Stores::Postgres::Connections, driver_failures) do |conn|
          Session.new(conn, driver_failures, prepared: @prepared, admission: @admission)
        end
        sources.for(connection) do |active_record|
          Connections::ActiveRecord.new(active_record, Statements::DIALECT, failures("PostgreSQL (ActiveRecord)"),
                                        @admission)
        end
      end

      def failures(label)
        schema = "#{self.class}::SCHEMA_SQL"
        hint = lambda do |error|
          next "; #{STORE_TABLE_HINT}" if error.message.include?(%(relation "#{STORE_TABLE}" does not exist))
          next "; #{Fences.owner_column_hint(schema)}" if error.message.include?(OWNER_COLUMN)

          missing = error.is_a?(PG::UndefinedTable) || error.message.include?(%(relation "#{TABLE}" does not exist))
          missing ? "; create the table with fences.setup! (or run #{schema} in a migration)" : ""
        end
        Failures.new(label, PG::Error, hint)
      end
    end
  end
end

require_relative "postgres/session"
