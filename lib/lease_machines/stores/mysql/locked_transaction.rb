# frozen_string_literal: true

module LeaseMachines
  module Stores
    class MySQL < Store
      # A decision with a before_commit hook (and an operator's force release):
      # one explicit transaction, `SELECT ... FOR UPDATE` of the row (a
      # locking read: the newest committed row, whatever the isolation level),
      # the clock read by the next statement (after the lock is granted), the
      # decision, `UPDATE`, the hook, `COMMIT`. What {Store#decide} and
      # {Store#force_release} are given as `tx`.
      class LockedTransaction
        # START TRANSACTION, yield the transaction, COMMIT (see
        # {Failures#transaction}).
        def self.run(session, failures)
          failures.transaction(session) do
            session.query("START TRANSACTION")
            yield new(session, failures)
          end
        end

        def initialize(session, failures)
          @session = session
          @failures = failures
        end

        # @return [Mysql2::Client]
        def connection
          @session.connection
        end

        # Locks the resource's row (creating it first when missing and
        # `create`), then reads the store clock. @return [[Array<String>,
        # Integer]] the five columns and the clock in milliseconds ([nil, nil]
        # for a missing row when not `create`)
        def lock(name, create:)
          values = @session.query(SQL.lock(name)).first
          if values.nil?
            return [nil, nil] unless create

            @session.query(SQL.insert_empty(name))
            values = @session.query(SQL.lock(name)).first
          end
          raise @failures.problem("the row for resource #{name.inspect} vanished while locked") unless values

          [values, Integer(@session.query(CLOCK_SQL).first.fetch(0), 10)]
        end

        # Writes the five columns (decimal Strings or nil).
        def write(name, columns, exists:)
          raise Failures.internal("the row is always created before it is locked") unless exists

          @session.query(SQL.update(name, columns))
          count = @session.affected_rows
          return if count == 1

          raise @failures.row_count("updating", name, count)
        end
      end
      private_constant :LockedTransaction
    end
  end
end
