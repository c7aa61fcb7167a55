# frozen_string_literal: true

module LeaseMachines
  module Stores
    # @api private: a server engine's decision without a hook: read, decide, write with a compare-and-set,
    # again when another decision got there first. The engine gives #read, #commit (nil: lost) and #lost_race?.
    class FastPath
      # Optimism is not fair (MySQL 9: 100 lost races in a row once): after ATTEMPTS the store decides in
      # its locked transaction, whose row lock queue always gives a turn.
      ATTEMPTS = 3
      WRITE = "the write (which commits the decision)"

      def initialize(connections, failures)
        @connections = connections
        @failures = failures
      end

      # @return [Decision, nil] nil after {ATTEMPTS} lost races (nothing written)
      def decide(name, request, tokens, label)
        @connections.with do |session|
          ATTEMPTS.times do
            values = read(session, name)
            columns = values.first(5) unless values.fetch(4).nil?
            clock_ns = Integer(values.fetch(5), 10) * NANOS_PER_MILLISECOND
            decided = request.decide(name, columns, clock_ns, tokens)
            return decided.first if decided.last.nil?

            written = HolderLabel.written(request, decided.first, decided.last, label)
            answer = commit(session, name, request, columns, decided, written)
            return answer if answer
          end
          nil
        end
      end

      private

      # One self-committing write ({Failures#committing}); nil when it lost a race: read again.
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
