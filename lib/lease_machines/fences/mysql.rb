# frozen_string_literal: true

require "mysql2"
require "lease_machines/fences"
require "lease_machines/stores/mysql"

module LeaseMachines
  module Fences
    # Fences in a MySQL or MariaDB database (InnoDB): one row per resource in
    # `lease_machines_fences`, in the connection's current database, marks as
    # DECIMAL(20,0).
    #
    #   fences = LeaseMachines::Fences::MySQL.new("mysql2://app@127.0.0.1/app")
    #   fences.setup!
    #   fences.guard("reports/nightly", token) { |client| client.query("UPDATE reports ...") }
    #
    # The connection may be a Mysql2::Client you own (this fence serializes
    # its own use of it), a connection URL String (the fence opens, owns and
    # closes the connection, opens it again after a failure, and opens a new
    # one in a forked child), a pool responding to `with { |client| }`
    # (connection_pool), or ActiveRecord's mysql2 adapter
    # (`ActiveRecord::Base`, a model class, a pool or a connection).
    #
    # A guard of its own sends START TRANSACTION, the mark's statement (see
    # db/mysql/002_create_lease_machines_fences.sql), the block's statements
    # and COMMIT; on a client the caller gave, one more round trip first asks
    # the server whether the caller has a transaction open (which the guard
    # then joins under a savepoint). The mark takes the resource's row lock
    # and reads the newest committed mark whatever the isolation level, so
    # under REPEATABLE READ (the default) a guard that waited for another
    # compares with the mark the other committed.
    #
    # A bound fence (`store: true`) reads the store's row inside the mark's
    # statement; under REPEATABLE READ InnoDB takes a shared lock on that row for
    # it, held until the guard commits, so a decision on the same resource
    # waits for the guarded block (READ COMMITTED takes none).
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

      # The stores' connection sources (Stores::Connections), with a fence's
      # session (see {Connections}); ActiveRecord's is the fence's own.
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

          next "" unless message.include?(".#{TABLE}' doesn't exist")

          "; create the table with fences.setup! (or run #{schema} in a migration)"
        end
        Failures.new(label, Mysql2::Error, hint)
      end
    end
  end
end

# Its parts, which reopen the class.
require_relative "mysql/statements"
require_relative "mysql/session"
require_relative "mysql/active_record_session"

module LeaseMachines
  module Fences
    class MySQL < Table
      # How a fence speaks MySQL through ActiveRecord (its own session class:
      # the statements are built with their values, see {Statements}).
      DIALECT = ActiveRecordSession::Dialect.new(engine: "MySQL", adapter: /mysql/i,
                                                 session: ActiveRecordMySQLSession).freeze
    end
  end
end
