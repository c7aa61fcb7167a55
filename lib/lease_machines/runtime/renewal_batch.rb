# frozen_string_literal: true

module LeaseMachines
  module Runtime
    # The holds of one store that came due in the same tick, renewed with one {Stores::BatchRenewal#renew_all}.
    class RenewalBatch
      def initialize(store, helds)
        @store = store
        @helds = helds
      end

      def run
        sent = @helds.map(&:begin_renewal)
        due = @helds.zip(sent).select { |_, renewal| renewal }
        started = MonotonicClock.now
        results = decide(due)
        @helds.each_with_index { |held, index| held.conclude_renewal(sent[index], results[held], started: started) }
      ensure
        @helds.each(&:abandon_renewal)
      end

      private

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
