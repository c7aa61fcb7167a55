# frozen_string_literal: true

module LeaseMachines
  module Runtime
    # One `hold` call: acquire, run the block under the renewal thread,
    # release.
    class Hold
      def initialize(claim, wait:, interrupt:, callbacks:)
        unless (wait.is_a?(Integer) || (wait.is_a?(Float) && wait.finite?)) && !wait.negative?
          raise ArgumentError, "wait must be a finite, non-negative number of seconds, got #{wait.inspect}"
        end
        raise TypeError, "interrupt must be true or false, got #{interrupt.inspect}" unless [true, false].include?(interrupt)

        @claim = claim
        @wait = wait
        @interrupt = interrupt
        @callbacks = callbacks
      end

      # @return [Outcome]
      def run(&)
        decision, sent_at = Acquisition.new(@claim, wait: @wait).call
        return Outcome.new(held: false, value: nil, decision: decision) unless sent_at

        held = Held.new(claim: @claim, lease: decision.lease, sent_at: sent_at, cadence: @claim.cadence,
                        callbacks: @callbacks)
        Outcome.new(held: true, value: under(held, &), decision: decision)
      end

      private

      # Runs the block while the scheduler renews. LeaseLost from the renewal
      # thread (interrupt: true) reaches the block only while it runs; one
      # that arrives after the block returned is dropped (the block finished
      # its work; the lease being lost then changes nothing).
      def under(held)
        completed = false
        value = nil
        scheduler = Scheduler.for(@claim.clock)
        Thread.handle_interrupt(LeaseLost => :never) do
          held.interrupt(Thread.current) if @interrupt
          scheduler.add(held)
          value = Thread.handle_interrupt(LeaseLost => :immediate) { yield held }
          completed = true
        ensure
          held.finish
          scheduler.remove(held)
        end
        value
      rescue LeaseLost => e
        raise unless completed && @interrupt && e.equal?(held.interrupt_error)

        value
      end
    end
  end
end
