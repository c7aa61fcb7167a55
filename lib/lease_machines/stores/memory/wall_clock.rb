# frozen_string_literal: true

module LeaseMachines
  module Stores
    class Memory < Store
      # The default clock of {Memory}: the wall clock, read in whole milliseconds as the durable stores do.
      module WallClock
        module_function

        def now_ns = Process.clock_gettime(Process::CLOCK_REALTIME, :millisecond) * NANOS_PER_MILLISECOND

        def wait(mutex, condition, seconds)
          condition.wait(mutex, seconds) if seconds.positive?
        end
      end
    end
  end
end
