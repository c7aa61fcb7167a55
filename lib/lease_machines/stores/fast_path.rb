# frozen_string_literal: true

module LeaseMachines
  module Stores
    # @api private: a server engine's decision without a before_commit hook:
    # read the row and the clock, decide, write with a compare-and-set; when
    # another decision got there first, read and decide again. The engine
    # gives `read(session, name)` (five columns and the clock in ms),
    # `commit(session, name, request, before, decided)` (the answer, or nil
    # when the row is no longer what was read) and `lost_race?(session,
    # error)` (the write lost to another and wrote nothing).
    class FastPath
      # How many times one call reads and decides again.
      MAX_ATTEMPTS = 100
      WRITE = "the write (which commits the decision)"

      def initialize(connections, failures)
        @connections = connections
        @failures = failures
      end

      # @return [Decision] once its write has committed (or when it changed nothing)
      def decide(name, request)
        @connections.with do |session|
          MAX_ATTEMPTS.times do
            values = read(session, name)
            columns = values.first(5) unless values.fetch(4).nil?
            decided = request.decide(name, columns, Integer(values.fetch(5), 10) * NANOS_PER_MILLISECOND)
            return decided.first if decided.last.nil?

            answer = commit(session, name, request, columns, decided)
            return answer if answer
          end
          raise @failures.problem("the row for resource #{name.inspect} changed between the read and the write " \
                                  "#{MAX_ATTEMPTS} times in a row; this call wrote nothing")
        end
      end

      private

      # Runs one write that commits on its own ({Failures#committing}).
      # @return the block's value, or nil when it lost a race: read again
      def committed(session)
        @failures.committing(WRITE, session) do
          yield
        rescue StandardError => e
          raise unless lost_race?(session, e)

          nil
        end
      end
    end
  end
end
