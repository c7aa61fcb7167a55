# frozen_string_literal: true

module LeaseMachines
  module Runtime
    # `hold`'s wait: acquire, with jittered exponential backoff spent in
    # `await_handover` when the authority has one. Interrupts are let in
    # during the pauses only, so the outcome of every acquire sent is learned.
    class Acquisition
      def initialize(calls, wait:, random: Random)
        @calls = calls
        @wait = wait
        @random = random
        @ceiling = [MAX_PAUSE, calls.cadence.ttl / 2.0].min
      end

      MAX_PAUSE = 1.0
      FIRST_PAUSE = 0.02

      # @return [[Decision, Float or nil]] the last answer, and when the
      #   granting request was sent (nil: not granted)
      # @raise [StoreError] when the store failed and the wait is over
      def call
        started = sent_at = @calls.clock.now
        deadline = started + @wait
        pause = [FIRST_PAUSE, @ceiling].min
        reacquire = false
        loop do
          decision, failure = attempt(reacquire, sent_at - started)
          return [decision, sent_at] if decision&.granted?

          reacquire ||= failure.is_a?(OutcomeUnknownError)
          left = deadline - @calls.clock.now
          if left <= 0
            raise failure if failure

            return [decision, nil]
          end
          idle([left, jittered(pause)].min)
          pause = [pause * 2, @ceiling].min
          sent_at = @calls.clock.now
        end
      end

      private

      def attempt(reacquire, waited)
        [@calls.acquire(reacquire: reacquire, waited: waited), nil]
      rescue StoreError => e
        [nil, e]
      end

      # Half the pause, plus up to the other half at random ("equal jitter"):
      # waiters that collided once do not collide again.
      def jittered(pause)
        (pause / 2.0) + (@random.rand * pause / 2.0)
      end

      def idle(seconds)
        authority = @calls.authority
        Thread.handle_interrupt(Object => :immediate) do
          next authority.await_handover(seconds) if authority.respond_to?(:await_handover)

          @calls.clock.sleep(seconds)
        end
      end
    end
  end
end
