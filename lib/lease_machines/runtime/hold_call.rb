# frozen_string_literal: true

module LeaseMachines
  module Runtime
    # One `hold` call: acquire, run the block under the renewal thread,
    # release. An interrupt from outside (Thread#kill, Timeout) reaches the
    # block and the acquire's pauses, never a store call nor the steps
    # between a grant and its release: a committed grant is never left to
    # run out its TTL.
    class HoldCall
      # @param slots [Array<LeaseCalls>] one per slot the hold may take (one without `limit:`)
      def initialize(slots, wait:, interrupt:, callbacks:)
        Seconds.check(:wait, wait, positive: false)
        raise TypeError, "interrupt must be true or false, got #{interrupt.inspect}" unless [true, false].include?(interrupt)

        @slots = slots
        @wait = wait
        @interrupt = interrupt
        @callbacks = callbacks
      end

      # @return [Outcome]
      def run(&)
        Thread.handle_interrupt(Object => :never) do
          decision, sent_at, calls = Acquisition.new(@slots, wait: @wait).call
          next Outcome.new(held: false, value: nil, decision: decision) unless sent_at

          held = Held.new(calls: calls, lease: decision.lease, sent_at: sent_at, cadence: calls.cadence,
                          callbacks: @callbacks)
          Outcome.new(held: true, value: under(held, calls.clock, &), decision: decision)
        end
      end

      private

      # Runs the block while the scheduler renews (interrupts are let in only
      # here). A LeaseLost that lands after the block ended is taken out of
      # the queue before it could replace the block's outcome.
      def under(held, clock)
        scheduler = Scheduler.for(clock)
        begin
          held.interrupt(Thread.current) if @interrupt
          scheduler.add(held)
          Thread.handle_interrupt(Object => :immediate) { yield held }
        rescue FencedError => e
          # a fence refused this lease's token: terminal
          held.fenced!(reason: e.is_a?(ReissuedTokenError) ? :reissued : :fenced) if e.token == held.token
          raise
        ensure
          held.finish
          scheduler.remove(held)
          discard_late_interrupt(held) if @interrupt
        end
      end

      # Ours is dropped, an outer hold's goes on. (`Thread.pending_interrupt?`
      # without an argument: Ruby 3.1 crashes given a class while an exception object is queued.)
      def discard_late_interrupt(held)
        return unless Thread.pending_interrupt?

        Thread.handle_interrupt(LeaseLost => :immediate) { Thread.pass }
      rescue LeaseLost => e
        raise unless e.equal?(held.interrupt_error)
      end
    end
  end
end
