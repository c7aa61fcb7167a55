# frozen_string_literal: true

require "minitest/autorun"
require "logger"
require "stringio"
require "tmpdir"
require "fileutils"
require "lease_machines"
require "lease_machines/sidekiq"
require "lease_machines/active_job"
require "active_support"
require "active_support/core_ext/integer/time"

module LeaseMachines
  # The jobs of DeclarationOptionsTest.
  module DeclarationOptionsJobs
    SEEN = Queue.new

    # A runaway job: runs until its lease is lost (at most 5 s).
    class Runaway < ::ActiveJob::Base
      include LeaseMachines::ActiveJob
      leased resource: "runaway", ttl: 0.3, max_hold: 0.3

      def perform
        started = Runtime::MonotonicClock.now
        sleep 0.01 until lease.lost? || Runtime::MonotonicClock.now - started > 5
        SEEN << [lease.reason, Runtime::MonotonicClock.now - started]
      end
    end
  end

  # One vocabulary on both integrations (`on_conflict:`, `on_occupied:` its
  # older name) and `max_hold:`, checked when the class declares them.
  class DeclarationOptionsTest < Minitest::Test
    def sidekiq_job(**lease)
      klass = Class.new { include ::Sidekiq::Job }
      klass.define_singleton_method(:name) { "SidekiqReport" }
      klass.define_singleton_method(:to_s) { "SidekiqReport" }
      klass.sidekiq_options lease: { resource: "reports", **lease }
      Sidekiq.lease_option(klass)
    end

    def active_job(**lease)
      klass = Class.new(::ActiveJob::Base) { include LeaseMachines::ActiveJob }
      klass.define_singleton_method(:name) { "ActiveReport" }
      klass.leased(resource: "reports", **lease)
    end

    def both(**lease)
      [sidekiq_job(**lease), active_job(**lease)]
    end

    def test_on_conflict_has_the_same_choices_on_both_integrations
      assert_equal %i[reschedule reschedule], both.map(&:on_conflict), "the default"
      %i[reschedule discard raise].each do |choice|
        assert_equal [choice, choice], both(on_conflict: choice).map(&:on_conflict)
        assert_equal [choice, choice], both(on_conflict: choice.to_s).map(&:on_conflict)
        assert_equal [choice, choice], both(on_occupied: choice).map(&:on_conflict), "on_occupied: the older name"
      end
    end

    def test_each_integrations_older_names_mean_the_same_choice
      assert_equal :discard, sidekiq_job(on_occupied: :skip).on_conflict
      assert_equal :discard, sidekiq_job(on_conflict: :skip).on_conflict
      assert_equal :reschedule, active_job(on_occupied: :retry).on_conflict
      assert_equal :reschedule, active_job(on_conflict: "retry").on_conflict
      error = assert_raises(ArgumentError) { sidekiq_job(on_conflict: :retry) }
      assert_match(/SidekiqReport sidekiq_options lease on_conflict must be one of \[:reschedule, :discard, :raise, :skip\], /,
                   error.message)
      error = assert_raises(ArgumentError) { active_job(on_conflict: :skip) }
      assert_match(/ActiveReport leased on_conflict must be one of \[:reschedule, :discard, :raise, :retry\], got :skip/,
                   error.message)
    end

    def test_on_conflict_and_on_occupied_together_raise_naming_both
      [-> { sidekiq_job(on_conflict: :raise, on_occupied: :raise) },
       -> { active_job(on_conflict: :discard, on_occupied: :retry) }].each do |declare|
        error = assert_raises(ArgumentError) { declare.call }
        assert_match(/has both on_conflict: :\w+ \(Symbol\) and on_occupied: :\w+ \(Symbol\)/, error.message)
      end
    end

    def test_max_hold_is_seconds_or_a_duration_checked_when_declared
      assert_equal [600, 600], both(max_hold: 10.minutes).map(&:max_hold)
      assert_equal [nil, nil], both.map(&:max_hold)
      {
        { max_hold: -1 } => /max_hold must be seconds, got -1 .*max_hold must be a finite, positive number of seconds/,
        { max_hold: Float::NAN } => /max_hold must be seconds, got NaN/,
        { max_hold: "60" } => /max_hold must be seconds, got "60"/,
        { ttl: 30, max_hold: 20 } => /max_hold must be at least ttl \(30\), got 20/
      }.each do |lease, message|
        [-> { sidekiq_job(**lease) }, -> { active_job(**lease) }].each do |declare|
          error = assert_raises(StandardError, lease.inspect) { declare.call }
          assert_match message, error.message
        end
      end
    end

    # A real run on SQLite: the job that keeps running past max_hold loses
    # its lease once its TTL runs out after the last renewal.
    def test_a_job_running_past_max_hold_loses_its_lease
      Dir.mktmpdir("lm_max_hold_job") do |dir|
        ::ActiveJob::Base.logger = Logger.new(StringIO.new)
        LeaseMachines.reset_configuration!
        LeaseMachines.configure do |config|
          config.store = Stores::SQLite.new(File.join(dir, "leases.sqlite3")).setup!
          config.owner = 42
        end
        DeclarationOptionsJobs::Runaway.perform_now
        reason, lasted = DeclarationOptionsJobs::SEEN.pop

        assert_equal :max_hold, reason
        assert_operator lasted, :<, 2, "lost a TTL after the last renewal, not renewed for good"
      ensure
        LeaseMachines.reset_configuration!
      end
    end
  end
end
