# frozen_string_literal: true

module LeaseMachines
  module Stores
    class Postgres < Store
      # How many times one call reads and decides again after another decision
      # changed the row between its read and its write.
      MAX_ATTEMPTS = 100

      # A decision without a before_commit hook: two autocommit statements.
      # The first reads the row and the server clock; the request decides; the
      # second writes the new row with a compare-and-set, which lands only on
      # the row the decision was made on (see the class comment of Postgres).
      # When another decision got there first, nothing is written and the call
      # reads and decides again.
      class FastPath
        WRITE = "the write (which commits the decision)"

        def initialize(connections, statements, failures)
          @connections = connections
          @statements = statements
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
              return decision if after.nil? || write(session, name, columns, after, notify: decision.released?)
            end
            raise @failures.problem("the row for resource #{name.inspect} changed between the read and the write " \
                                    "#{MAX_ATTEMPTS} times in a row; this call wrote nothing")
          end
        end

        private

        # The row and the clock, in one autocommit statement (nothing is written).
        def read(session, name)
          values = @statements.run(session, READ_SQL, [name], bounded: false).values.first
          return values if values

          raise @failures.problem("reading resource #{name.inspect} returned no row")
        rescue PG::Error => e
          session.recover unless session.idle?
          raise @failures.failed(e, Failures::NOT_WRITTEN)
        end

        # The compare-and-set write, which commits on its own (a release's
        # also notifies the resource's channel, delivered on that commit).
        # @return [Boolean] whether it wrote (false: the row is no longer what
        #   was read)
        def write(session, name, before, after, notify:)
          @failures.committing(WRITE, session) do
            params = before ? [name, *after, *before] : [name, *after]
            sql = if before.nil?
                    CREATE_SQL
                  else
                    notify ? CAS_NOTIFY_SQL : CAS_SQL
                  end
            @statements.run(session, sql, params, bounded: true).cmd_tuples == 1
          rescue PG::TRSerializationFailure
            raise unless session.idle?

            false # a REPEATABLE READ or SERIALIZABLE default: a concurrent write won, nothing was written
          end
        end
      end
      private_constant :FastPath
    end
  end
end
