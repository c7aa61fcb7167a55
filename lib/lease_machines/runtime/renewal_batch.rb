# frozen_string_literal: true

module LeaseMachines
  module Runtime
    # The holds of one store that came due in the same tick, renewed with one
    # {Stores::BatchRenewal#renew_all}: one transaction, one COMMIT. Each hold
    # looks as {Renewal#renew} does (lost, at risk, nothing to send); each
    # answer goes back to its hold as a single renewal's would, and a failure
    # of the batch is every hold's failure.
    class RenewalBatch
      # @param store [Stores::Store] the store every hold renews on
      # @param helds [Array<Held>] (each once)
      def initialize(store, helds)
        @store = store
        @helds = helds
      end

      # Renews the holds that have a renewal to send; the others are looked
      # at only (a loss reported).
      def run
        sent = @helds.map(&:begin_renewal)
        due = @helds.zip(sent).select { |_, renewal| renewal }
        started = MonotonicClock.now
        results = decide(due)
        @helds.each_with_index do |held, index|
          held.conclude_renewal(sent[index], results[held], started: started)
        end
      ensure
        @helds.each(&:abandon_renewal)
      end

      private

      # @return [Hash{Held => Decision, StoreError}] by identity
      def decide(due)
        results = {}.compare_by_identity
        return results if due.empty?

        answers = begin
          @store.renew_all(due.map { |held, (token, _, _)| held.renewal_request(token) })
        rescue StoreError => e
          Array.new(due.size, e)
        end
        due.each_with_index { |(held, _), index| results[held] = answers.fetch(index) }
        results
      end
    end
  end
end
