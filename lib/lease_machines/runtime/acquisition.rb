# frozen_string_literal: true

module LeaseMachines
  module Runtime
    # `hold`'s wait: acquire, with jittered exponential backoff spent in
    # `await_handover` when the authority has one. Under `limit:` each
    # attempt tries every slot once, from a random one on (so waiters
    # spread), and takes the first granted. Interrupts are let in during the
    # pauses only, so the outcome of every acquire sent is learned.
    class Acquisition
      # @param slots [Array<LeaseCalls>] one per slot (one without `limit:`)
      def initialize(slots, wait:, random: Random)
        @slots = slots
        @wait = wait
        @random = random
        @clock = slots.first.clock
        @ceiling = [MAX_PAUSE, slots.first.cadence.ttl / 2.0].min
        @reacquire = {} # slot => true once an acquire of it had an outcome we could not learn
      end

      MAX_PAUSE = 1.0
      FIRST_PAUSE = 0.02

      # @return [[Decision, Float or nil, LeaseCalls or nil]] the last answer,
      #   when the granting request was sent and the slot it granted (nil: not granted)
      # @raise [StoreError] when the store failed and the wait is over
      def call
        deadline = @clock.now + @wait
        pause = [FIRST_PAUSE, @ceiling].min
        loop do
          decision, sent_at, failure, calls = attempt
          return [decision, sent_at, calls] if calls

          left = deadline - @clock.now
          if left <= 0
            raise failure if failure

            return [decision, nil, nil]
          end
          idle([left, jittered(pause)].min)
          pause = [pause * 2, @ceiling].min
        end
      end

      private

      # Every slot once, from a random one on.
      # @return [[Decision or nil, Float, StoreError or nil, LeaseCalls or nil]]
      #   the granted slot's answer, or the last answer and the last failure
      def attempt
        decision = failure = nil
        first = @random.rand(@slots.size)
        @slots.rotate(first).each do |calls|
          sent_at = @clock.now
          decision = try(calls, sent_at)
          return [decision, sent_at, nil, calls] if decision&.granted?
        rescue StoreError => e
          failure = e
          @reacquire[calls] ||= e.is_a?(OutcomeUnknownError)
        end
        [decision, nil, failure, nil]
      end

      # `waited:` (for the event): seconds since the hold's first try was sent.
      def try(calls, sent_at)
        @started ||= sent_at
        calls.acquire(reacquire: @reacquire.fetch(calls, false), waited: sent_at - @started)
      end

      # Half the pause, plus up to the other half at random ("equal jitter"):
      # waiters that collided once do not collide again.
      def jittered(pause)
        (pause / 2.0) + (@random.rand * pause / 2.0)
      end

      # Waits for a release of any slot when they share a store (one wait
      # on all their names); else on one slot, at random, where a release of
      # another is seen at the pause's end.
      def idle(seconds)
        Thread.handle_interrupt(Object => :immediate) do
          next shared_store.await_handover(@names, seconds) if shared_store

          authority = @slots[@random.rand(@slots.size)].authority
          next authority.await_handover(seconds) if authority.respond_to?(:await_handover)

          @clock.sleep(seconds)
        end
      end

      # The store every slot's authority decides in, if they share one
      # (`@names`: their resources).
      def shared_store
        return @shared_store if defined?(@shared_store)

        authorities = @slots.map(&:authority)
        stores = authorities.map { |authority| authority.store if authority.respond_to?(:store) }.uniq
        @names = authorities.map(&:name) if stores.first
        @shared_store = stores.size == 1 ? stores.first : nil
      end
    end
  end
end
