# frozen_string_literal: true

module LeaseMachines
  # Helpers for the users' own test suites. Loaded by
  # `require "lease_machines/testing"`.
  module Testing
    # A manual clock for tests: time moves only when {#advance} is called, so
    # a test can say "31 seconds pass" and see a lease lost, deterministically,
    # without sleeping. Rails' `travel_to` and Timecop do not move
    # `Process.clock_gettime`, which is what the runtime reads by default; pass
    # this clock instead (`hold(clock:)`, `Stores::Memory.new(clock:)`, the
    # elector's `clock:`).
    #
    # {#sleep} and {#wait} block the calling thread until the clock has been
    # advanced far enough (or, for #wait, until signalled): they never advance
    # it themselves. Thread-safe.
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

      # Moves the clock forward, wakes every thread waiting on it and, with
      # `settle:` (the default), returns only once the renewal thread of
      # this clock has done everything that became due (at most
      # {Runtime::Scheduler::SETTLE_TIMEOUT} real seconds).
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

      # Like ConditionVariable#wait(mutex, seconds) on this clock: returns
      # when `condition` is signalled or the clock moves (the caller holds
      # `mutex` and checks again: it may return early, never late). A move
      # that lands between the caller's check and this wait is seen within
      # REAL_RECHECK seconds of real time.
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
