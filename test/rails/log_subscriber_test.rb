# frozen_string_literal: true

require "minitest/autorun"
require "open3"
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

    # ActiveSupport 7.1 and later silence a log subscriber's event below the logger's level, and a hold then builds
    # no event for it; 6.1 and 7.0 have no such levels, and the subscriber hears every event. In a Ruby of its own:
    # attaching it here would make every other test's holds build their events.
    def test_the_routine_events_are_built_only_when_the_log_shows_them
      output, status = Open3.capture2e(RbConfig.ruby, "-I", File.expand_path("../../lib", __dir__), "-e", <<~RUBY)
        require "logger"
        require "active_support"
        require "active_support/notifications"
        require "lease_machines"
        require "lease_machines/rails/log_subscriber"
        ActiveSupport::LogSubscriber.logger = Logger.new(File::NULL, level: Logger::INFO)
        LeaseMachines::Rails::LogSubscriber.attach_to :lease_machines
        heard = -> { %i[acquire release lost elected].select { |name| LeaseMachines::Events.listened?(name) } }
        p heard.call
        ActiveSupport::LogSubscriber.logger.level = Logger::DEBUG
        p heard.call
        ActiveSupport::LogSubscriber.logger.level = Logger::ERROR
        p heard.call
      RUBY
      assert_predicate status, :success?, output
      every = "[:acquire, :release, :lost, :elected]"
      expected = if ActiveSupport::LogSubscriber.respond_to?(:subscribe_log_level, true)
                   ["[:lost, :elected]", every, "[:lost]"]
                 else
                   [every, every, every]
                 end
      assert_equal expected, output.lines(chomp: true)
    end

    def test_a_line_without_tags_is_as_before
      Rails::LogSubscriber.new.lost(event(:lost, resource: "reports/nightly", owner: 7, token: 3))

      assert_match(%r{lease_machines lost \(0\.0ms\) resource=reports/nightly owner=7 token=3$}, @log.string)
    end
  end
end
