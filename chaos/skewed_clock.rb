# frozen_string_literal: true

module Chaos
  # The holder's clock in trouble: a runtime clock (the four calls `hold`'s
  # `clock:` takes) that runs at `scale` times real time and can jump
  # forward. A slow clock makes the holder believe in its lease for longer
  # than the store does, which is what the fence is for; a jump makes it
  # believe its lease ended early. Thread-safe; changed by the worker's
  # signal handler at the nemesis's request.
  class SkewedClock
    attr_reader :scale

    def initialize
      @mutex = Mutex.new
      @base_real = real
      @base_reading = @base_real
      @scale = 1.0
    end

    def now_ns
      (now * 1_000_000_000).to_i
    end

    def now
      @mutex.synchronize { reading(real) }
    end

    def sleep(seconds)
      Kernel.sleep(seconds / @scale) if seconds.positive?
    end

    def wait(mutex, condition, seconds)
      condition.wait(mutex, seconds / @scale) if seconds.positive?
    end

    # From now on the clock runs at `scale` times real time.
    def scale=(scale)
      unless scale.is_a?(Float) && scale.positive? && scale.finite?
        raise ArgumentError,
              "scale must be a positive finite Float, got #{scale.inspect}"
      end

      @mutex.synchronize do
        now = real
        @base_reading = reading(now)
        @base_real = now
        @scale = scale
      end
    end

    # The clock jumps `seconds` forward.
    def jump(seconds)
      unless seconds.positive?
        raise ArgumentError,
              "a jump must be forward (a positive number of seconds), got #{seconds.inspect}"
      end

      @mutex.synchronize { @base_reading += seconds }
    end

    private

    def reading(real_now)
      @base_reading + ((real_now - @base_real) * @scale)
    end

    def real
      Process.clock_gettime(Process::CLOCK_MONOTONIC)
    end
  end
end
