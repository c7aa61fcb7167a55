# frozen_string_literal: true

require "minitest/autorun"
require "logger"
require "stringio"
require "tmpdir"
require "fileutils"
require "lease_machines"
require "lease_machines/active_job"
require "lease_machines/testing"
require "active_job/test_helper"

module LeaseMachines
  # The jobs of ActiveJobEnqueueTest.
  module ActiveJobEnqueueJobs
    # Skipped at enqueue while its report's lease is held.
    class Report < ::ActiveJob::Base
      include LeaseMachines::ActiveJob
      leased resource: ->(job) { "reports/#{job.arguments.first}" }, on_enqueue: :skip_if_held, on_conflict: :reschedule

      def perform(_day); end
    end

    # Up to three at once; skipped only when all three slots are held.
    class Export < ::ActiveJob::Base
      include LeaseMachines::ActiveJob
      leased resource: "exports", limit: 3, on_enqueue: "skip_if_held"

      def perform; end
    end
  end

  # `on_enqueue: :skip_if_held` on ActiveJob: a before_enqueue callback
  # aborts the enqueue (`perform_later` returns false) while the lease is
  # held, reading a real SQLite store; ActiveJob's test adapter records what
  # was enqueued. Retries are never dropped there.
  class ActiveJobEnqueueTest < Minitest::Test
    include ::ActiveJob::TestHelper

    Report = ActiveJobEnqueueJobs::Report
    Export = ActiveJobEnqueueJobs::Export

    def setup
      super
      @dir = Dir.mktmpdir("lm_active_job_enqueue")
      ::ActiveJob::Base.logger = Logger.new(StringIO.new)
      LeaseMachines.reset_configuration!
      LeaseMachines.configure do |config|
        config.store = Stores::SQLite.new(File.join(@dir, "leases.sqlite3")).setup!
        config.owner = 42
      end
      @store = LeaseMachines.configuration.store
      @events = []
      @subscriber = LeaseMachines.subscribe { |name, payload| @events << [name, payload] }
    end

    def teardown
      LeaseMachines.unsubscribe(@subscriber)
      Testing.disable!
      LeaseMachines.reset_configuration!
      FileUtils.rm_rf(@dir)
      super
    end

    def enqueued_days
      enqueued_jobs.map { |job| job["arguments"].first }
    end

    def test_perform_later_returns_false_while_the_lease_is_held
      @store.authority("reports/monday").acquire(owner: 99, ttl: 30)

      assert_equal false, Report.perform_later("monday")
      assert_kind_of Report, Report.perform_later("tuesday")
      assert_equal ["tuesday"], enqueued_days
      skipped = @events.select { |name, _| name == :enqueue_skipped }.map(&:last)
      assert_equal([["reports/monday", "LeaseMachines::ActiveJobEnqueueJobs::Report"]],
                   skipped.map { |payload| [payload[:resource], payload[:tags][:job]] })
      assert_equal 1, @store.status("reports/monday").last_issued, "a read: nothing was granted"
      assert_nil @store.status("reports/tuesday"), "and nothing written"
    end

    def test_a_retry_is_enqueued_while_the_lease_is_held
      @store.authority("reports/monday").acquire(owner: 99, ttl: 30)
      job = Report.new("monday")
      job.executions = 1 # it ran once: retry_job and retry_on enqueue it again

      refute_equal false, job.enqueue
      assert_equal ["monday"], enqueued_days
    end

    def test_on_conflict_reschedule_enqueues_the_run_that_found_the_lease_held
      @store.authority("reports/monday").acquire(owner: 99, ttl: 30)
      Report.new("monday").perform_now # occupied: retry_job enqueues it again

      assert_equal ["monday"], enqueued_days, "the occupied run was retried, not dropped at its enqueue"
    end

    def test_a_limit_is_held_only_when_every_slot_is
      2.times { |slot| @store.authority("exports#slot-#{slot}").acquire(owner: 90 + slot, ttl: 30) }
      assert_kind_of Export, Export.perform_later
      @store.authority("exports#slot-2").acquire(owner: 92, ttl: 30)

      assert_equal false, Export.perform_later
      assert_equal 1, enqueued_jobs.size
    end

    def test_the_test_modes_answer_the_check
      assert_equal(false, Testing.occupied { Report.perform_later("monday") })
      assert_kind_of(Report, Testing.bypass { Report.perform_later("monday") })
    end
  end
end
