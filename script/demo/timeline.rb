# frozen_string_literal: true

module LeaseMachinesDemo
  # The story's timeline, printed as it happens by every process of the demo:
  # real elapsed time since the story began (CLOCK_MONOTONIC is one clock for
  # the whole machine, so a forked worker's times line up with the
  # supervisor's), who, and what.
  class Timeline
    def initialize(out, started = Process.clock_gettime(Process::CLOCK_MONOTONIC))
      @out = out
      @started = started
    end

    # Seconds since the story began.
    def elapsed
      Process.clock_gettime(Process::CLOCK_MONOTONIC) - @started
    end

    def say(who, text)
      @out.write(format("t=%<time>5.2fs  %<who>-10s  %<text>s\n", time: elapsed, who: who, text: text))
      @out.flush
    end

    def heading(text)
      @out.write("\n#{text}\n")
      @out.flush
    end
  end
end
