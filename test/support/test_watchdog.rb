# frozen_string_literal: true

module LeaseMachines
  # A test still running after LEASE_MACHINES_TEST_TIMEOUT seconds (default 300; 0 turns the watchdog off) is
  # named, with every thread's backtrace, and interrupted: it fails with {Hung} and the suite goes on. A test the
  # interrupt cannot reach ends the run (exit 124) after GRACE more seconds. A hang costs minutes, not CI's budget.
  # Minitest loads it as a plugin (test/minitest/lease_machines_watchdog_plugin.rb), so every test task with `test`
  # on its load path has it, whichever helper its files require.
  #
  # The slowest tests take well under a minute here (a chaos run's test, 8 to 16 s of nemesis); GC.stress (`rake
  # test:gc_stress`) multiplies every allocation's cost, so its limit is STRESSED_FACTOR times as long.
  module TestWatchdog
    # Raised in a hung test's thread.
    class Hung < StandardError; end

    GRACE = 30
    STRESSED_FACTOR = 6
    POLL = 1

    @mutex = Mutex.new
    @running = {} # thread => [test name, started]

    class << self
      def limit
        seconds = Float(ENV.fetch("LEASE_MACHINES_TEST_TIMEOUT", "300"))
        ENV["LEASE_MACHINES_GC_STRESS"] == "1" ? seconds * STRESSED_FACTOR : seconds
      end

      def watching(name)
        @mutex.synchronize do
          @running[Thread.current] = [name, monotonic]
          @thread ||= Thread.new { watch }
        end
        yield
      ensure
        @mutex.synchronize { @running.delete(Thread.current) }
      end

      private

      def monotonic = Process.clock_gettime(Process::CLOCK_MONOTONIC)

      def watch
        Thread.current.name = "test watchdog"
        Thread.current.report_on_exception = true
        loop do
          sleep POLL
          overdue.each { |thread, name, seconds| interrupt(thread, name, seconds) }
        end
      end

      def overdue
        now = monotonic
        @mutex.synchronize do
          @running.filter_map { |thread, (name, started)| [thread, name, now - started] if now - started > limit }
        end
      end

      def interrupt(thread, name, seconds)
        warn format("\n%<name>s has run for %<seconds>.0f s (LEASE_MACHINES_TEST_TIMEOUT: %<limit>.0f s): " \
                    "interrupting it. Every thread:", name: name, seconds: seconds, limit: limit)
        Thread.list.each do |each|
          warn "--- #{each.inspect}\n  #{(each.backtrace || ['(no backtrace)']).first(40).join("\n  ")}"
        end
        thread.raise(Hung, "#{name} ran past #{limit.round} s (LEASE_MACHINES_TEST_TIMEOUT); its backtrace is above")
        deadline = monotonic + GRACE
        sleep POLL while thread.alive? && running?(thread, name) && monotonic < deadline
        return unless thread.alive? && running?(thread, name)

        warn "#{name} did not end #{GRACE} s after it was interrupted: the run ends here"
        $stderr.flush
        exit!(124)
      end

      def running?(thread, name) = @mutex.synchronize { @running.dig(thread, 0) == name }
    end

    # Prepended to Minitest::Test.
    module EachTest
      def run = TestWatchdog.watching("#{self.class.name}##{name}") { super }
    end
  end
end
