# frozen_string_literal: true

module LeaseMachines
  module Runtime
    # One `hold` call: acquire, run the block under the renewal thread,
    # release.
    #
    # An exception raised into the thread from outside (`Thread#kill`,
    # `Timeout`, `Thread#raise`) reaches the block, and the acquire's pauses
    # while it waits, but never a store call nor the steps between a grant
    # and the `ensure` that releases it: it waits until the answer is in,
    # the grant is released, and then goes on its way. A grant that
    # committed is never left behind to run out its TTL, and only a lease
    # this hold was granted is ever released.
    class HoldCall
      def initialize(calls, wait:, interrupt:, callbacks:)
        Seconds.check(:wait, wait, positive: false)
        raise TypeError, "interrupt must be true or false, got #{interrupt.inspect}" unless [true, false].include?(interrupt)

        @calls = calls
        @wait = wait
        @interrupt = interrupt
        @callbacks = callbacks
      end

      # @return [Outcome]
      def run(&)
        Thread.handle_interrupt(Object => :never) do
          decision, sent_at = Acquisition.new(@calls, wait: @wait).call
          next Outcome.new(held: false, value: nil, decision: decision) unless sent_at

          held = Held.new(calls: @calls, lease: decision.lease, sent_at: sent_at, cadence: @calls.cadence,
                          callbacks: @callbacks)
          Outcome.new(held: true, value: under(held, &), decision: decision)
        end
      end

      private

      # Runs the block while the scheduler renews (called with interrupts
      # held back: the block is where they are let in). LeaseLost from the
      # renewal thread (interrupt: true) reaches the block only while it runs. One
      # that lands after the block ended (it is held back while the lease is
      # released) is taken out of the thread's queue before it could replace
      # the block's outcome: its value, its own error or its throw is what the
      # caller gets.
      def under(held)
        scheduler = Scheduler.for(@calls.clock)
        begin
          held.interrupt(Thread.current) if @interrupt
          scheduler.add(held)
          Thread.handle_interrupt(Object => :immediate) { yield held }
        rescue FencedError => e
          held.fenced! if e.token == held.token # a fence refused this lease's token: terminal
          raise
        ensure
          held.finish
          scheduler.remove(held)
          discard_late_interrupt(held) if @interrupt
        end
      end

      # Receives a LeaseLost still pending for this thread: ours is dropped,
      # another hold's (an outer one of the same thread) goes on its way.
      # (`Thread.pending_interrupt?` without an argument: Ruby 3.1 crashes
      # when given a class while an exception object is queued.)
      def discard_late_interrupt(held)
        return unless Thread.pending_interrupt?

        Thread.handle_interrupt(LeaseLost => :immediate) { Thread.pass }
      rescue LeaseLost => e
        raise unless e.equal?(held.interrupt_error)
      end
    end
  end
end
