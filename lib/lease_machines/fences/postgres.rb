# frozen_string_literal: true

require "pg"
require "lease_machines/fences"
require "lease_machines/stores/postgres"

module LeaseMachines
  module Fences
    # Fences in a PostgreSQL database: one row per resource in
    # `lease_machines_fences` (found through the connection's search_path),
    # marks as numeric(20,0).
    #
    #   fences = LeaseMachines::Fences::Postgres.new(PG.connect(ENV.fetch("DATABASE_URL")))
    #   fences.setup!
    #   fences.guard("reports/nightly", token) { |conn| conn.exec_params("UPDATE reports ...", [...]) }
    #
    # The connection may be a PG::Connection you own (this fence serializes
    # its own use of it), a connection URL String (the fence opens, owns and
    # closes the connection, and opens a new one in a forked child), a pool
    # responding to `with { |pg_connection| }` (connection_pool), or
    # ActiveRecord (`ActiveRecord::Base`, a model class, a pool or a
    # connection).
    #
    # A guard of its own sends BEGIN and the mark as one query, then the
    # block's statements, then COMMIT: the round trips of the plain
    # transaction it guards. The mark's statement takes the resource's row
    # lock, so concurrent guards of one resource wait for each other and each
    # compares with the mark the previous one committed. BEGIN keeps the
    # session's isolation level: under REPEATABLE READ or SERIALIZABLE a guard
    # that waited for another fails with PostgreSQL's serialization error
    # (StoreError) instead of FencedError; it writes nothing either way.
    class Postgres < Table
      SCHEMA_SQL = Schema.sql(:postgres)
      # @param connection [PG::Connection, String, #with, ActiveRecord] see the class comment
      # @param prepared_statements [Boolean] prepare the mark's statement once
      #   per server session (false: send it with BEGIN as one simple query,
      #   planned every time, for a pooler that cannot keep prepared
      #   statements, such as PgBouncer before 1.21 in transaction mode).
      #   ActiveRecord connections follow their own setting.
      # @param store [Boolean] the lease store's table (`lease_machines_resources`,
      #   LeaseMachines::Stores::Postgres) is in this database, on the
      #   connection's search_path: admit only tokens the store issued for the
      #   resource (docs/FENCES.md, "Bound fences")
      # @param strict [Boolean] with store: admit only the token of the lease
      #   the store records, live at the database clock (clock_timestamp())
      # @param signing_keys [Array<String>, nil] the keys of the stores whose
      #   leases this fence admits: only tokens with a proof one of them made
      #   pass (ForgedTokenError otherwise; docs/FENCES.md, "Signed tokens")
      def initialize(connection, prepared_statements: true, store: false, strict: false, signing_keys: nil)
        @admission = Admission.from(store: store, strict: strict)
        unless [true, false].include?(prepared_statements)
          raise TypeError, "prepared_statements must be true or false, got #{prepared_statements.inspect}"
        end

        @prepared = prepared_statements
        super(source(connection), signing_keys)
      end

      private

      # The stores' connection sources (Stores::Connections), with a fence's
      # session (see {Connections}); ActiveRecord's is the fence's own.
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

          missing = error.is_a?(PG::UndefinedTable) || error.message.include?(%(relation "#{TABLE}" does not exist))
          missing ? "; create the table with fences.setup! (or run #{schema} in a migration)" : ""
        end
        Failures.new(label, PG::Error, hint)
      end
    end
  end
end

# Its parts, which reopen the class.
require_relative "postgres/statements"
require_relative "postgres/session"
