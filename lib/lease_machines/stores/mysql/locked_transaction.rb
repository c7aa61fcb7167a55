# frozen_string_literal: true

module LeaseMachines
  module Stores
    class MySQL < Store
      # The `tx` of a decision with a hook, of renew_all and of force release: FOR UPDATE (a locking read sees the
      # newest committed row at any isolation level), the clock after the lock.
      class LockedTransaction
        include BatchRenewal::DeferredWrites

        # Deferred rows per statement: at most about 650 kB of SQL (255-byte names inlined as hex), well within
        # max_allowed_packet (16 MB on MariaDB, 64 MB on MySQL 8, by default).
        WRITE_ALL_ROWS = 1000

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

        def connection = @session.connection

        # Locks the rows of `names` with one statement; #lock answers each from it once (asked again: read again).
        def lock_all(names)
          rows = @session.query(SQL.lock_all(names))
          clock_ms = Integer(@session.query(CLOCK_SQL).first.fetch(0), 10)
          @locked = rows.to_h { |values| [values.first.b, [values.drop(1), clock_ms]] }
        end

        # One UPDATE per WRITE_ALL_ROWS rows (a renewal batch's are usually one).
        def write_rows(rows)
          rows.each_slice(WRITE_ALL_ROWS).sum do |slice|
            @session.query(SQL.update_all(slice))
            @session.affected_rows
          end
        end

        # The five columns and the clock in ms ([nil, nil] for a missing row when not `create`).
        def lock(name, create:)
          written_before_read(name)
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

        def write(name, columns, exists:, label:)
          raise Failures.internal("the row is always created before it is locked") unless exists
          return if deferred(name, columns, label)

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
