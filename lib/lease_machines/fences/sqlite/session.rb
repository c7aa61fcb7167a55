# frozen_string_literal: true

module LeaseMachines
  module Fences
    class SQLite < Table
      # One SQLite3::Database as a guard uses it: the store's connection plus the guard's
      # statements; it waits in SQLite's own busy handler. A database the caller gave
      # keeps no prepared statement: the sqlite3 gem refuses to close one while any is open.
      class Session < Stores::SQLite::Connection
        include Statements
        include Admission::Reads

        def initialize(database, failures, prepared:, admission: Admission.new(:any))
          super(database, 0)
          @failures = failures
          @prepared = prepared
          @admission = admission
        end

        def argument
          @database
        end
        alias connection argument

        def ready
          raise @failures.problem("the database is closed") if @database.closed?

          self
        end

        def in_transaction?
          @database.transaction_active?
        end

        def begin_and_mark(resource, token, owner = nil)
          run(BEGIN_SQL)
          mark(resource, token, owner)
        end

        def savepoint_and_mark(resource, token, owner = nil)
          run("SAVEPOINT #{SAVEPOINT}")
          mark(resource, token, owner)
        end

        def highest(resource)
          stored(run(HIGHEST_SQL, resource)&.first, resource)
        end

        def mark_rows
          @database.execute(Mark::SQL)
        end

        def mark_owner(resource)
          stored(run(OWNER_SQL, resource)&.first, resource, OWNER_COLUMN)
        end

        # The store's last_issued, lease_token, lease_expires_at_ns, the host clock in ns,
        # and lease_owner; nil when the store has no row for `resource`.
        def store_row(resource)
          store_values(run(STORE_ROW_SQL, resource), resource)&.insert(3, CLOCK_NS.call)
        end

        # In BEGIN IMMEDIATE (concurrent setups wait) or a savepoint in the caller's
        # transaction; adds the owner column to a table made before it, under the same lock.
        def setup(sql)
          joined = in_transaction?
          begin
            run(joined ? "SAVEPOINT #{SAVEPOINT}" : BEGIN_SQL)
          rescue ::SQLite3::Exception => e
            raise @failures.statement(e, "nothing was created")
          end
          begin
            @database.execute_batch(sql)
            run(ADD_OWNER_SQL) if run(HAS_OWNER_SQL).first.zero?
          rescue ::SQLite3::Exception => e
            joined ? roll_back_savepoint : roll_back
            raise @failures.statement(e, "rolled back: nothing was created")
          end
          joined ? release_savepoint : @failures.committing(self) { commit }
        end

        def roll_back_savepoint
          run("ROLLBACK TO SAVEPOINT #{SAVEPOINT}")
          run("RELEASE SAVEPOINT #{SAVEPOINT}")
        end

        def release_savepoint
          run("RELEASE SAVEPOINT #{SAVEPOINT}")
        end

        private

        def run(sql, *binds)
          return super if @prepared

          statement = @database.prepare(sql)
          begin
            statement.bind_params(*binds) unless binds.empty?
            statement.step
          ensure
            statement.close
          end
        end

        def mark(resource, token, owner)
          mode = @admission.mode
          run(MARK_SQLS.fetch(mode), *Statements.mark_binds(mode, resource, token, owner))
          @database.changes
        end
      end
    end
  end
end
