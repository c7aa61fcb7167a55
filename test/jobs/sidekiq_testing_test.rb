# frozen_string_literal: true

require "minitest/autorun"
require "concurrent/array"
require "logger"
require "tmpdir"
require "fileutils"
require "lease_machines"
# Sidekiq 6.4's perform_inline finds the job's class with ActiveSupport's
# String#constantize, as in a Rails app.
require "active_support/core_ext/string/inflections"
require "lease_machines/sidekiq/testing"
require_relative "../support/quiet_sidekiq"

# Loading sidekiq/testing switched every push in this process to fake!;
# test/jobs/sidekiq_test.rb, in the same `rake test` process, pushes to a
# real Redis. Each test below picks its mode with the block form.
Sidekiq::Testing.disable!

module LeaseMachines
  # The jobs of SidekiqTestingTest (named: Sidekiq::Testing finds a job's
  # class by its name).
  module SidekiqTestingJobs
    PERFORMED = Concurrent::Array.new

    # Records the token it was given and what the store said while it ran.
    class Report
      include ::Sidekiq::Worker
      sidekiq_options lease: { resource: ->(args) { "reports/#{args[0]}" }, ttl: 30, on_occupied: :raise }

      def perform(day)
        status = LeaseMachines.configuration.store.status("reports/#{day}")
        PERFORMED << { day: day, token: lease.token, held_by: status.lease&.token }
      end
    end

    # Declares no lease.
    class Plain
      include ::Sidekiq::Worker

      def perform = lease
    end
  end

  # Sidekiq's own test modes (Sidekiq::Testing inline!, fake! + drain,
  # perform_inline) with the real sidekiq gem, the lease in a real SQLite
  # store: they run the leased job's middleware, as a sidekiq process does.
  class SidekiqTestingTest < Minitest::Test
    Report = SidekiqTestingJobs::Report

    def setup
      super
      @dir = Dir.mktmpdir("lm_sidekiq_testing")
      QuietSidekiq.logger!
      LeaseMachines.reset_configuration!
      LeaseMachines.configure do |config|
        config.store = Stores::SQLite.new(File.join(@dir, "leases.sqlite3")).setup!
        config.owner = 42
      end
      @store = LeaseMachines.configuration.store
      SidekiqTestingJobs::PERFORMED.clear
    end

    def teardown
      ::Sidekiq::Worker.clear_all
      LeaseMachines.reset_configuration!
      FileUtils.rm_rf(@dir)
      super
    end

    def test_inline_runs_the_job_under_its_lease_and_releases_it
      ::Sidekiq::Testing.inline! { Report.perform_async("monday") }

      assert_ran_under_its_lease("monday")
    end

    def test_fake_then_drain_runs_the_job_under_its_lease
      ::Sidekiq::Testing.fake! do
        Report.perform_async("tuesday")

        assert_empty SidekiqTestingJobs::PERFORMED, "fake! only enqueues"
        assert_equal 1, Report.jobs.size
        Report.drain
      end

      assert_ran_under_its_lease("tuesday")
    end

    def test_drain_all_runs_every_queued_job_under_its_lease
      ::Sidekiq::Testing.fake! do
        Report.perform_async("wednesday")
        Report.perform_async("thursday")
        ::Sidekiq::Worker.drain_all
      end

      assert_ran_under_its_lease("wednesday", "thursday")
    end

    def test_perform_inline_runs_the_job_under_its_lease
      Report.perform_inline("friday")

      assert_ran_under_its_lease("friday")
    end

    # Calling perform directly is Sidekiq's unit test of perform alone, with
    # no middleware: a job that declares a lease is told so by name.
    def test_perform_called_directly_says_the_lease_is_held_only_through_sidekiq
      error = assert_raises(NotLeasedError) { Report.new.perform("sunday") }

      assert_match(/Report declares a lease, but its perform was called directly/, error.message)
      assert_includes error.message, "lease_machines/sidekiq/testing"
      assert_empty SidekiqTestingJobs::PERFORMED
    end

    def test_perform_called_directly_on_a_job_without_a_lease_has_none
      assert_nil SidekiqTestingJobs::Plain.new.perform
    end

    def test_a_resource_another_owner_holds_is_refused_in_inline_mode
      @store.authority("reports/saturday").acquire(owner: 7, ttl: 60)

      error = assert_raises(Occupied) { ::Sidekiq::Testing.inline! { Report.perform_async("saturday") } }
      assert_equal "reports/saturday", error.resource
      assert_empty SidekiqTestingJobs::PERFORMED, "perform did not run"
    end

    private

    def assert_ran_under_its_lease(*days)
      performed = SidekiqTestingJobs::PERFORMED

      assert_equal(days, performed.map { |run| run[:day] })
      performed.each do |run|
        assert_kind_of Integer, run[:token]
        assert_equal run[:token], run[:held_by], "the store granted the job the token it was given"
        refute_predicate @store.status("reports/#{run[:day]}"), :held?, "released when perform returned"
      end
    end
  end
end
