# frozen_string_literal: true

require "mysql2"
require "lease_machines/fences"
require "lease_machines/stores/mysql"

module LeaseMachines
  module Fences
    # Fences in a MySQL or MariaDB database (InnoDB): one row per resource in
    # `lease_machines_fences`, in the connection's current database, marks as
    # DECIMAL(20,0). The connection: a Mysql2::Client, a URL (owned by the
    # fence), a pool (`with`), or ActiveRecord's mysql2 adapter.
    class MySQL < Table
      SCHEMA_SQL = Schema.sql(:mysql)

      # @param connection [Mysql2::Client, String, #with, ActiveRecord] see the class comment
      # @param store [Boolean] the lease store's table (`lease_machines_resources`,
      #   LeaseMachines::Stores::MySQL) is in this database: admit only tokens
      #   the store issued for the resource (docs/FENCES.md, "Bound fences")
      # @param strict [Boolean] with store: admit only the token of the lease
      #   the store records, live at the database clock (UTC_TIMESTAMP(6))
      # @param signing_keys [Array<String>, nil] the keys of the stores whose
      #   leases this fence admits: only tokens with a proof one of them made
      #   pass (ForgedTokenError otherwise; docs/FENCES.md, "Signed tokens")
      def initialize(connection, store: false, strict: false, signing_keys: nil)
        @admission = Admission.from(store: store, strict: strict)
        super(source(connection), signing_keys)
      end

      private

      def source(connection)
        driver_failures = failures("MySQL")
        sources = Connections::Sources.new(Stores::MySQL::Connections, driver_failures) do |client|
          Session.new(client, driver_failures, admission: @admission)
        end
        sources.for(connection) do |active_record|
          Connections::ActiveRecord.new(active_record, DIALECT, failures("MySQL (ActiveRecord)"), @admission)
        end
      end

      def failures(label)
        schema = "#{self.class}::SCHEMA_SQL"
        hint = lambda do |error|
          message = error.message
          next "; #{STORE_TABLE_HINT}" if message.include?(".#{STORE_TABLE}' doesn't exist")
          next "; #{Fences.owner_column_hint(schema)}" if message.include?("'#{OWNER_COLUMN}'")

          next "" unless message.include?(".#{TABLE}' doesn't exist")

          "; create the table with fences.setup! (or run #{schema} in a migration)"
        end
        Failures.new(label, Mysql2::Error, hint)
      end
    end
  end
end

require_relative "mysql/statements"
require_relative "mysql/session"
require_relative "mysql/active_record_session"

module LeaseMachines
  module Fences
    class MySQL < Table
      # Its own ActiveRecord session class: the statements are built with their values.
      DIALECT = ActiveRecordSession::Dialect.new(engine: "MySQL", adapter: /mysql/i,
                                                 session: ActiveRecordMySQLSession).freeze
    end
  end
end
