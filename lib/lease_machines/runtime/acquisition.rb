# frozen_string_literal: true

module LeaseMachines
  module Runtime
    # `hold`'s wait: acquire; while occupied, pause with jittered exponential
    # backoff and try again until `wait` seconds have passed on the clock
    # (`wait: 0` tries once). A pause is spent in the authority's
    # `await_handover(seconds)` when it has one (it returns early when the
    # holder releases), else in the clock's `sleep`.
    #
    # It runs with interrupts from other threads held back (see {HoldCall}):
    # they are let in during the pauses only, never while a store call is
    # in flight, so the outcome of every acquire sent is learned.
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
        deadline = @calls.clock.now + @wait
        pause = [FIRST_PAUSE, @ceiling].min
        reacquire = false
        loop do
          sent_at = @calls.clock.now
          decision, failure = attempt(reacquire)
          return [decision, sent_at] if decision&.granted?

          reacquire ||= failure.is_a?(OutcomeUnknownError)
          left = deadline - @calls.clock.now
          if left <= 0
            raise failure if failure

            return [decision, nil]
          end
          idle([left, jittered(pause)].min)
          pause = [pause * 2, @ceiling].min
        end
      end

      private

      def attempt(reacquire)
        [@calls.acquire(reacquire: reacquire), nil]
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
