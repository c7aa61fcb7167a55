# frozen_string_literal: true

module LeaseMachines
  module Runtime
    # The runtime's default clock: CLOCK_MONOTONIC, which no NTP step, no `travel_to` and no Timecop moves.
    module MonotonicClock
      module_function

      def now_ns = Process.clock_gettime(Process::CLOCK_MONOTONIC, :nanosecond)

      def now = Process.clock_gettime(Process::CLOCK_MONOTONIC)

      def sleep(seconds)
        Kernel.sleep(seconds) if seconds.positive?
      end

      def wait(mutex, condition, seconds)
        condition.wait(mutex, seconds) if seconds.positive?
      end
    end
  end
end
