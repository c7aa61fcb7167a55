# frozen_string_literal: true

require "minitest/autorun"
require "concurrent/array"
require "logger"
require "stringio"
require "tmpdir"
require "fileutils"
require "lease_machines/testing"
require "lease_machines/active_job"
require "active_support/core_ext/string/inflections"
require "lease_machines/sidekiq/testing"
require_relative "../support/quiet_sidekiq"

# test/jobs/sidekiq_test.rb, in the same `rake test` process, pushes to a
# real Redis: each test below picks Sidekiq's mode with the block form.
Sidekiq::Testing.disable!

module LeaseMachines
  # The jobs of ModesTest: each records the token it ran with.
  module ModesTestJobs
    PERFORMED = Concurrent::Array.new

    # A Sidekiq job that raises Occupied when its resource is held.
    class SidekiqReport
      include ::Sidekiq::Worker
      sidekiq_options lease: { resource: ->(args) { "reports/#{args[0]}" }, ttl: 30, wait: 60, on_occupied: :raise }

      def perform(day)
        PERFORMED << [:sidekiq, day, lease.token]
      end
    end

    # An ActiveJob job that is discarded when its resource is held.
    class ActiveReport < ::ActiveJob::Base
      include LeaseMachines::ActiveJob
      leased resource: ->(job) { "reports/#{job.arguments.first}" }, ttl: 30, on_occupied: :discard

      def perform(day)
        PERFORMED << [:active_job, day, lease.token]
      end
    end
  end

  # LeaseMachines::Testing's modes, with the real job integrations (Sidekiq
  # through Sidekiq::Testing, ActiveJob) and a real SQLite fence.
  class ModesTest < Minitest::Test
    def setup
      super
      @dir = Dir.mktmpdir("lm_testing_modes")
      @log = StringIO.new
      ::ActiveJob::Base.logger = Logger.new(@log)
      QuietSidekiq.logger!
      LeaseMachines.reset_configuration! # no store: the modes need none
      ModesTestJobs::PERFORMED.clear
    end

    def teardown
      Testing.disable!
      LeaseMachines.reset_configuration!
      FileUtils.rm_rf(@dir)
      super
    end

    def test_bypass_grants_every_job_its_lease_without_a_store
      Testing.bypass!

      assert_equal :bypass, Testing.mode
      ::Sidekiq::Testing.inline! { ModesTestJobs::SidekiqReport.perform_async("monday") }
      ModesTestJobs::ActiveReport.perform_now("monday")

      assert_equal([[:sidekiq, "monday"], [:active_job, "monday"]], ModesTestJobs::PERFORMED.map { |run| run.take(2) })
      ModesTestJobs::PERFORMED.each { |(_, _, token)| assert_operator token, :>=, 1 }
    end

    def test_bypass_leaves_the_fences_comparing_tokens
      fences = Fences::SQLite.new(File.join(@dir, "reports.sqlite3")).tap(&:setup!)
      Testing.bypass do
        fences.guard("reports/monday", 5) { :written }

        assert_raises(FencedError) { fences.guard("reports/monday", 4) { :stale } }
      end
    ensure
      fences&.close
    end

    def test_occupied_refuses_every_job_at_once_and_runs_its_on_occupied
      Testing.occupied!
      started = Process.clock_gettime(Process::CLOCK_MONOTONIC)

      error = assert_raises(Occupied) do
        ::Sidekiq::Testing.inline! { ModesTestJobs::SidekiqReport.perform_async("tuesday") }
      end
      assert_equal :occupied, error.decision.reason
      assert_operator Process.clock_gettime(Process::CLOCK_MONOTONIC) - started, :<, 5, "wait: 60 was not waited"
      ModesTestJobs::ActiveReport.perform_now("tuesday")

      assert_empty ModesTestJobs::PERFORMED
      assert_match(%r{discarded .*ActiveReport .*: reports/tuesday is held \(occupied\)}, @log.string)
    end

    def test_fenced_grants_the_lease_and_refuses_every_fenced_write
      fences = Fences::SQLite.new(File.join(@dir, "reports.sqlite3")).tap(&:setup!)
      ran = false
      Testing.fenced!
      ModesTestJobs::ActiveReport.perform_now("wednesday")
      error = assert_raises(FencedError) { fences.guard("reports/wednesday", 9) { ran = true } }

      assert_equal [:active_job, "wednesday"], ModesTestJobs::PERFORMED.first.take(2)
      assert_equal ["reports/wednesday", 9, 10], [error.resource, error.token, error.highest]
      refute ran, "the guarded block did not run"
      Testing.disable!

      assert_nil fences.highest("reports/wednesday"), "nothing reached the fence's table"
    ensure
      fences&.close
    end

    def test_disable_goes_back_to_the_configured_store
      Testing.bypass!
      Testing.disable!

      assert_nil Testing.mode
      assert_raises(NotConfiguredError) { ModesTestJobs::ActiveReport.perform_now("thursday") }
    end

    def test_the_block_forms_restore_the_mode_they_found_however_the_block_ends
      Testing.occupied!
      seen = Testing.bypass { [Testing.mode, Testing.fenced { Testing.mode }, Testing.mode] }

      assert_equal %i[bypass fenced bypass], seen
      assert_equal :occupied, Testing.mode
      assert_raises(ArgumentError) { Testing.fenced { raise ArgumentError, "the test failed" } }
      assert_equal :occupied, Testing.mode
    end

    def test_the_mode_is_the_processs_so_a_job_thread_sees_it
      Testing.bypass do
        assert_equal :bypass, Thread.new { Testing.mode }.value
        Thread.new { ModesTestJobs::ActiveReport.perform_now("friday") }.join
      end

      assert_equal [:active_job, "friday"], ModesTestJobs::PERFORMED.first.take(2)
    end
  end
end
