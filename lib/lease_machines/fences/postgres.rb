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
        CLOCK_NS_SQL = "floor(extract(epoch FROM clock_timestamp()) * 1e9)"
        ISSUED = "store.name = $1::text AND store.last_issued >= $2::numeric"
        # Strict: a token issued twice (a failover lost the first grant) is not admitted for its first holder.
        LIVE = "#{ISSUED} AND store.lease_token = $2::numeric AND store.lease_expires_at_ns > #{CLOCK_NS_SQL} " \
               "AND ($3::numeric IS NULL OR store.lease_owner = $3::numeric)".freeze
        # The mark already holds $2 for owner $3 (or the guard names none): locking the row is all the mark does.
        UNCHANGED = "fence.resource = $1::text AND fence.highest = $2::numeric " \
                    "AND ($3::numeric IS NULL OR fence.lease_owner = $3::numeric)"
        UNLOCKED = "NOT EXISTS (SELECT FROM locked)"
        SELECTED = "$1::text, $2::numeric, $3::numeric"
        UPSERTS = Fences.mark_sqls("fence", "SELECT #{SELECTED} WHERE #{UNLOCKED}", SELECTED,
                                   issued: "#{ISSUED} AND #{UNLOCKED}", live: "#{LIVE} AND #{UNLOCKED}")
        private_constant :ISSUED, :LIVE, :UNCHANGED, :UNLOCKED, :SELECTED, :UPSERTS
        # Raises the mark of $1 to $2 for owner $3, or changes nothing (0 rows: fenced). Locks the row either
        # way, which orders concurrent guards of one resource; an equal token it records already is only
        # locked (FOR NO KEY UPDATE, as the upsert's lock), which writes no row version.
        MARK_SQLS = { any: nil, issued: ISSUED, live: LIVE }.to_h do |mode, admitted|
          admits = " AND EXISTS (SELECT FROM #{STORE_TABLE} AS store WHERE #{admitted})" if admitted
          [mode, "WITH locked AS (SELECT FROM #{TABLE} AS fence WHERE #{UNCHANGED}#{admits} FOR NO KEY UPDATE), " \
                 "raised AS (#{UPSERTS.fetch(mode)} RETURNING 1) SELECT FROM locked UNION ALL SELECT FROM raised"]
        end.freeze
        MARK_SQL = MARK_SQLS.fetch(:any)
        READS = { highest: "SELECT highest FROM #{TABLE} WHERE resource = $1",
                  owner: "SELECT lease_owner::text FROM #{TABLE} WHERE resource = $1",
                  store_row: "SELECT last_issued::text, lease_token::text, lease_expires_at_ns::text, #{CLOCK_NS_SQL}" \
                             "::numeric(20,0)::text, lease_owner::text FROM #{STORE_TABLE} WHERE name = $1" }.freeze
        SETUP_LOCK_KEY = 7_813_006_137_384_576_357 # pg_advisory_xact_lock key of #setup! ("lm_fence")

        # MARK_SQLS[mode] with its values written in, to share BEGIN's round trip.
        def self.mark_literal(connection, resource, token, mode = :any, owner = nil)
          values = { "1" => connection.escape_literal(resource), "2" => token.to_s, "3" => owner&.to_s || "NULL" }
          MARK_SQLS.fetch(mode).gsub(/\$([123])(?!\d)/) { values.fetch(Regexp.last_match(1)) }
        end

        def self.mark_binds(_mode, resource, token, owner = nil) = [resource, token.to_s, owner&.to_s]

        DIALECT = ActiveRecordSession::Dialect.new(
          engine: "PostgreSQL", adapter: /postg/i, mark_sqls: MARK_SQLS, mark_binds: method(:mark_binds), reads: READS,
          setup: lambda do |sql|
            ["SET LOCAL client_min_messages = warning", "SELECT pg_advisory_xact_lock(#{SETUP_LOCK_KEY})", sql]
          end,
          cancel: ->(adapter) { Statements.cancel_in_flight(adapter) }
        ).freeze

        # ActiveRecord 7.1 and later cancel a running statement in their own rollback; 6.1 and 7.0 read it out
        # first, waiting for its lock. The adapter's PG::Connection is read from its variable (`@raw_connection`
        # from 7.1, `@connection` before): `raw_connection` would first send a BEGIN or a check on the busy
        # connection.
        def self.cancel_in_flight(adapter)
          raw = adapter.instance_variable_get(:@raw_connection) || adapter.instance_variable_get(:@connection)
          Stores::Postgres::CancelRequest.send_now(raw) if raw.is_a?(PG::Connection)
        end
      end

      # One PG::Connection as a guard uses it: the store's session plus the guard's
      # statements. The mark is prepared once per server session (again after a
      # reconnect or DISCARD ALL) and sent with BEGIN (or SAVEPOINT) in one round trip,
      # libpq's pipeline mode (libpq 14 and later; two round trips before).
      class Session < Stores::Postgres::Session
        include Statements
        include Admission::Reads
        include DriverSession

        BEGIN_SQL = "BEGIN"
        # Per {Admission} mode. `_owner`: the three-parameter statements, named apart from
        # 0.3's, which a server session a pooler shares with an app on 0.3 may hold.
        MARK_NAMES = { any: "lease_machines_fence_mark_owner", issued: "lease_machines_fence_mark_issued_owner",
                       live: "lease_machines_fence_mark_live_owner" }.freeze
        # Per mark name: connection => the backend pid it was prepared in.
        PREPARED = MARK_NAMES.values.to_h { |name| [name, ObjectSpace::WeakMap.new] }.freeze
        private_constant :PREPARED

        def initialize(connection, failures, prepared: true, admission: Admission.new(:any))
          super(connection)
          @failures = failures
          @prepared = prepared
          @admission = admission
          @mark_name = MARK_NAMES.fetch(admission.mode)
        end

        # Reconnects a broken connection; one inside the caller's transaction is taken as it is.
        def ready
          usable
        rescue PG::Error => e
          raise @failures.statement(e, "could not reconnect")
        end

        # Only a connection that broke, or that a guard left in pipeline mode: one with a query in flight may be
        # the caller's, whose transaction a reconnect would end.
        def broken? = @connection.status != PG::CONNECTION_OK || Pipeline.left_on?(@connection)

        # A statement an interrupt left in flight is cancelled and read out first: ROLLBACK only when a
        # transaction is open (an interrupted PREPARE or read outside one leaves none, and a ROLLBACK there draws a
        # WARNING).
        def roll_back
          read_out_in_flight
          super
        end

        def roll_back_savepoint
          read_out_in_flight
          execute("ROLLBACK TO SAVEPOINT #{SAVEPOINT}; RELEASE SAVEPOINT #{SAVEPOINT}")
        end

        def in_transaction?
          case @connection.transaction_status
          when PG::PQTRANS_IDLE then false
          when PG::PQTRANS_INTRANS then true
          when PG::PQTRANS_INERROR
            raise @failures.problem("the connection's transaction has already failed (a statement in it raised): " \
                                    "roll it back before guarding a write")
          else raise @failures.problem("the connection is busy (a query is in flight) or broken")
          end
        end

        def begin_and_mark(resource, token, owner = nil) = open_and_mark("BEGIN", "ROLLBACK", resource, token, owner)

        def savepoint_and_mark(resource, token, owner = nil)
          open_and_mark("SAVEPOINT #{SAVEPOINT}", "ROLLBACK TO SAVEPOINT #{SAVEPOINT}", resource, token, owner)
        end

        def mark_rows = @connection.exec(Mark::SQL).values

        private

        # A guard begins only on an idle connection ({#in_transaction?}): what is in flight at its end is its own.
        def read_out_in_flight
          return if @connection.transaction_status != PG::PQTRANS_ACTIVE || broken?

          Stores::Postgres::CancelRequest.send_now(@connection)
          @connection.discard_results
        rescue PG::Error
          nil # broke: reconnected by the rollback
        end

        def execute(sql) = @connection.exec(sql)

        # Concurrent setups serialized by an advisory lock.
        def create(sql)
          @connection.exec("SET LOCAL client_min_messages = warning")
          @connection.exec_params("SELECT pg_advisory_xact_lock($1)", [SETUP_LOCK_KEY])
          @connection.exec(sql)
        end

        def read(kind, resource) = @connection.exec_params(READS.fetch(kind), [resource]).values.first

        # A prepared mark that vanished (DISCARD ALL) fails before anything was written:
        # go back, prepare it again, start over, once.
        def open_and_mark(opening, undo, resource, token, owner)
          unless @prepared
            literal = Statements.mark_literal(@connection, resource, token, @admission.mode, owner)
            return @connection.exec("#{opening}; #{literal}").cmd_tuples
          end

          prepare_mark
          binds = Statements.mark_binds(@admission.mode, resource, token, owner)
          begin
            Pipeline.open_and_mark(@connection, opening, @mark_name, binds)
          rescue PG::InvalidSqlStatementName
            @connection.exec(undo)
            PREPARED.each_value { |connections| connections[@connection] = nil }
            prepare_mark
            @connection.exec(opening) if undo == "ROLLBACK"
            @connection.exec_prepared(@mark_name, binds).cmd_tuples
          end
        end

        def prepare_mark
          pid = @connection.backend_pid
          prepared = PREPARED.fetch(@mark_name)
          return if prepared[@connection] == pid

          begin
            @connection.prepare(@mark_name, MARK_SQLS.fetch(@admission.mode))
          rescue PG::DuplicatePstatement
            nil # prepared in this server session by another fence on the same connection
          end
          prepared[@connection] = pid
        end
      end

      # BEGIN (or SAVEPOINT) and the prepared mark in one round trip: libpq's pipeline mode. Without it
      # (libpq before 14), one after the other.
      module Pipeline
        AVAILABLE = PG::Connection.method_defined?(:enter_pipeline_mode)
        NO_PARAMS = [].freeze
        # Results an unfinished pipeline can still hold: the opening's, the mark's, a nil after each, the sync's.
        LEFT_AT_MOST = 8

        # @return [Integer] the rows the mark wrote (0: fenced). Raises the opening's or the mark's PG::Error.
        def self.open_and_mark(conn, opening, mark_name, binds)
          unless AVAILABLE
            conn.exec(opening)
            return conn.exec_prepared(mark_name, binds).cmd_tuples
          end

          synced = finished = false
          begin
            conn.enter_pipeline_mode
            held_back = hold_back(conn)
            conn.send_query_params(opening, NO_PARAMS)
            conn.send_query_prepared(mark_name, binds)
            conn.pipeline_sync
            synced = true
            opened = next_result(conn)
            marked = next_result(conn)
            conn.get_result # the sync's
            finished = true
          ensure
            send_on(conn) if held_back
            finished ? conn.exit_pipeline_mode : leave(conn, synced)
          end
          opened.check
          marked.check.cmd_tuples
        end

        # pg flushes after each send (flush_data, private): held back, the opening and the mark leave with the
        # sync in one write. Not when the caller made the connection nonblocking (pg's setnonblocking).
        def self.hold_back(conn)
          return false if conn.isnonblocking

          conn.send(:flush_data=, false)
          true
        end

        def self.send_on(conn) = conn.send(:flush_data=, true)

        def self.next_result(conn)
          result = conn.get_result
          conn.get_result # nil: the end of that statement's results
          result
        end

        # An interrupt (Timeout, Thread#kill) or a failure cut the pipeline short: what still runs is cancelled
        # (a mark waiting for the fence row), its results are read, and the connection leaves pipeline mode, its
        # transaction open for the guard to roll back. One that broke is reconnected by the next call.
        def self.leave(conn, synced)
          conn.pipeline_sync unless synced
          Stores::Postgres::CancelRequest.send_now(conn)
          LEFT_AT_MOST.times do
            return conn.exit_pipeline_mode
          rescue PG::Error
            return unless conn.status == PG::CONNECTION_OK

            conn.get_result
          end
        rescue PG::Error
          nil
        end

        def self.left_on?(conn) = AVAILABLE && conn.pipeline_status != PG::PQ_PIPELINE_OFF
      end

      private

      def source(connection)
        server_source(connection, Stores::Postgres::Connections, "PostgreSQL", Statements::DIALECT) do |driver, failures|
          Session.new(driver, failures, prepared: @prepared, admission: @admission)
        end
      end

      def failures(label) = super(label, PG::Error)

      def missing(error)
        message = error.message
        return :store_table if message.include?(%(relation "#{STORE_TABLE}" does not exist))
        return :owner_column if message.include?(OWNER_COLUMN)

        :table if error.is_a?(PG::UndefinedTable) || message.include?(%(relation "#{TABLE}" does not exist))
      end
    end
  end
end
