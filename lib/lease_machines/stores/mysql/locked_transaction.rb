# frozen_string_literal: true

module LeaseMachines
  module Stores
    class MySQL < Store
      # The `tx` of {Store#decide} with a before_commit hook and of force
      # release: `SELECT ... FOR UPDATE` (a locking read sees the newest
      # committed row whatever the isolation level), the clock after the lock.
      class LockedTransaction
        # START TRANSACTION, yield the transaction, COMMIT ({Failures#transaction}).
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

        # Locks the rows of `names` (sorted) with one statement; #lock then
        # answers each from what it read, once (a name asked again is read again).
        def lock_all(names)
          rows = @session.query(SQL.lock_all(names))
          clock_ms = Integer(@session.query(CLOCK_SQL).first.fetch(0), 10)
          @locked = rows.to_h { |values| [values.first.b, [values.drop(1), clock_ms]] }
        end

        # @return [[Array<String>, Integer]] the five columns and the clock
        #   in ms ([nil, nil] for a missing row when not `create`)
        def lock(name, create:)
          locked = @locked&.delete(name.b)
          return locked if locked

          values = @session.query(SQL.lock(name)).first
          if values.nil?
            return [nil, nil] unless create

            @session.query(SQL.insert_empty(name))
            values = @session.query(SQL.lock(name)).first
          end
          raise @failures.problem("the row for resource #{name.inspect} vanished while locked") unless values

          [values, Integer(@session.query(CLOCK_SQL).first.fetch(0), 10)]
        end

        # Writes the five columns (decimal Strings or nil), and the holder's
        # label unless it is {HolderLabel::KEEP}.
        def write(name, columns, exists:, label:)
          raise Failures.internal("the row is always created before it is locked") unless exists

          @session.query(SQL.update(name, columns, label))
          count = @session.affected_rows
          return if count == 1

          raise @failures.row_count("updating", name, count)
        end
      end
      private_constant :LockedTransaction
    end
  end
end
