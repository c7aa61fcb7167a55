# frozen_string_literal: true

# Minitest requires every minitest/*_plugin.rb on the load path before a run and calls its plugin_*_init:
# with `test` on the load path (every test task's -Itest), each test runs under {LeaseMachines::TestWatchdog}.
require_relative "../support/test_watchdog"

# Minitest's plugin hook.
module Minitest
  def self.plugin_lease_machines_watchdog_init(_options)
    return unless LeaseMachines::TestWatchdog.limit.positive?

    Minitest::Test.prepend(LeaseMachines::TestWatchdog::EachTest)
    LeaseMachines::TestWatchdog.start
  end
end
