# frozen_string_literal: true

module LeaseMachines
  module Stores
    # @api private: a server engine's decision without a before_commit hook:
    # read the row and the clock, decide, write with a compare-and-set; when
    # another decision got there first, read and decide again. The engine
    # gives `read(session, name)` (five columns and the clock in ms),
    # `commit(session, name, request, before, decided, label)` (the answer,
    # or nil when the row is no longer what was read; `label`: what the write
    # does with the holder's, {HolderLabel.written}) and `lost_race?(session,
    # error)` (the write lost to another and wrote nothing).
    #
    # Optimism is not fair: a caller that keeps losing the race to a busier
    # one could lose it forever (MySQL 9, four processes on one row: 100
    # lost races in a row in 1 of 20 runs). After {ATTEMPTS} lost races the
    # call answers nil and the store decides in its locked transaction,
    # which waits in the row lock's queue and so always gets its turn.
    class FastPath
      # How many times one call reads, decides and loses the race before the
      # store takes its locked transaction.
      ATTEMPTS = 3
      WRITE = "the write (which commits the decision)"

      def initialize(connections, failures)
        @connections = connections
        @failures = failures
      end

      # @param tokens [Symbol] the store's token policy ({Store#tokens})
      # @param label [String, nil, Symbol] the holder's label, or
      #   {HolderLabel::UNSTORED} ({Store#stored_label})
      # @return [Decision, nil] once its write has committed (or when it
      #   changed nothing); nil after {ATTEMPTS} lost races (nothing written)
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
