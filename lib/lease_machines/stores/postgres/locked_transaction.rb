# frozen_string_literal: true

module LeaseMachines
  module Stores
    class Postgres < Store
      # The `tx` of a decision with a hook, force release and setup!: READ COMMITTED, FOR UPDATE, clock after the lock.
      class LockedTransaction
        include BatchRenewal::DeferredWrites

        def self.run(session, begin_sql, failures)
          failures.transaction(session) do
            session.connection.exec(begin_sql)
            yield new(session.connection, failures)
          end
        end

        attr_reader :connection

        def initialize(connection, failures)
          @connection = connection
          @failures = failures
        end

        # Locks the rows of `names` with one statement; #lock answers each from it once (asked again: read again).
        def lock_all(names)
          result = @connection.exec_params(LOCK_ALL_SQL, [PG::TextEncoder::Array.new.encode(names)])
          @locked = result.values.to_h { |values| [values.first, [values[1, 5], Integer(values.fetch(6), 10)]] }
        end

        # The five columns and the clock in ms ([nil, nil] for a missing row when not `create`).
        def lock(name, create:)
          written_before_read(name)
          locked = @locked&.delete(name)
          return locked if locked

          result = @connection.exec_params(LOCK_SQL, [name])
          if result.ntuples.zero?
            return [nil, nil] unless create

            @connection.exec_params(INSERT_SQL, [name])
            result = @connection.exec_params(LOCK_SQL, [name])
          end
          values = result.values.first
          raise @failures.problem("the row for resource #{name.inspect} vanished while locked") unless values

          [values.first(5), Integer(values.fetch(5), 10)]
        end

        def announce_release(name) = @connection.exec_params(NOTIFY_SQL, [name])

        # One UPDATE for all the rows: their columns as arrays.
        def write_rows(rows)
          encoder = PG::TextEncoder::Array.new
          columns = rows.values.transpose.map { |column| encoder.encode(column) }
          @connection.exec_params(WRITE_ALL_SQL, [encoder.encode(rows.keys), *columns]).cmd_tuples
        end

        def write(name, columns, exists:, label:)
          raise Failures.internal("the row is always created before it is locked") unless exists
          return if deferred(name, columns, label)

          kept = label == HolderLabel::KEEP
          result = @connection.exec_params(kept ? UPDATE_SQL : UPDATE_LABELLED_SQL, [name, *columns, *([label] unless kept)])
          return if result.cmd_tuples == 1

          raise @failures.row_count("updating", name, result.cmd_tuples)
        end
      end
      private_constant :LockedTransaction
    end
  end
end
