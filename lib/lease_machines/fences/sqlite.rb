# frozen_string_literal: true

require "sqlite3"
require "lease_machines/fences"
require "lease_machines/fences/connections"
require "lease_machines/stores/sqlite"

module LeaseMachines
  module Fences
    # Fences in an SQLite database: one row per resource in
    # `lease_machines_fences`, marks as 20-digit text ({StoredToken}). The
    # connection: a path (owned by the fence), an SQLite3::Database, or ActiveRecord.
    class SQLite < Table
      SCHEMA_SQL = Schema.sql(:sqlite)
      MISSING_TABLE = "no such table: #{TABLE}".freeze
      MISSING_STORE_TABLE = "no such table: #{STORE_TABLE}".freeze
      private_constant :MISSING_TABLE, :MISSING_STORE_TABLE

      # @param connection [String, SQLite3::Database, ActiveRecord] see the class comment
      # @param busy_timeout [Numeric] seconds a database the fence opens waits
      #   for the write lock (a database you give keeps its own setting)
      # @param store [Boolean] the lease store's table (`lease_machines_resources`,
      #   LeaseMachines::Stores::SQLite) is in this database: admit only
      #   tokens the store issued for the resource (docs/FENCES.md, "Bound fences")
      # @param strict [Boolean] with store: admit only the token of the lease
      #   the store records, live at the host clock
      # @param signing_keys [Array<String>, nil] the keys of the stores whose
      #   leases this fence admits: only tokens with a proof one of them made
      #   pass (ForgedTokenError otherwise; docs/FENCES.md, "Signed tokens")
      def initialize(connection, busy_timeout: 5.0, store: false, strict: false, signing_keys: nil)
        @admission = Admission.from(store: store, strict: strict)
        unless busy_timeout.is_a?(Numeric) && busy_timeout.real? && busy_timeout.finite? && busy_timeout.positive?
          raise ArgumentError, "busy_timeout must be a positive number of seconds, got #{busy_timeout.inspect}"
        end

        super(source(connection, (busy_timeout * 1000).ceil), signing_keys)
      end

      private

      # An SQLite database for the connection sources: never reopened in the
      # same process; a forked child leaves its parent's untouched (closing
      # it would upset the parent's locks).
      module Database
        extend Stores::Connections::Engine

        declare driver: ::SQLite3::Database, expected: "a database path String, an SQLite3::Database",
                session: nil, adapter_session: nil, closed: :closed?, close: :close, reopen_closed: false

        def self.silence(_session) = nil

        # The session closes it: it finalizes its prepared statements first.
        def self.close(session) = session.close
      end
      private_constant :Database

      def source(connection, busy_timeout_ms)
        case connection
        when String
          failures = failures("SQLite (#{connection})")
          sources = Connections::Sources.new(Database, failures) { |database| session(database, failures, true) }
          sources.owned(connection) { open_database(connection, busy_timeout_ms, failures) }
        when ::SQLite3::Database
          failures = failures("SQLite")
          Connections::Sources.new(Database, failures) { |database| session(database, failures, false) }.shared(connection)
        else
          unless Connections::ActiveRecord.accepts?(connection)
            raise TypeError, "connection must be a database path String, an SQLite3::Database or ActiveRecord " \
                             "(ActiveRecord::Base, a model class, a pool or a connection), got #{connection.inspect}"
          end

          Connections::ActiveRecord.new(connection, Statements::DIALECT, failures("SQLite (ActiveRecord)"),
                                        @admission)
        end
      end

      def session(database, failures, prepared)
        Session.new(database, failures, prepared: prepared, admission: @admission)
      end

      def failures(label)
        schema = "#{self.class}::SCHEMA_SQL"
        hint = lambda do |error|
          if error.message.include?(MISSING_TABLE)
            "; create the table with fences.setup! (or run #{schema})"
          elsif error.message.include?(MISSING_STORE_TABLE)
            "; #{STORE_TABLE_HINT}"
          elsif error.message.include?(OWNER_COLUMN)
            "; #{Fences.owner_column_hint(schema)}"
          else
            ""
          end
        end
        Failures.new(label, ::SQLite3::Exception, hint)
      end

      def open_database(path, busy_timeout_ms, failures)
        database = ::SQLite3::Database.new(path)
        database.busy_timeout = busy_timeout_ms
        mode = database.get_first_value("PRAGMA journal_mode = WAL")
        raise failures.problem("cannot switch to WAL mode (journal_mode is #{mode.inspect})") unless mode.to_s.casecmp?("wal")

        database.execute("PRAGMA synchronous = FULL")
        database
      rescue ::SQLite3::Exception => e
        database&.close
        raise failures.statement(e, "the database could not be opened")
      end
    end
  end
end

require_relative "sqlite/statements"
require_relative "sqlite/session"
