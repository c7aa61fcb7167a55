# frozen_string_literal: true

require "open3"
require "tmpdir"
require_relative "../test_helper"

module LeaseMachines
  # The suite's own watchdog (test/support/test_watchdog.rb), which every test task loads with `-r`
  # (TEST_WATCHDOG, Rakefile): a hung test is named, interrupted and failed, and the tests after it still run.
  # This file does not load it: the first test fails in any task that leaves it out.
  class TestWatchdogTest < Minitest::Test
    CHILD_LIMIT = 60
    HUNG_SUITE = <<~RUBY
      require "minitest/autorun"
      class HangingTest < Minitest::Test
        i_suck_and_my_tests_are_order_dependent!
        def test_1_waits_forever = sleep(3600)
        def test_2_runs_after = assert(true)
      end
    RUBY

    def test_this_suite_runs_under_the_watchdog
      assert defined?(LeaseMachines::TestWatchdog::EachTest), "the task did not load support/test_watchdog (-r)"
      watchdog = LeaseMachines::TestWatchdog
      # LEASE_MACHINES_TEST_TIMEOUT=0 turns it off: then it must watch nothing.
      assert_equal watchdog.limit.positive?, Minitest::Test < watchdog::EachTest || false
      assert_equal watchdog.limit.positive?, watchdog.watched.include?("#{self.class.name}##{name}")
    end

    def test_a_hung_test_is_named_interrupted_and_the_suite_goes_on
      out, status = run_suite(HUNG_SUITE, "LEASE_MACHINES_TEST_TIMEOUT" => "2")

      refute_predicate status, :success?
      assert_match(/HangingTest#test_1_waits_forever has run for \d+ s .*interrupting it/, out)
      assert_match(/TestWatchdog::Hung: HangingTest#test_1_waits_forever ran past 2 s/, out)
      assert_match(/in [`'](Kernel#)?sleep'/, out, "the hung thread's backtrace is printed")
      assert_match(/HangingTest#test_2_runs_after = [\d.]+ s = \./, out)
      assert_match(/2 runs, 1 assertions, 0 failures, 1 errors/, out)
    end

    def test_a_timeout_of_zero_turns_it_off
      out, status = run_suite(HUNG_SUITE.sub("sleep(3600)", "sleep(3)"), "LEASE_MACHINES_TEST_TIMEOUT" => "0")

      assert_predicate status, :success?, out
      refute_match(/interrupting it/, out)
    end

    private

    def run_suite(source, env)
      Dir.mktmpdir("lm_watchdog") do |dir|
        file = File.join(dir, "hanging_test.rb")
        File.write(file, source)
        test_dir = File.expand_path("..", __dir__)
        env = env.merge("LEASE_MACHINES_GC_STRESS" => nil) # its limit as given, also under test:gc_stress
        Open3.popen2e(env, RbConfig.ruby, "-I#{test_dir}", "-rsupport/test_watchdog", file, "-v") do |_stdin, output, waiter|
          reader = Thread.new { output.read }
          # Without the watchdog the child hangs: stopped here, so that the test fails rather than hangs.
          Process.kill(:KILL, waiter.pid) unless waiter.join(CHILD_LIMIT)
          [reader.value, waiter.value]
        end
      end
    end
  end
end
