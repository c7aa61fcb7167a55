# frozen_string_literal: true

module LeaseMachines
  module Runtime
    # `hold`'s wait: acquire with jittered backoff. Interrupts are let in during the pauses only, so the outcome of
    # every acquire sent is learned.
    class Acquisition
      def initialize(slots, wait, random = Random)
        @slots = slots
        @wait = wait
        @random = random
        @clock = slots.first.clock
        @reacquire = nil # slot => true once an acquire of it had an outcome we could not learn
      end

      MAX_PAUSE = 1.0
      FIRST_PAUSE = 0.02

      # The wait counts from the first acquire sent. Most holds are granted at the first attempt, which sets
      # nothing up for a wait.
      def call
        decision, sent_at, failure, calls = attempt
        return [decision, sent_at, calls] if calls

        waited(decision, failure)
      end

      private

      def waited(decision, failure)
        ceiling = [MAX_PAUSE, @slots.first.cadence.ttl / 2.0].min
        pause = [FIRST_PAUSE, ceiling].min
        loop do
          left = @started + @wait - @clock.now
          if left <= 0
            raise failure if failure

            return [decision, nil, nil]
          end
          idle([left, jittered(pause)].min)
          pause = [pause * 2, ceiling].min
          decision, sent_at, failure, calls = attempt
          return [decision, sent_at, calls] if calls
        end
      end

      # Each slot in turn, from a random one, until one is granted. A `while`, not `each`: a `return` from a block
      # unwinds through it, about a microsecond of every hold.
      def attempt
        decision = failure = nil
        order = @slots.size == 1 ? @slots : @slots.rotate(@random.rand(@slots.size))
        index = 0
        while (calls = order[index])
          index += 1
          begin
            sent_at = @clock.now
            decision = acquire(calls, sent_at)
            return [decision, sent_at, nil, calls] if decision&.granted?
          rescue StoreError => e
            failure = e
            (@reacquire ||= {})[calls] ||= e.is_a?(OutcomeUnknownError)
          end
        end
        [decision, nil, failure, nil]
      end

      def acquire(calls, sent_at)
        @started ||= sent_at
        calls.acquire(reacquire: @reacquire&.fetch(calls, false) || false, waited: sent_at - @started)
      end

      def jittered(pause) = (pause / 2.0) + (@random.rand * pause / 2.0)

      def idle(seconds)
        Thread.handle_interrupt(HoldCall::LET_IN) do
          next shared_store.await_handover(@slots.map { |calls| calls.authority.name }, seconds) if shared_store

          authority = @slots[@random.rand(@slots.size)].authority
          next authority.await_handover(seconds) if authority.respond_to?(:await_handover)

          @clock.sleep(seconds)
        end
      end

      # All slots on one store: wait for a handover on any. Asked on the first wait only: most holds never wait.
      def shared_store
        return @shared_store if defined?(@shared_store)

        stores = @slots.map(&:renewal_store).uniq
        @shared_store = (stores.first if stores.size == 1)
      end
    end
  end
end
