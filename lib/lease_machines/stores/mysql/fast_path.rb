# frozen_string_literal: true

module LeaseMachines
  module Stores
    class MySQL < Store
      # How many times one call reads and decides again after another decision
      # changed the row between its read and its write.
      MAX_ATTEMPTS = 100

      # A decision without a before_commit hook: read (in autocommit mode each
      # statement has its own snapshot, so REPEATABLE READ shows the newest
      # row), decide, compare-and-set ({SQL.compare_and_set}).
      class FastPath
        WRITE = "the write (which commits the decision)"

        def initialize(connections, failures)
          @connections = connections
          @failures = failures
        end

        # @return [Decision] once its write has committed (or when it changed
        #   nothing)
        def decide(name, request)
          @connections.with do |session|
            MAX_ATTEMPTS.times do
              values = read(session, name)
              columns = values.first(5) unless values.fetch(4).nil?
              decision, after = request.decide(name, columns, Integer(values.fetch(5), 10) * NANOS_PER_MILLISECOND)
              return decision if after.nil? || write(session, name, columns, after)
            end
            raise @failures.problem("the row for resource #{name.inspect} changed between the read and the write " \
                                    "#{MAX_ATTEMPTS} times in a row; this call wrote nothing")
          end
        end

        private

        # A session with autocommit off would neither see other decisions
        # (its snapshot stays) nor commit the write: refused.
        def read(session, name)
          values = session.query(SQL.read(name)).first || session.query(NEW_READ_SQL).first
          return values if values.fetch(6) == "1"

          raise Failures.in_transaction("MySQL", " (autocommit is off), so give the store a connection in " \
                                                 "autocommit mode")
        rescue Mysql2::Error => e
          session.recover unless Errors.answered?(e)
          raise @failures.failed(e, Failures::NOT_WRITTEN)
        end

        # @return [Boolean] whether the compare-and-set wrote
        def write(session, name, before, after)
          @failures.committing(WRITE, session) do
            session.query(before ? SQL.compare_and_set(name, before, after) : SQL.create(name, after))
            session.affected_rows == 1
          rescue Mysql2::Error => e
            raise unless Errors.deadlock?(e) && !session.connection.closed?

            false # the server chose this statement as a deadlock's victim and wrote nothing: read again
          end
        end
      end
      private_constant :FastPath
    end
  end
end
