# frozen_string_literal: true

module LeaseMachines
  # Helpers for the users' own test suites. Loaded by
  # `require "lease_machines/testing"`.
  module Testing
    # A manual clock for tests: time moves only when {#advance} is called
    # (Timecop and `travel_to` do not move `Process.clock_gettime`, which the
    # runtime reads). Thread-safe.
    class Clock
      # How often a waiting thread looks at the clock again, in real seconds.
      REAL_RECHECK = 0.05

      # @param start [Integer, Float] the first reading, in seconds
      def initialize(start: 0)
        unless start.is_a?(Integer) || (start.is_a?(Float) && start.finite?)
          raise TypeError, "start must be Integer or Float seconds, got #{start.inspect}"
        end
        raise ArgumentError, "start must not be negative, got #{start.inspect}" if start.negative?

        @now_ns = (start * 1_000_000_000).round
        @mutex = Mutex.new
        @moved = ConditionVariable.new
        @waiters = {}
      end

      # @return [Integer] nanoseconds
      def now_ns
        @mutex.synchronize { @now_ns }
      end

      # @return [Float] seconds
      def now
        now_ns / 1_000_000_000.0
      end

      # Moves the clock forward, wakes its waiters and, with `settle:`,
      # returns once its renewal thread has done what became due.
      # @param seconds [Integer, Float] finite, not negative
      # @return [Float] the new reading
      def advance(seconds, settle: true)
        unless (seconds.is_a?(Integer) || (seconds.is_a?(Float) && seconds.finite?)) && !seconds.negative?
          raise ArgumentError, "seconds must be a finite, non-negative Integer or Float, got #{seconds.inspect}"
        end

        waiters = @mutex.synchronize do
          @now_ns += (seconds * 1_000_000_000).round
          @moved.broadcast
          @waiters.keys
        end
        waiters.each { |mutex, condition| mutex.synchronize { condition.broadcast } }
        Runtime::Scheduler.settle(self) if settle
        now
      end

      # Blocks until the clock reads `seconds` later than now.
      def sleep(seconds)
        @mutex.synchronize do
          deadline = @now_ns + (seconds * 1_000_000_000).round
          @moved.wait(@mutex) while @now_ns < deadline
        end
      end

      # Like ConditionVariable#wait on this clock: may return early, never
      # late (a move between the caller's check and this wait is seen within
      # REAL_RECHECK real seconds).
      def wait(mutex, condition, _seconds)
        key = [mutex, condition]
        @mutex.synchronize { @waiters[key] = true }
        condition.wait(mutex, REAL_RECHECK)
      ensure
        @mutex.synchronize { @waiters.delete(key) }
      end

      def inspect
        "#<#{self.class.name} now=#{now}>"
      end
      alias to_s inspect
    end
  end
end
