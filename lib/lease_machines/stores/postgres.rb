# frozen_string_literal: true

require "pg"
require "zlib"
require "lease_machines/stores"
require "lease_machines/stores/schema"

module LeaseMachines
  module Stores
    # Durable authorities in PostgreSQL: one row per resource in
    # `lease_machines_resources` (found through the connection's search_path).
    #
    #   store = LeaseMachines::Stores::Postgres.new(PG.connect(ENV.fetch("DATABASE_URL")))
    #   store.setup!
    #   store.authority("nightly_report").acquire(owner: 7, ttl: 30)
    #
    # The connection may be a PG::Connection (this store serializes its own
    # use of it with a Mutex), a connection URL String (the store opens and
    # owns the connection, and opens a new one in a forked child), a pool
    # responding to `with { |pg_connection| }` (connection_pool), or
    # ActiveRecord: `ActiveRecord::Base` (or a model class, or its
    # connection_pool), whose pool is used through `with_connection` and the
    # adapter's `raw_connection`, or a single ActiveRecord connection.
    #
    # A decision takes two round trips and one commit. The first reads the
    # resource's row and the server clock (`clock_timestamp()`) in one
    # statement; the core decides; the second writes the new checkpoint with a
    # compare-and-set: one autocommit `UPDATE ... WHERE` the row still holds
    # what was read (for a new resource, `INSERT ... ON CONFLICT DO NOTHING`).
    # PostgreSQL takes the row lock for that UPDATE and re-checks the condition
    # on the newest committed row, so the write lands only on the state the
    # decision was made on; when another decision got there first, nothing is
    # written and the call reads and decides again. Only after the write has
    # committed is the Decision returned. A decision that changes nothing
    # writes nothing.
    #
    # With a `before_commit` hook a decision is one explicit transaction
    # instead (READ COMMITTED, whatever the server's default):
    # `SELECT ... FOR UPDATE` of the row, with the clock read in the same
    # statement after the lock is granted; the core decides; `UPDATE`; the
    # hook; `COMMIT`.
    #
    # Both statements of the fast path are prepared once per connection
    # (`prepared_statements: false` sends them unprepared, for poolers that
    # cannot keep prepared statements, such as PgBouncer before 1.21 in
    # transaction mode).
    class Postgres < Store # rubocop:disable Metrics/ClassLength -- two decision paths and their fault handling, kept together
      # The schema {#setup!} runs (also in the repository as
      # db/postgres/001_create_lease_machines_resources.sql); run it from your
      # own migration to manage the schema yourself.
      SCHEMA_SQL = Schema::POSTGRES
      # pg_advisory_xact_lock key serializing concurrent #setup! calls ("lm_setup").
      SETUP_LOCK_KEY = 7_813_005_877_785_687_408

      CLOCK_MS = "floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint"
      # Every value is read back as text, so decoding never depends on a type
      # map the connection's owner installed (ActiveRecord installs one).
      COLUMNS_AS_TEXT = "r.last_issued::text, r.lease_owner::text, r.lease_token::text, " \
                        "r.lease_expires_at_ns::text, r.observed_ns::text"
      COLUMNS = "last_issued, lease_owner, lease_token, lease_expires_at_ns, observed_ns"
      # The outer projection runs on rows the inner LockRows has locked, so the
      # clock is read after the lock is granted (a subquery with FOR UPDATE is
      # never flattened into its parent).
      LOCK_SQL = "SELECT #{COLUMNS_AS_TEXT}, #{CLOCK_MS}::text " \
                 "FROM (SELECT #{COLUMNS} FROM #{TABLE} WHERE name = $1 FOR UPDATE) AS r".freeze
      INSERT_SQL = "INSERT INTO #{TABLE} (name) VALUES ($1) ON CONFLICT (name) DO NOTHING".freeze
      UPDATE_SQL = "UPDATE #{TABLE} SET last_issued = $2, lease_owner = $3, lease_token = $4, " \
                   "lease_expires_at_ns = $5, observed_ns = $6, updated_at = clock_timestamp() WHERE name = $1".freeze
      # The fast path (no before_commit hook): the row (every column NULL when
      # the resource has no row yet; observed_ns is never NULL in a row) and
      # the clock, then a compare-and-set write.
      READ_SQL = "SELECT #{COLUMNS_AS_TEXT}, #{CLOCK_MS}::text " \
                 "FROM (SELECT 1) AS c LEFT JOIN #{TABLE} AS r ON r.name = $1".freeze
      CAS_SQL = "#{UPDATE_SQL} AND (#{COLUMNS}) IS NOT DISTINCT FROM " \
                "($7::numeric, $8::numeric, $9::numeric, $10::numeric, $11::numeric)".freeze
      CREATE_SQL = "INSERT INTO #{TABLE} (name, #{COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6) " \
                   "ON CONFLICT (name) DO NOTHING".freeze
      # How many times one call reads and decides again after another decision
      # changed the row between its read and its write.
      MAX_ATTEMPTS = 100
      STATUS_COLUMNS = "#{CLOCK_MS}::text, r.name::text, #{COLUMNS_AS_TEXT}, " \
                       "(extract(epoch FROM r.updated_at) * 1000000)::bigint::text".freeze
      STATUS_SQL = "SELECT #{STATUS_COLUMNS} FROM (SELECT 1) AS c LEFT JOIN #{TABLE} AS r ON r.name = $1".freeze
      STATUSES_SQL = "SELECT #{STATUS_COLUMNS} FROM (SELECT 1) AS c LEFT JOIN #{TABLE} AS r ON true " \
                     "ORDER BY r.name COLLATE \"C\"".freeze

      # @return [String] the schema {#setup!} runs
      def self.schema_sql
        SCHEMA_SQL
      end

      # @param connection [PG::Connection, String, #with, ActiveRecord] see the class comment
      # @param lock_timeout [Numeric, nil] seconds a write may wait for a
      #   resource's row lock before failing with StoreError. nil (the
      #   default) keeps the connection's own lock_timeout: the fast path's
      #   write waits only while another decision commits, so a bound matters
      #   when a before_commit hook or another session holds the row. A
      #   number is applied with SET LOCAL on every write, which costs a
      #   little (see BENCHMARKS.md)
      # @param prepared_statements [Boolean] prepare the fast path's statements
      #   once per connection (false: send them unprepared every time)
      # @param before_commit [#call, nil] called with a {Commit} inside every
      #   decision's transaction (and force release), just before COMMIT (a test hook, or a place to
      #   write to the same database in the same transaction)
      def initialize(connection, lock_timeout: nil, prepared_statements: true, before_commit: nil)
        super(before_commit: before_commit)
        unless [true, false].include?(prepared_statements)
          raise TypeError, "prepared_statements must be true or false, got #{prepared_statements.inspect}"
        end

        @connections = Connections.for(connection)
        @prepared = prepared_statements
        @lock_timeout_ms = lock_timeout.nil? ? nil : milliseconds(lock_timeout)
        @begin_sql = "BEGIN ISOLATION LEVEL READ COMMITTED"
        @begin_sql += "; SET LOCAL lock_timeout = #{@lock_timeout_ms}" if @lock_timeout_ms
      end

      # @return [Boolean] whether the fast path's statements are prepared
      def prepared_statements?
        @prepared
      end

      # @api private: one decision. Without a before_commit hook: read, decide,
      # compare-and-set (see the class comment); with one: a locked transaction.
      def decide(name, now_ns, kind, owner, token, ttl_ns) # rubocop:disable Metrics/ParameterLists -- Native.decide_row's
        return super if before_commit

        @connections.with do |conn, recover|
          MAX_ATTEMPTS.times do
            values = read_row(conn, recover, name)
            columns = values.first(5) unless values.fetch(4).nil?
            at = now_ns || (Integer(values.fetch(5), 10) * NANOS_PER_MILLISECOND)
            decision, after = Native.decide_row(name, columns, kind, owner, token, at, ttl_ns)
            return decision if after.nil? || write_row(conn, recover, name, columns, after)
          end
          raise StoreError, "PostgreSQL: the row for resource #{name.inspect} changed between the read and the " \
                            "write #{MAX_ATTEMPTS} times in a row; this call wrote nothing"
        end
      rescue PG::Error => e
        raise StoreError, "PostgreSQL connection unavailable: #{summary(e)}"
      end

      # Creates the table when it is missing (idempotent; safe to race).
      # @return [self]
      def setup!
        sql = self.class.schema_sql
        transaction do |tx|
          tx.connection.exec("SET LOCAL client_min_messages = warning")
          tx.connection.exec_params("SELECT pg_advisory_xact_lock($1)", [SETUP_LOCK_KEY])
          tx.connection.exec(sql)
        end
        self
      end

      # Closes a connection this store opened from a URL (other connections
      # belong to the caller and are left open).
      def close
        @connections.close
      end

      # @api private: BEGIN, yield a {Transaction}, COMMIT. Errors before
      # COMMIT roll back and raise StoreError; a failure during COMMIT raises
      # OutcomeUnknownError.
      def transaction(&)
        @connections.with { |conn, recover| run(conn, recover, &) }
      rescue PG::Error => e
        raise StoreError, "PostgreSQL connection unavailable: #{summary(e)}"
      end

      # One decision transaction on one connection.
      class Transaction
        # @return [PG::Connection]
        attr_reader :connection

        def initialize(connection)
          @connection = connection
        end

        # Locks the resource's row (creating it first when missing and
        # `create`), then reads the store clock. @return [[Array<String>,
        # Integer]] the five columns and the clock in milliseconds ([nil, nil]
        # for a missing row when not `create`)
        def lock(name, create:)
          result = @connection.exec_params(LOCK_SQL, [name])
          if result.ntuples.zero?
            return [nil, nil] unless create

            @connection.exec_params(INSERT_SQL, [name])
            result = @connection.exec_params(LOCK_SQL, [name])
          end
          values = result.values.first
          raise StoreError, "PostgreSQL: the row for resource #{name.inspect} vanished while locked" unless values

          [values.first(5), Integer(values.fetch(5), 10)]
        end

        # Writes the five columns (decimal Strings or nil).
        def write(name, columns, exists:)
          raise StoreError, "internal error: the row is always created before it is locked" unless exists

          result = @connection.exec_params(UPDATE_SQL, [name, *columns])
          return if result.cmd_tuples == 1

          raise StoreError, "PostgreSQL: updating the row for resource #{name.inspect} changed " \
                            "#{result.cmd_tuples} rows"
        end
      end

      private

      # The row and the clock, in one autocommit statement (nothing is written).
      def read_row(conn, recover, name)
        values = statement(conn, READ_SQL, [name], bounded: false).values.first
        return values if values

        raise StoreError, "PostgreSQL: reading resource #{name.inspect} returned no row"
      rescue PG::Error => e
        recover_quietly(recover) unless idle?(conn)
        raise StoreError, "PostgreSQL: #{summary(e)} (nothing was written)#{hint(e)}"
      end

      # The compare-and-set write, which commits on its own. @return [Boolean]
      #   whether it wrote (false: the row is no longer what was read)
      def write_row(conn, recover, name, before, after)
        committing(conn, recover, "the write (which commits the decision)") do
          params = before ? [name, *after, *before] : [name, *after]
          statement(conn, before ? CAS_SQL : CREATE_SQL, params, bounded: true).cmd_tuples == 1
        rescue PG::TRSerializationFailure
          raise unless idle?(conn)

          false # a REPEATABLE READ or SERIALIZABLE default: a concurrent write won, nothing was written
        end
      end

      # Runs the statement that commits a decision (COMMIT, or the fast
      # path's write) and sorts its failures: refused by a server that is still
      # connected and idle, nothing was committed (StoreError); a broken
      # connection or an interrupt, the outcome is unknown
      # (OutcomeUnknownError, after the connection is recovered). A StoreError
      # from the block was raised before anything was sent.
      def committing(conn, recover, what)
        yield
      rescue StoreError
        raise
      rescue PG::Error => e
        raise StoreError, "PostgreSQL refused #{what}, nothing was committed: #{summary(e)}#{hint(e)}" if
          e.result && idle?(conn)

        recover_quietly(recover)
        raise OutcomeUnknownError, "PostgreSQL: the connection failed during #{what}, so the decision may or may " \
                                   "not have been committed; it was not returned: #{summary(e)}"
      rescue StandardError => e
        recover_quietly(recover)
        raise OutcomeUnknownError, "PostgreSQL: #{what} was interrupted (#{e.class}: #{e.message}), so the " \
                                   "decision may or may not have been committed; it was not returned"
      rescue Exception # rubocop:disable Lint/RescueException -- an interrupt: drop the connection state, re-raise
        recover_quietly(recover)
        raise
      end

      def idle?(conn)
        !conn.finished? && conn.status == PG::CONNECTION_OK && conn.transaction_status == PG::PQTRANS_IDLE
      end

      # Runs one fast-path statement: prepared unless prepared_statements is
      # false; a bounded one (a write, which may wait for the row lock) under
      # SET LOCAL lock_timeout, sent with the statement as one implicit
      # transaction. A session that lost its prepared statements (a new
      # backend behind the same connection object, DISCARD ALL) prepares them
      # again, once.
      def statement(conn, sql, params, bounded:)
        fresh = @prepared && Prepared.ready(conn)
        if bounded && @lock_timeout_ms
          conn.exec("SET LOCAL lock_timeout = #{@lock_timeout_ms}; #{inline(conn, sql, params)}")
        elsif @prepared
          conn.exec_prepared(Prepared.name(sql), params)
        else
          conn.exec_params(sql, params)
        end
      rescue PG::InvalidSqlStatementName => e
        if fresh || !idle?(conn)
          raise StoreError, "PostgreSQL: #{summary(e)}: the connection lost this store's prepared statements " \
                            "again right after preparing them (a pooler in transaction mode?); use " \
                            "prepared_statements: false"
        end

        Prepared.forget(conn)
        retry
      end

      # The statement with its parameters as SQL literals: `EXECUTE` of the
      # prepared statement, or the statement itself. Every parameter is the
      # resource name (quoted by libpq) or a decimal String this store made.
      def inline(conn, sql, params)
        literals = params.each_with_index.map do |value, index|
          if value.nil? then "NULL"
          elsif index.zero? then conn.escape_literal(value)
          elsif value.match?(/\A[0-9]+\z/) then value
          else
            raise StoreError, "internal error: parameter #{index + 1} is not a decimal: #{value.inspect}"
          end
        end
        return "EXECUTE #{Prepared.name(sql)}(#{literals.join(', ')})" if @prepared

        sql.gsub(/\$(\d+)/) { literals.fetch(Integer(Regexp.last_match(1), 10) - 1) }
      end

      def milliseconds(seconds)
        unless seconds.is_a?(Numeric) && seconds.real? && seconds.finite? && seconds.positive?
          raise ArgumentError, "lock_timeout must be a positive number of seconds or nil, got #{seconds.inspect}"
        end

        [(seconds * 1000).ceil, 1].max
      end

      def run(conn, recover)
        value = begin
          conn.exec(@begin_sql)
          yield Transaction.new(conn)
        rescue Exception => e # rubocop:disable Lint/RescueException -- roll back on anything, then re-raise
          roll_back(conn, recover)
          raise unless e.is_a?(PG::Error)

          raise StoreError, "PostgreSQL: #{summary(e)} (rolled back: nothing was committed)#{hint(e)}"
        end
        commit(conn, recover)
        value
      end

      # The first line of a PostgreSQL message (the whole one stays in `cause`).
      def summary(error)
        error.message.lines.first.to_s.strip
      end

      def hint(error)
        return "" unless error.is_a?(PG::UndefinedTable)

        "; create the table with store.setup! (or run #{self.class}::SCHEMA_SQL in a migration)"
      end

      def commit(conn, recover)
        result = committing(conn, recover, "COMMIT") { conn.exec("COMMIT") }
        return if result.cmd_status == "COMMIT"

        raise StoreError, "PostgreSQL answered #{result.cmd_status} to COMMIT (a statement in the transaction " \
                          "had failed): nothing was committed"
      end

      # Leaves the connection idle: ROLLBACK, or a reconnect when a query is
      # still in flight (an interrupt) or the connection broke.
      def roll_back(conn, recover)
        return if conn.finished?

        if conn.status != PG::CONNECTION_OK || conn.transaction_status == PG::PQTRANS_ACTIVE
          recover_quietly(recover)
        elsif conn.transaction_status != PG::PQTRANS_IDLE
          conn.exec("ROLLBACK")
        end
      rescue StandardError
        recover_quietly(recover)
      end

      def recover_quietly(recover)
        recover.call
      rescue StandardError
        nil # the next call checks the connection again before using it
      end

      def query(sql, params)
        @connections.with { |conn, _recover| conn.exec_params(sql, params) }
      rescue PG::Error => e
        raise StoreError, "PostgreSQL: #{summary(e)}#{hint(e)}"
      end

      def read_status(name)
        values = query(STATUS_SQL, [name]).values.first
        return nil if values.nil? || values[1].nil?

        status_from(values)
      end

      def read_statuses
        query(STATUSES_SQL, []).values.reject { |values| values[1].nil? }.map { |values| status_from(values) }
      end

      def status_from(values)
        updated_at = Time.at(0, Integer(values.fetch(7), 10), :usec).utc
        build_status(values.fetch(1), values[2, 5], updated_at, Integer(values.fetch(0), 10))
      end

      # The fast path's prepared statements. PostgreSQL keeps prepared
      # statements per server session, so they are prepared once per session:
      # a connection is marked with the backend it prepared them on, and a
      # reset connection (a new backend) prepares them again.
      module Prepared
        NAMES = [READ_SQL, CAS_SQL, CREATE_SQL].to_h { |sql| [sql, "lease_machines_#{Zlib.crc32(sql).to_s(16)}"] }.freeze
        SESSIONS = ObjectSpace::WeakMap.new

        module_function

        def name(sql)
          NAMES.fetch(sql)
        end

        # Prepares the statements the session lacks. @return [Boolean]
        #   whether it had to look
        def ready(conn)
          pid = conn.backend_pid
          return false if SESSIONS[conn] == pid

          present = conn.exec("SELECT name FROM pg_prepared_statements WHERE name LIKE 'lease\\_machines\\_%'")
                        .column_values(0)
          NAMES.each { |sql, name| conn.prepare(name, sql) unless present.include?(name) }
          SESSIONS[conn] = pid
          true
        end

        def forget(conn)
          SESSIONS[conn] = 0
        end
      end
      private_constant :Prepared

      # Where connections come from. Each source yields a PG::Connection that
      # is open and idle (not inside a transaction), plus a callable that
      # reconnects it.
      module Connections
        IDLE = PG::PQTRANS_IDLE

        class << self
          def for(connection)
            case connection
            when String then Owned.new(connection)
            when PG::Connection then Shared.new(connection)
            else other(connection)
            end
          end

          # Checks a connection before a transaction; reconnects a broken one.
          def ready(conn, recover)
            unless conn.is_a?(PG::Connection)
              raise TypeError, "the connection source yielded #{conn.inspect}, expected a PG::Connection"
            end
            raise StoreError, "the PostgreSQL connection is closed (finished)" if conn.finished?

            recover.call if conn.status != PG::CONNECTION_OK || conn.transaction_status == PG::PQTRANS_ACTIVE
            return conn if conn.transaction_status == IDLE

            raise StoreError, "the PostgreSQL connection is inside a transaction: a durable decision commits its " \
                              "own transaction before it returns, so give the store a connection that is not in one"
          end

          private

          def other(connection)
            if connection.is_a?(Class) && connection.respond_to?(:connection_pool)
              ActiveRecordPool.new(connection.connection_pool)
            elsif connection.respond_to?(:with_connection) && connection.respond_to?(:checkout)
              ActiveRecordPool.new(connection)
            elsif connection.respond_to?(:raw_connection) && connection.respond_to?(:transaction_open?)
              ActiveRecordConnection.new(connection)
            elsif connection.respond_to?(:with)
              Pool.new(connection)
            else
              raise TypeError, "connection must be a PG::Connection, a connection URL String, a pool responding to " \
                               "#with, an ActiveRecord connection or ActiveRecord::Base, got #{connection.inspect}"
            end
          end
        end

        # A PG::Connection the caller owns; a Mutex serializes this store's use.
        class Shared
          def initialize(conn)
            @conn = conn
            @mutex = Mutex.new
          end

          def with
            @mutex.synchronize do
              recover = -> { @conn.reset }
              yield Connections.ready(@conn, recover), recover
            end
          end

          def close; end
        end

        # A connection this store opens from a URL, and reopens in a forked
        # child (a connection opened before fork belongs to the parent and is
        # never touched again, not even finished).
        class Owned
          def initialize(url)
            @url = url
            @mutex = Mutex.new
            @conn = nil
            @pid = nil
            @inherited = []
          end

          def with
            @mutex.synchronize do
              conn = connection
              recover = -> { conn.reset }
              yield Connections.ready(conn, recover), recover
            end
          end

          def close
            @mutex.synchronize do
              @conn.finish if @conn && @pid == Process.pid && !@conn.finished?
              @conn = nil
            end
          end

          private

          def connection
            return @conn if @conn && @pid == Process.pid

            @inherited << @conn if @conn
            @conn = PG.connect(@url)
            @pid = Process.pid
            @conn
          end
        end

        # Anything with `with { |pg_connection| }` (connection_pool).
        class Pool
          def initialize(pool)
            @pool = pool
          end

          def with
            @pool.with do |conn|
              recover = -> { conn.reset }
              yield Connections.ready(conn, recover), recover
            end
          end

          def close; end
        end

        # One ActiveRecord PostgreSQL connection (adapter), used under its own lock.
        class ActiveRecordConnection
          def initialize(adapter)
            @adapter = adapter
          end

          def with(&)
            if @adapter.transaction_open?
              raise StoreError, "the ActiveRecord connection is inside a transaction: a durable decision commits " \
                                "its own transaction before it returns; pass ActiveRecord::Base so the store can " \
                                "take a connection of its own from the pool"
            end

            ActiveRecordConnection.use(@adapter, &)
          end

          def close; end

          def self.use(adapter)
            adapter.lock.synchronize do
              recover = lambda do
                adapter.reconnect!
              rescue StandardError => e
                raise StoreError, "ActiveRecord could not reconnect: #{e.message}"
              end
              raw = adapter.raw_connection
              recover.call if !raw.is_a?(PG::Connection) || raw.finished?
              raw = adapter.raw_connection
              yield Connections.ready(raw, recover), recover
            end
          end
        end

        # An ActiveRecord connection pool: the thread's connection through
        # `with_connection`, or, when that one is inside a transaction (say the
        # call is made from an `ActiveRecord::Base.transaction` block), a
        # connection of its own checked out for the call, so the decision
        # commits independently of the caller's transaction.
        class ActiveRecordPool
          def initialize(pool)
            @pool = pool
          end

          def with(&)
            @pool.with_connection do |adapter|
              return ActiveRecordConnection.use(adapter, &) unless busy?(adapter)
            end
            separate(&)
          end

          def close; end

          private

          def busy?(adapter)
            adapter.transaction_open? || adapter.raw_connection.transaction_status != IDLE
          end

          def separate(&)
            adapter = @pool.checkout
            begin
              ActiveRecordConnection.use(adapter, &)
            ensure
              @pool.checkin(adapter)
            end
          end
        end
      end
      private_constant :Connections
    end
  end
end
