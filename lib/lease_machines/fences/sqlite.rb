# frozen_string_literal: true

require "sqlite3"
require "lease_machines/fences"
require "lease_machines/stores/sqlite"

module LeaseMachines
  module Fences
    # Fences in an SQLite database: one row per resource in `lease_machines_fences`,
    # marks as 20-digit text ({StoredToken}). The connection: a path (owned by the
    # fence), an SQLite3::Database, or ActiveRecord.
    class SQLite < Table
      SCHEMA_SQL = Fences.schema_sql(:sqlite)
      MISSING_TABLE = "no such table: #{TABLE}".freeze
      MISSING_STORE_TABLE = "no such table: #{STORE_TABLE}".freeze
      private_constant :MISSING_TABLE, :MISSING_STORE_TABLE

      # @param busy_timeout [Numeric] seconds a database the fence opens waits for the
      #   write lock (a database you give keeps its own setting); `strict:` reads the host clock
      def initialize(connection, busy_timeout: 5.0, store: false, strict: false, signing_keys: nil)
        @admission = Admission.from(store: store, strict: strict)
        unless busy_timeout.is_a?(Numeric) && busy_timeout.real? && busy_timeout.finite? && busy_timeout.positive?
          raise ArgumentError, "busy_timeout must be a positive number of seconds, got #{busy_timeout.inspect}"
        end

        super(source(connection, (busy_timeout * 1000).ceil), signing_keys)
      end

      # The SQL of an SQLite fence; tokens are bound as their 20-digit text ({StoredToken}).
      module Statements
        # `a <= b` and `a < b` for canonical decimal texts: a shorter text is smaller, texts
        # of one length compare as memcmp.
        def self.at_most(left, right) = compare(left, "<=", right)
        def self.below(left, right) = compare(left, "<", right)

        def self.compare(left, operator, right)
          "(length(#{left}) < length(#{right}) OR (length(#{left}) = length(#{right}) AND #{left} #{operator} #{right}))"
        end
        private_class_method :compare

        # ?1 resource, ?2 the token's 20-digit text, ?3 its canonical text, ?4 the host
        # clock in ns, ?5 the owner. (`WHERE` is required before `ON CONFLICT` after a SELECT.)
        ISSUED = "store.name = ?1 AND #{at_most('?3', 'store.last_issued')}".freeze
        LIVE = "#{ISSUED} AND store.lease_token = ?3 AND #{below('?4', 'store.lease_expires_at_ns')} " \
               "AND (?5 IS NULL OR store.lease_owner = ?5)".freeze
        private_constant :ISSUED, :LIVE
        # Raises the mark of ?1 to ?2 for owner ?3 (bound: ?5), or changes nothing (0 rows:
        # fenced), under the write lock (BEGIN IMMEDIATE), which orders concurrent guards.
        MARK_SQLS = Fences.mark_sqls(TABLE, "VALUES (?1, ?2, ?3)", "?1, ?2, ?5", issued: ISSUED, live: LIVE)
        HAS_OWNER_SQL = "SELECT count(*) FROM pragma_table_info('#{TABLE}') WHERE name = 'lease_owner'".freeze
        ADD_OWNER_SQL = "ALTER TABLE #{TABLE} ADD COLUMN lease_owner TEXT CHECK (lease_owner IS NULL OR " \
                        "(lease_owner NOT GLOB '*[^0-9]*' AND length(lease_owner) BETWEEN 1 AND 20))".freeze
        # What {Admission::Reads} reads; the store's row without the clock, read on the host.
        READS = { highest: "SELECT highest FROM #{TABLE} WHERE resource = ?",
                  owner: "SELECT lease_owner FROM #{TABLE} WHERE resource = ?",
                  store_row: "SELECT last_issued, lease_token, lease_expires_at_ns, lease_owner FROM #{STORE_TABLE} " \
                             "WHERE name = ?" }.freeze
        BEGIN_SQL = "BEGIN IMMEDIATE"
        # The host clock in ns (CLOCK_REALTIME, as the SQLite store's clock).
        CLOCK_NS = -> { Process.clock_gettime(Process::CLOCK_REALTIME, :nanosecond) }

        # The owner as its decimal text, as the store keeps lease_owner.
        def self.mark_binds(mode, resource, token, owner = nil)
          owner = owner&.to_s
          case mode
          when :any then [resource, StoredToken.text(token), owner]
          when :issued then [resource, StoredToken.text(token), token.to_s, nil, owner]
          else [resource, StoredToken.text(token), token.to_s, CLOCK_NS.call.to_s, owner]
          end
        end

        DIALECT = ActiveRecordSession::Dialect.new(
          engine: "SQLite", adapter: /sqlite/i, mark_sqls: MARK_SQLS, mark_binds: method(:mark_binds), reads: READS,
          owner_column: [HAS_OWNER_SQL, ADD_OWNER_SQL], clock_ns: CLOCK_NS, setup: ->(sql) { [sql] }
        ).freeze
      end

      # One SQLite3::Database as a guard uses it: the store's connection plus the guard's
      # statements; it waits in SQLite's own busy handler. A database the caller gave
      # keeps no prepared statement: the sqlite3 gem refuses to close one while any is open.
      class Session < Stores::SQLite::Connection
        include Statements
        include Admission::Reads
        include DriverSession

        def initialize(database, failures, prepared:, admission: Admission.new(:any))
          super(database, 0)
          @failures = failures
          @prepared = prepared
          @admission = admission
        end

        alias connection database

        def ready
          raise @failures.problem("the database is closed") if @database.closed?

          self
        end

        def in_transaction? = @database.transaction_active?

        def begin_and_mark(resource, token, owner = nil)
          run(BEGIN_SQL)
          mark(resource, token, owner)
        end

        def mark_rows = @database.execute(Mark::SQL)

        private

        def execute(sql) = run(sql)

        # Under BEGIN IMMEDIATE (concurrent setups wait), adding the owner column to a table made before it.
        def create(sql)
          @database.execute_batch(sql)
          run(ADD_OWNER_SQL) if run(HAS_OWNER_SQL).first.zero?
        end

        def read(kind, resource)
          row = run(READS.fetch(kind), resource)
          kind == :store_row ? row&.dup&.insert(3, CLOCK_NS.call) : row
        end

        def run(sql, *binds)
          return super if @prepared

          @database.prepare(sql) do |statement|
            statement.bind_params(*binds) unless binds.empty?
            statement.step
          end
        end

        def mark(resource, token, owner)
          mode = @admission.mode
          run(MARK_SQLS.fetch(mode), *Statements.mark_binds(mode, resource, token, owner))
          @database.changes
        end
      end

      private

      # An SQLite database for the connection sources: never reopened in the same
      # process; a forked child leaves its parent's untouched (closing it would upset
      # the parent's locks).
      module Database
        extend Stores::Connections::Engine

        declare driver: ::SQLite3::Database, expected: "a database path String, an SQLite3::Database",
                session: nil, adapter_session: nil, closed: :closed?, close: :close, reopen_closed: false

        def self.silence(_session) = nil

        # The session finalizes its prepared statements first.
        def self.close(session) = session.close
      end
      private_constant :Database

      def source(connection, busy_timeout_ms)
        case connection
        when String
          failures = failures("SQLite (#{connection})")
          owned(connection, Database, -> { open_database(connection, busy_timeout_ms, failures) },
                ->(database) { session(database, failures, true) })
        when ::SQLite3::Database
          failures = failures("SQLite")
          shared(connection, Database, ->(database) { session(database, failures, false) })
        else
          unless Connections::ActiveRecord.accepts?(connection)
            raise TypeError, "connection must be a database path String, an SQLite3::Database or ActiveRecord " \
                             "(ActiveRecord::Base, a model class, a pool or a connection), got #{connection.inspect}"
          end

          Connections::ActiveRecord.new(connection, Statements::DIALECT, failures("SQLite (ActiveRecord)"),
                                        @admission)
        end
      end

      def session(database, failures, prepared) = Session.new(database, failures, prepared: prepared, admission: @admission)
      def failures(label) = super(label, ::SQLite3::Exception, "")

      def missing(error)
        if error.message.include?(MISSING_TABLE) then :table
        elsif error.message.include?(MISSING_STORE_TABLE) then :store_table
        elsif error.message.include?(OWNER_COLUMN) then :owner_column
        end
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
