# frozen_string_literal: true

module LeaseMachines
  module Runtime
    # One `hold` call: acquire, block, release. An interrupt from outside reaches the block and the acquire's pauses,
    # never a store call nor the steps between a grant and its release: a committed grant never runs out its TTL.
    class HoldCall
      # Thread.handle_interrupt's masks, made once rather than at every hold.
      DEFERRED = { Object => :never }.freeze
      LET_IN = { Object => :immediate }.freeze

      def initialize(slots, wait, interrupt, callbacks)
        Seconds.check(:wait, wait, positive: false)
        raise TypeError, "interrupt must be true or false, got #{interrupt.inspect}" unless [true, false].include?(interrupt)

        @slots = slots
        @wait = wait
        @interrupt = interrupt
        @callbacks = callbacks
      end

      def run(&)
        Thread.handle_interrupt(DEFERRED) do
          decision, sent_at, calls = Acquisition.new(@slots, @wait).call
          next Outcome.new(false, nil, decision) unless sent_at

          held = Held.new(calls, decision.lease, sent_at, @callbacks)
          Outcome.new(true, under(held, calls.clock, &), decision)
        end
      end

      private

      def under(held, clock)
        scheduler = Scheduler.for(clock)
        begin
          held.interrupt_on_loss(Thread.current) if @interrupt
          scheduler.add(held)
          Thread.handle_interrupt(LET_IN) { yield held }
        rescue FencedError => e
          held.fenced!(reason: e.is_a?(ReissuedTokenError) ? :reissued : :fenced) if e.token == held.token
          raise
        ensure
          held.finish
          scheduler.remove(held)
          discard_late_interrupt(held) if @interrupt
        end
      end

      # `Thread.pending_interrupt?` without an argument: Ruby 3.1 crashes given a class while an exception is queued.
      def discard_late_interrupt(held)
        return unless Thread.pending_interrupt?

        Thread.handle_interrupt(LeaseLost => :immediate) { Thread.pass }
      rescue LeaseLost => e
        raise unless e.equal?(held.interrupt_error)
      end
    end
  end
end
