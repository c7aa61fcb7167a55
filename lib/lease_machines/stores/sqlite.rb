# frozen_string_literal: true

require "sqlite3"
require "time"
require "lease_machines/stores"
require "lease_machines/stores/schema"

module LeaseMachines
  module Stores
    # Durable authorities in one SQLite file, shared by many processes on one
    # host: one row per resource in `lease_machines_resources`.
    #
    #   store = LeaseMachines::Stores::SQLite.new("/var/lib/app/leases.sqlite3")
    #   store.setup!
    #   store.authority("nightly_report").acquire(owner: 7, ttl: 30)
    #
    # The file runs in WAL mode with `synchronous = FULL` (a commit is on disk
    # before it returns). A decision is one `BEGIN IMMEDIATE` transaction: it
    # takes the database's write lock first (waiting up to `busy_timeout`),
    # reads the row and then the host clock, lets the core decide, writes the
    # row and commits; only then the Decision is returned.
    #
    # The store opens its own connection lazily, serializes its threads with a
    # Mutex, and opens a new connection in a forked child (a connection opened
    # before fork belongs to the parent and is never touched again). The file
    # must be on a local disk: SQLite's locks do not work over network file
    # systems.
    class SQLite < Store
      # The schema {#setup!} runs (also in the repository as
      # db/sqlite/001_create_lease_machines_resources.sql).
      SCHEMA_SQL = Schema::SQLITE
      # The host's wall clock in integer milliseconds since the Unix epoch.
      HOST_CLOCK = -> { Process.clock_gettime(Process::CLOCK_REALTIME, :millisecond) }
      CLOCK_MAX_MS = U64_MAX / NANOS_PER_MILLISECOND

      COLUMNS = "last_issued, lease_owner, lease_token, lease_expires_at_ns, observed_ns"
      LOCK_SQL = "SELECT #{COLUMNS} FROM #{TABLE} WHERE name = ?".freeze
      INSERT_SQL = "INSERT INTO #{TABLE} (name, #{COLUMNS}) VALUES (?, ?, ?, ?, ?, ?)".freeze
      UPDATE_SQL = "UPDATE #{TABLE} SET last_issued = ?2, lease_owner = ?3, lease_token = ?4, " \
                   "lease_expires_at_ns = ?5, observed_ns = ?6, " \
                   "updated_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now') WHERE name = ?1".freeze
      STATUS_SQL = "SELECT name, #{COLUMNS}, updated_at FROM #{TABLE} WHERE name = ?".freeze
      STATUSES_SQL = "SELECT name, #{COLUMNS}, updated_at FROM #{TABLE} ORDER BY name".freeze

      # @return [String] the schema {#setup!} runs
      def self.schema_sql
        SCHEMA_SQL
      end

      # @return [String] the database file
      attr_reader :path

      # @param path [String, Pathname] the database file (created when missing)
      # @param busy_timeout [Numeric] seconds to wait for the write lock
      #   before failing with StoreError
      # @param clock [#call, nil] returns the store clock as Integer
      #   milliseconds since the Unix epoch (default: the host's CLOCK_REALTIME)
      # @param before_commit [#call, nil] called with a {Commit} inside every
      #   decision's transaction (and force release), just before COMMIT
      def initialize(path, busy_timeout: 5.0, clock: nil, before_commit: nil)
        super(before_commit: before_commit)
        @path = database_path(path)
        @busy_timeout_ms = busy_milliseconds(busy_timeout)
        raise TypeError, "clock must respond to #call, got #{clock.inspect}" unless clock.nil? || clock.respond_to?(:call)

        @clock = clock || HOST_CLOCK
        @mutex = Mutex.new
        @db = nil
        @pid = nil
        @inherited = []
        @statements = {}
      end

      # Creates the table when it is missing (idempotent; safe to race).
      # @return [self]
      def setup!
        sql = self.class.schema_sql
        transaction { |tx| tx.connection.execute_batch(sql) }
        self
      end

      # Closes this process's connection (the next call opens a new one).
      def close
        @mutex.synchronize do
          if @db && @pid == Process.pid && !@db.closed?
            @statements.each_value(&:close)
            @db.close
          end
          @statements = {}
          @db = nil
        end
      end

      # @api private: the store clock, checked. @return [Integer] milliseconds
      def clock_ms
        ms = @clock.call
        return ms if ms.is_a?(Integer) && ms.between?(0, CLOCK_MAX_MS)

        raise TypeError, "clock must return Integer milliseconds since the Unix epoch in 0..#{CLOCK_MAX_MS}, " \
                         "got #{ms.inspect}"
      end

      # @api private: BEGIN IMMEDIATE, yield a {Transaction}, COMMIT. Errors
      # before COMMIT roll back and raise StoreError; a failure during COMMIT
      # raises OutcomeUnknownError.
      def transaction
        @mutex.synchronize do
          db = database
          value = begin
            run("BEGIN IMMEDIATE")
            yield Transaction.new(db, self)
          rescue Exception => e # rubocop:disable Lint/RescueException -- roll back on anything, then re-raise
            rollback_quietly(db)
            raise unless e.is_a?(::SQLite3::Exception)

            raise StoreError, failure(e)
          end
          commit(db)
          value
        end
      end

      # One decision transaction on the store's connection.
      class Transaction
        # @return [SQLite3::Database]
        attr_reader :connection

        def initialize(connection, store)
          @connection = connection
          @store = store
        end

        # Reads the resource's row (the write lock is already held), then the
        # store clock. @return [[Array<String, nil>, nil], Integer] the five
        # stored columns (nil: no row) and the clock in milliseconds
        def lock(name, create:) # rubocop:disable Lint/UnusedMethodArgument -- the row is inserted by #write
          [@store.run(LOCK_SQL, name), @store.clock_ms]
        end

        # Writes the five columns (decimal Strings or nil).
        def write(name, columns, exists:)
          @store.run(exists ? UPDATE_SQL : INSERT_SQL, name, *columns)
          return if @connection.changes == 1

          raise StoreError, "SQLite: writing the row for resource #{name.inspect} changed #{@connection.changes} rows"
        end
      end

      # @api private: the connection's prepared statement for `sql`, prepared
      # on first use (the sqlite3 gem would compile it again on every
      # `execute`; a decision reuses all four). Called inside #transaction,
      # which has checked the connection.
      def statement(sql)
        @statements[sql] ||= @db.prepare(sql)
      end

      # @api private: runs a prepared statement to its first row and resets
      # it. @return [Array, nil] the first row
      def run(sql, *binds)
        statement = statement(sql)
        statement.bind_params(*binds) unless binds.empty?
        statement.step
      ensure
        begin
          statement&.reset!
        rescue ::SQLite3::Exception
          nil # a failed step raised its own error already; that one is the one that counts
        end
      end

      private

      def database_path(path)
        path = path.to_path if path.respond_to?(:to_path)
        raise TypeError, "path must be a String or Pathname, got #{path.inspect}" unless path.is_a?(String)
        if path.empty? || path == ":memory:"
          raise ArgumentError, "path must name a database file (a store is shared through it), got #{path.inspect}"
        end

        path.dup.freeze
      end

      def busy_milliseconds(seconds)
        unless seconds.is_a?(Numeric) && seconds.real? && seconds.finite? && !seconds.negative?
          raise ArgumentError, "busy_timeout must be a non-negative number of seconds, got #{seconds.inspect}"
        end

        (seconds * 1000).ceil
      end

      def database
        return @db if @db && @pid == Process.pid

        @inherited.push(@db, @statements) if @db # the parent's: never finalized here
        @db = nil
        @statements = {}
        db = ::SQLite3::Database.new(@path)
        configure(db)
        @pid = Process.pid
        @db = db
      rescue ::SQLite3::Exception, StoreError => e
        db&.close
        raise if e.is_a?(StoreError)

        raise StoreError, "SQLite (#{@path}): cannot open the database: #{e.message}"
      end

      def configure(db)
        db.busy_timeout = @busy_timeout_ms
        mode = db.get_first_value("PRAGMA journal_mode = WAL")
        unless mode.to_s.casecmp?("wal")
          raise StoreError, "SQLite (#{@path}): cannot switch to WAL mode (journal_mode is #{mode.inspect})"
        end

        db.execute("PRAGMA synchronous = FULL")
      end

      def commit(db)
        run("COMMIT")
      rescue StandardError => e
        still_open = e.is_a?(::SQLite3::Exception) && db.transaction_active?
        rollback_quietly(db)
        if still_open
          raise StoreError, "SQLite (#{@path}): COMMIT failed and the transaction was rolled back, nothing was " \
                            "committed: #{e.message}"
        end

        raise OutcomeUnknownError, "SQLite (#{@path}): COMMIT failed (#{e.class}: #{e.message}), so the decision " \
                                   "may or may not have been committed; it was not returned"
      rescue Exception # rubocop:disable Lint/RescueException -- an interrupt: leave no transaction open, re-raise
        rollback_quietly(db)
        raise
      end

      def rollback_quietly(db)
        db.execute("ROLLBACK") if db.transaction_active?
      rescue StandardError
        nil # the transaction is gone with the error; SQLite rolled it back itself
      end

      def failure(error)
        if error.is_a?(::SQLite3::BusyException)
          "SQLite (#{@path}): the database stayed locked for busy_timeout (#{@busy_timeout_ms} ms): " \
            "#{error.message} (nothing was committed)"
        else
          hint = error.message.include?("no such table: #{TABLE}") ? "; create the table with store.setup!" : ""
          "SQLite (#{@path}): #{error.message} (rolled back: nothing was committed)#{hint}"
        end
      end

      def read(sql, params)
        @mutex.synchronize do
          rows = database.execute(sql, params)
          [rows, clock_ms]
        end
      rescue ::SQLite3::Exception => e
        raise StoreError, failure(e)
      end

      def read_status(name)
        rows, clock = read(STATUS_SQL, [name])
        rows.first && status_from(rows.first, clock)
      end

      def read_statuses
        rows, clock = read(STATUSES_SQL, [])
        rows.map { |values| status_from(values, clock) }
      end

      def status_from(values, clock)
        updated_at = Time.iso8601(values.fetch(6)).utc
        build_status(values.fetch(0), values[1, 5], updated_at, clock)
      end
    end
  end
end
