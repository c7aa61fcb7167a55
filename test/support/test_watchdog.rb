# frozen_string_literal: true

require "minitest"

module LeaseMachines
  # A test still running after LEASE_MACHINES_TEST_TIMEOUT seconds (default 300; 0 turns the watchdog off) is
  # named, with every thread's backtrace, and interrupted: it fails with {Hung} and the suite goes on. A test the
  # interrupt cannot reach ends the run (exit 124) after GRACE more seconds. A hang costs minutes, not CI's budget.
  # Every test task loads it before the test files (`-r` TEST_WATCHDOG, Rakefile; script/matrix.d/run-arm64), so it
  # watches every file whichever helper the file requires. Not a Minitest plugin: minitest 6 (sid) loads none
  # from the load path.
  #
  # The slowest tests take well under a minute here (a chaos run's test, 8 to 16 s of nemesis); GC.stress (`rake
  # test:gc_stress`) multiplies every allocation's cost, so its limit is STRESSED_FACTOR times as long.
  #
  # Its thread sleeps until the earliest deadline, woken only when a test starts: it never wakes inside a test
  # that keeps to its time, whose allocation counts (test/properties/allocation_test.rb) see every thread's objects.
  module TestWatchdog
    # Raised in a hung test's thread.
    class Hung < StandardError; end

    GRACE = 30
    STRESSED_FACTOR = 6

    @mutex = Mutex.new
    @started = ConditionVariable.new
    @running = {} # thread => [test name, started]

    class << self
      def limit
        @limit ||= begin
          seconds = Float(ENV.fetch("LEASE_MACHINES_TEST_TIMEOUT", "300"))
          ENV["LEASE_MACHINES_GC_STRESS"] == "1" ? seconds * STRESSED_FACTOR : seconds
        end
      end

      # Watches every Minitest::Test from now on, unless the limit is 0.
      def install
        Minitest::Test.prepend(EachTest) if limit.positive?
      end

      # @return [Array<String>] the names of the tests running now
      def watched = @mutex.synchronize { @running.values.map(&:first) }

      def watching(name)
        @mutex.synchronize do
          @thread ||= Thread.new { watch } # started by the first test
          @running[Thread.current] = [name, monotonic]
          @started.signal
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
          thread, name, seconds = next_overdue
          interrupt(thread, name, seconds)
        end
      end

      # Waits for a test past the limit: [thread, name, seconds it has run].
      def next_overdue
        @mutex.synchronize do
          loop do
            now = monotonic
            earliest = nil
            @running.each do |thread, (name, started)|
              return [thread, name, now - started] if now - started > limit

              earliest = started if earliest.nil? || started < earliest
            end
            @started.wait(@mutex, earliest && (earliest + limit - now))
          end
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
        sleep 1 while thread.alive? && running?(thread, name) && monotonic < deadline
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

LeaseMachines::TestWatchdog.install
