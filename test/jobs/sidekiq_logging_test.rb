# frozen_string_literal: true

require "minitest/autorun"
require "lease_machines"
require "lease_machines/sidekiq"
require "logger"
require "open3"
require "rbconfig"
require "stringio"
require "tmpdir"

module LeaseMachines
  # Takes its own lease away, so that its release is refused and logged.
  class ForceReleasedJob
    include ::Sidekiq::Job
    sidekiq_options lease: { resource: ->(args) { args[0] }, ttl: 30 }

    def perform(resource)
      LeaseMachines.configuration.store.force_release(resource)
    end
  end

  # The lease lines of a Sidekiq job name its class and jid: the job runs
  # through Sidekiq's own middleware chain with the gem's server middleware,
  # on a real SQLite store, and the gem's logger is a real Logger.
  class SidekiqLoggingTest < Minitest::Test
    def setup
      super
      @dir = Dir.mktmpdir("lm_sidekiq_logging")
      @log = StringIO.new
      LeaseMachines.configure do |config|
        config.store = Stores::SQLite.new(File.join(@dir, "leases.sqlite3")).setup!
        config.logger = Logger.new(@log)
      end
    end

    def teardown
      LeaseMachines.reset_configuration!
      FileUtils.rm_rf(@dir)
      super
    end

    def run_job(job, jid, *args)
      chain = ::Sidekiq::Middleware::Chain.new
      chain.add Sidekiq::ServerMiddleware
      job.jid = jid
      payload = { "class" => job.class.name, "jid" => jid, "args" => args, "queue" => "default" }
      chain.invoke(job, payload, "default") { job.perform(*args) }
    end

    def test_a_refused_release_is_logged_with_the_job_class_and_jid
      released = []
      subscriber = LeaseMachines.subscribe { |event, payload| released << payload[:tags] if event == :release }
      run_job(ForceReleasedJob.new, "4f1c9a", "reports/sunday")

      subject = 'releasing "reports/sunday" job=LeaseMachines::ForceReleasedJob jid=4f1c9a'
      assert_match(/WARN -- : lease_machines: #{subject} \(token \d+\) was refused: stale_token/, @log.string)
      assert_equal [{ job: "LeaseMachines::ForceReleasedJob", jid: "4f1c9a" }], released
    ensure
      LeaseMachines.unsubscribe(subscriber) if subscriber
    end

    # In processes of their own: whether Sidekiq is loaded decides the
    # default (here, where Sidekiq is installed; not in test/unit, which runs
    # where it is not).
    def test_the_default_logger_is_sidekiqs_when_sidekiq_is_loaded_else_one_on_stderr
      plain = 'require "lease_machines"; LeaseMachines.configuration.logger.warn("lease_machines: plain")'
      sidekiq = 'require "sidekiq"; require "lease_machines"; ' \
                "print LeaseMachines.configuration.logger.equal?(Sidekiq.logger)"
      out, err, status = Open3.capture3(RbConfig.ruby, "-I", File.expand_path("../../lib", __dir__), "-e", plain)

      assert_predicate status, :success?, err
      assert_empty out
      assert_match(/WARN -- : lease_machines: plain/, err)
      out, err, = Open3.capture3(RbConfig.ruby, "-I", File.expand_path("../../lib", __dir__), "-e", sidekiq)

      assert_equal "true", out, err
    end
  end
end
