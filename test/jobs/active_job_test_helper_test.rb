# frozen_string_literal: true

require "minitest/autorun"
require "concurrent/array"
require "logger"
require "stringio"
require "tmpdir"
require "fileutils"
require "lease_machines"
require "lease_machines/active_job"
require "lease_machines/testing"
require "active_job/test_helper"

module LeaseMachines
  # The jobs of ActiveJobTestHelperTest.
  module ActiveJobTestHelperJobs
    PERFORMED = Concurrent::Array.new

    # Records its token and what the store said while it ran; retried when held.
    class Report < ::ActiveJob::Base
      include LeaseMachines::ActiveJob
      leased resource: ->(job) { "reports/#{job.arguments.first}" }, ttl: 30, on_occupied: :retry, reschedule_in: 5

      def perform(day)
        status = LeaseMachines.configuration.store? && LeaseMachines.configuration.store.status("reports/#{day}")
        PERFORMED << { day: day, token: lease.token, held_by: status && status.lease&.token }
      end
    end

    # Fails its first run; retry_on enqueues it again (a new job instance,
    # the same arguments). Records the resource and token of each run.
    class RetriedReport < ::ActiveJob::Base
      include LeaseMachines::ActiveJob
      leased resource: ->(job) { "reports/#{job.arguments.first}" }
      retry_on RuntimeError, wait: ->(_executions) { 0 }, attempts: 2

      def perform(day)
        PERFORMED << { day: day, resource: lease.resource, token: lease.token, job_id: job_id }
        raise "the first run fails" if executions == 1
      end
    end
  end

  # ActiveJob's test adapter, as a Rails test uses it (ActiveJob::TestHelper:
  # perform_enqueued_jobs, assert_enqueued_with), with the lease in a real
  # SQLite store.
  class ActiveJobTestHelperTest < Minitest::Test
    include ::ActiveJob::TestHelper

    Report = ActiveJobTestHelperJobs::Report

    def setup
      super
      @dir = Dir.mktmpdir("lm_active_job_test_helper")
      ::ActiveJob::Base.logger = Logger.new(StringIO.new)
      LeaseMachines.reset_configuration!
      LeaseMachines.configure do |config|
        config.store = Stores::SQLite.new(File.join(@dir, "leases.sqlite3")).setup!
        config.owner = 42
      end
      @store = LeaseMachines.configuration.store
      ActiveJobTestHelperJobs::PERFORMED.clear
    end

    def teardown
      Testing.disable!
      LeaseMachines.reset_configuration!
      FileUtils.rm_rf(@dir)
      super
    end

    def test_perform_enqueued_jobs_runs_the_job_under_its_lease
      perform_enqueued_jobs { Report.perform_later("monday") }

      assert_equal 1, ActiveJobTestHelperJobs::PERFORMED.size
      run = ActiveJobTestHelperJobs::PERFORMED.first
      assert_kind_of Integer, run[:token]
      assert_equal run[:token], run[:held_by], "the store granted the job the token it was given"
      refute_predicate @store.status("reports/monday"), :held?, "released when perform returned"
    end

    def test_enqueued_then_performed_runs_under_its_lease
      Report.perform_later("tuesday")

      assert_enqueued_jobs 1
      perform_enqueued_jobs

      assert_equal(["tuesday"], ActiveJobTestHelperJobs::PERFORMED.map { |run| run[:day] })
      assert_equal 1, @store.status("reports/tuesday").checkpoint.last_issued
    end

    def test_a_held_resource_retries_the_job_on_the_test_adapter
      @store.authority("reports/wednesday").acquire(owner: 7, ttl: 60)
      Report.perform_later("wednesday")
      perform_enqueued_jobs

      assert_empty ActiveJobTestHelperJobs::PERFORMED
      assert_enqueued_with(job: Report, args: ["wednesday"])
    end

    def test_bypass_runs_the_enqueued_job_under_a_lease_without_the_store
      LeaseMachines.reset_configuration!
      Testing.bypass { perform_enqueued_jobs { Report.perform_later("thursday") } }

      assert_equal(["thursday"], ActiveJobTestHelperJobs::PERFORMED.map { |run| run[:day] })
      assert_operator ActiveJobTestHelperJobs::PERFORMED.first[:token], :>=, 1
    end

    # The key is computed from the job's arguments on every run, so a retry
    # names the same resource and takes its lease again (the next token).
    def test_a_retried_job_takes_the_lease_of_the_same_resource_again
      perform_enqueued_jobs { ActiveJobTestHelperJobs::RetriedReport.perform_later("saturday") }
      runs = ActiveJobTestHelperJobs::PERFORMED

      assert_equal(["reports/saturday"] * 2, runs.map { |run| run[:resource] })
      assert_equal([1, 2], runs.map { |run| run[:token] })
      assert_equal 1, runs.map { |run| run[:job_id] }.uniq.size, "a retry keeps the job's id"
      refute_predicate @store.status("reports/saturday"), :held?
    end

    def test_occupied_retries_the_job_without_touching_the_store
      Report.perform_later("friday")
      Testing.occupied { perform_enqueued_jobs }

      assert_empty ActiveJobTestHelperJobs::PERFORMED
      assert_enqueued_with(job: Report, args: ["friday"])
      assert_nil @store.status("reports/friday"), "the store was never asked"
    end
  end
end
