# frozen_string_literal: true

require "pg"
require "lease_machines/fences"
require "lease_machines/stores/postgres"

module LeaseMachines
  module Fences
    # Fences in a PostgreSQL database: one row per resource in
    # `lease_machines_fences` (found through the connection's search_path),
    # marks as numeric(20,0). The connection: a PG::Connection, a URL (owned
    # by the fence), a pool (`with`), or ActiveRecord.
    class Postgres < Table
      SCHEMA_SQL = Schema.sql(:postgres)
      # @param connection [PG::Connection, String, #with, ActiveRecord] see the class comment
      # @param prepared_statements [Boolean] prepare the mark's statement once
      #   per server session (false: for a pooler that cannot keep them).
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

require_relative "postgres/statements"
require_relative "postgres/session"
