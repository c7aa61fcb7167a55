# frozen_string_literal: true

module LeaseMachines
  module Runtime
    # The runtime's default clock: CLOCK_MONOTONIC, which no NTP step, no
    # `travel_to` and no Timecop moves.
    module MonotonicClock
      module_function

      # @return [Integer] nanoseconds from an arbitrary origin
      def now_ns
        Process.clock_gettime(Process::CLOCK_MONOTONIC, :nanosecond)
      end

      # @return [Float] seconds from the same origin
      def now
        Process.clock_gettime(Process::CLOCK_MONOTONIC)
      end

      def sleep(seconds)
        Kernel.sleep(seconds) if seconds.positive?
      end

      # Waits for a signal or `seconds`; may wake spuriously: the caller checks again.
      def wait(mutex, condition, seconds)
        condition.wait(mutex, seconds) if seconds.positive?
      end
    end
  end
end
