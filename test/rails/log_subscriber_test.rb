# frozen_string_literal: true

require "minitest/autorun"
require "logger"
require "stringio"
require "active_support"
require "active_support/notifications"
require "lease_machines"
require "lease_machines/rails/log_subscriber"

module LeaseMachines
  # A lease event's line in the Rails log shows the hold's tags: a job's
  # lease lines name the job (`job=` and `jid=` or `job_id=`).
  class LogSubscriberTest < Minitest::Test
    # (ActiveSupport::LogSubscriber#logger is the base class's, as in a Rails app.)
    def setup
      super
      @log = StringIO.new
      ActiveSupport::LogSubscriber.logger = Logger.new(@log)
    end

    def teardown
      ActiveSupport::LogSubscriber.logger = nil
      super
    end

    def event(name, payload)
      now = Process.clock_gettime(Process::CLOCK_MONOTONIC)
      ActiveSupport::Notifications::Event.new("#{name}.lease_machines", now, now, "1", payload)
    end

    def test_a_lease_line_shows_the_holds_tags_after_its_fields
      Rails::LogSubscriber.new.lost(event(:lost, resource: "reports/nightly", owner: 7, token: 3, status: :expired,
                                                 tags: { job: "NightlyReport", jid: "4f1c" }))

      line = "lease_machines lost (0.0ms) resource=reports/nightly owner=7 token=3 status=expired job=NightlyReport jid=4f1c"
      assert_includes @log.string, "WARN -- : #{line}\n"
    end

    def test_a_write_a_fence_refused_is_a_warning
      Rails::LogSubscriber.new.fence_refused(event(:fence_refused, resource: "reports/nightly", owner: nil, token: 1,
                                                                   status: :refused, reason: :stale, highest: 2))

      line = "lease_machines fence_refused (0.0ms) resource=reports/nightly token=1 status=refused reason=stale"
      assert_includes @log.string, "WARN -- : #{line}\n"
    end

    def test_a_line_without_tags_is_as_before
      Rails::LogSubscriber.new.lost(event(:lost, resource: "reports/nightly", owner: 7, token: 3))

      assert_match(%r{lease_machines lost \(0\.0ms\) resource=reports/nightly owner=7 token=3$}, @log.string)
    end
  end
end
