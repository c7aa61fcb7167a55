# frozen_string_literal: true

module LeaseMachines
  # Helpers for the users' own test suites (`require "lease_machines/testing"`).
  module Testing
    # A manual clock for tests (Timecop and `travel_to` do not move `Process.clock_gettime`). Thread-safe.
    class Clock
      REAL_RECHECK = 0.05

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

      def now_ns = @mutex.synchronize { @now_ns }

      def now = now_ns / 1_000_000_000.0

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

      def sleep(seconds)
        @mutex.synchronize do
          deadline = @now_ns + (seconds * 1_000_000_000).round
          @moved.wait(@mutex) while @now_ns < deadline
        end
      end

      def wait(mutex, condition, _seconds)
        key = [mutex, condition]
        @mutex.synchronize { @waiters[key] = true }
        condition.wait(mutex, REAL_RECHECK)
      ensure
        @mutex.synchronize { @waiters.delete(key) }
      end

      def inspect = "#<#{self.class.name} now=#{now}>"
      alias to_s inspect
    end
  end
end
