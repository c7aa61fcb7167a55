# frozen_string_literal: true

module LeaseMachines
  module Fences
    class Postgres < Table
      # One PG::Connection as a guard uses it: the store's session plus the guard's
      # statements. The mark is prepared once per server session (again after a
      # reconnect or DISCARD ALL).
      class Session < Stores::Postgres::Session
        include Statements
        include Admission::Reads

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

        def argument
          @connection
        end

        # Reconnects a broken connection; one inside the caller's transaction is taken as it is.
        def ready
          usable
        rescue PG::Error => e
          raise @failures.statement(e, "could not reconnect")
        end

        # Only a connection that broke: one with a query in flight may be the caller's,
        # whose transaction a reconnect would end.
        def broken?
          @connection.status != PG::CONNECTION_OK
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

        def begin_and_mark(resource, token, owner = nil)
          open_and_mark("BEGIN", "ROLLBACK", resource, token, owner)
        end

        def savepoint_and_mark(resource, token, owner = nil)
          open_and_mark("SAVEPOINT #{SAVEPOINT}", "ROLLBACK TO SAVEPOINT #{SAVEPOINT}", resource, token, owner)
        end

        def highest(resource)
          stored(value(HIGHEST_SQL, resource), resource)
        end

        def mark_rows
          @connection.exec(Mark::SQL).values
        end

        def mark_owner(resource)
          stored(value(OWNER_SQL, resource), resource, OWNER_COLUMN)
        end

        # The store's last_issued, lease_token, lease_expires_at_ns, the database clock
        # in ns, and lease_owner; nil when the store has no row for `resource`.
        def store_row(resource)
          store_values(@connection.exec_params(STORE_ROW_SQL, [resource]).values.first, resource)
        end

        # In a transaction of its own (or a savepoint in the caller's), concurrent setups
        # serialized by an advisory lock.
        def setup(sql)
          joined = in_transaction?
          begin
            @connection.exec(joined ? "SAVEPOINT #{SAVEPOINT}" : "BEGIN")
          rescue PG::Error => e
            roll_back unless joined # reconnects a connection that broke
            raise @failures.statement(e, "nothing was created")
          end
          begin
            @connection.exec("SET LOCAL client_min_messages = warning")
            @connection.exec_params("SELECT pg_advisory_xact_lock($1)", [SETUP_LOCK_KEY])
            @connection.exec(sql)
          rescue PG::Error => e
            joined ? roll_back_savepoint : roll_back
            raise @failures.statement(e, "rolled back: nothing was created")
          end
          joined ? release_savepoint : @failures.committing(self) { commit }
        end

        def roll_back_savepoint
          @connection.exec("ROLLBACK TO SAVEPOINT #{SAVEPOINT}; RELEASE SAVEPOINT #{SAVEPOINT}")
        end

        def release_savepoint
          @connection.exec("RELEASE SAVEPOINT #{SAVEPOINT}")
        end

        private

        def value(sql, resource)
          result = @connection.exec_params(sql, [resource])
          result.ntuples.zero? ? nil : result.getvalue(0, 0)
        end

        # A prepared mark that vanished (DISCARD ALL) fails before anything was written:
        # go back, prepare it again, start over, once.
        def open_and_mark(opening, undo, resource, token, owner)
          unless @prepared
            literal = Statements.mark_literal(@connection, resource, token, @admission.mode, owner)
            return @connection.exec("#{opening}; #{literal}").cmd_tuples
          end

          prepare_mark
          @connection.exec(opening)
          binds = Statements.mark_binds(@admission.mode, resource, token, owner)
          begin
            @connection.exec_prepared(@mark_name, binds).cmd_tuples
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
    end
  end
end
