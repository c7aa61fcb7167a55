# frozen_string_literal: true

module LeaseMachines
  module Fences
    class SQLite < Table
      # One SQLite3::Database as a guard uses it: the store's connection plus
      # the guard's statements; it waits in SQLite's own busy handler. A
      # database the caller gave keeps no prepared statement: the sqlite3 gem
      # refuses to close a database while one is open.
      class Session < Stores::SQLite::Connection
        include Statements

        # @return [Failures]
        attr_reader :failures

        # @param admission [Admission] which tokens the mark admits
        def initialize(database, failures, prepared:, admission: Admission.new(:any))
          super(database, 0)
          @failures = failures
          @prepared = prepared
          @admission = admission
        end

        # What the guard's block is given.
        def argument
          @database
        end
        alias connection argument

        # @return [self]
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

        # @return [Integer, nil] the resource's mark
        def highest(resource)
          row = run(HIGHEST_SQL, resource)
          StoredToken.read(row&.first, "#{TABLE} row #{resource.inspect}")
        end

        # @return [Array<Array>] the rows of {Mark::SQL}
        def mark_rows
          @database.execute(Mark::SQL)
        end

        # @return [Integer, nil] the owner recorded with the resource's mark
        def mark_owner(resource)
          row = run(OWNER_SQL, resource)
          StoredToken.read(row&.first, "#{TABLE} row #{resource.inspect} (lease_owner)")
        end

        # @return [Array(Integer, Integer, Integer, Integer), nil] the store's
        #   row of `resource` (last_issued, lease_token, lease_expires_at_ns)
        #   and the host clock in ns; nil when the store has no row for it
        def store_row(resource)
          row = run(STORE_ROW_SQL, resource)
          return nil unless row

          where = "#{STORE_TABLE} row #{resource.inspect}"
          row.map { |value| StoredToken.read(value, where) }.insert(3, CLOCK_NS.call)
        end

        # @return [FencedError] the error for a refused mark
        def refusal(resource, token, owner = nil)
          @admission.refusal(self, resource, token, owner: owner)
        end

        # Runs `sql` in BEGIN IMMEDIATE (concurrent setups wait), or under a
        # savepoint inside the caller's transaction, then adds the owner
        # column to a table made before it (under the same lock).
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

        # @return [Array, nil]
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
