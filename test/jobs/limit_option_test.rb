# frozen_string_literal: true

require "minitest/autorun"
require "concurrent/array"
require "logger"
require "tmpdir"
require "fileutils"
require "lease_machines"
require "lease_machines/active_job"
require "active_job"
# Sidekiq 6.4's perform_inline finds the job's class with ActiveSupport's
# String#constantize, as in a Rails app.
require "active_support/core_ext/string/inflections"
require "lease_machines/sidekiq/testing"
require "lease_machines/testing"
require_relative "../support/quiet_sidekiq"

# Loading sidekiq/testing switched every push in this process to fake!;
# test/jobs/sidekiq_test.rb, in the same `rake test` process, pushes to a
# real Redis. The tests below use the block form.
Sidekiq::Testing.disable!

module LeaseMachines
  # The jobs of LimitOptionTest: each records the slot, resource and token it ran under.
  module LimitOptionJobs
    PERFORMED = Concurrent::Array.new

    class SidekiqExport
      include ::Sidekiq::Worker
      sidekiq_options lease: { resource: "exports", limit: 3, ttl: 30, on_occupied: :raise }

      def perform(name)
        PERFORMED << [name, lease.slot, lease.resource, lease.token, LeaseMachines.current_lease.equal?(lease)]
      end
    end

    class ActiveExport < ::ActiveJob::Base
      include LeaseMachines::ActiveJob
      leased resource: "exports", limit: 3, ttl: 30, on_occupied: :raise

      def perform(name)
        PERFORMED << [name, lease.slot, lease.resource, lease.token, LeaseMachines.current_lease.equal?(lease)]
      end
    end
  end

  # `limit:` in a job's declaration: `sidekiq_options lease: { limit: }` and
  # ActiveJob's `leased limit:`, checked by Jobs::LeaseOption; the job runs
  # in a free slot and sees it (docs/JOBS.md).
  class LimitOptionTest < Minitest::Test
    def setup
      super
      @dir = Dir.mktmpdir("lm_limit_option")
      QuietSidekiq.logger!
      ::ActiveJob::Base.logger = Logger.new(File::NULL)
      LimitOptionJobs::ActiveExport.queue_adapter = :inline
      LeaseMachines.reset_configuration!
      LeaseMachines.configure do |config|
        config.store = Stores::SQLite.new(File.join(@dir, "leases.sqlite3")).setup!
        config.owner = 42
      end
      @store = LeaseMachines.configuration.store
      LimitOptionJobs::PERFORMED.clear
    end

    def teardown
      ::Sidekiq::Worker.clear_all
      LeaseMachines.reset_configuration!
      FileUtils.rm_rf(@dir)
      super
    end

    def occupy(*slots)
      slots.each { |slot| assert_predicate @store.authority("exports#slot-#{slot}").acquire(owner: 7, ttl: 30), :granted? }
    end

    def test_a_sidekiq_job_runs_in_the_free_slot_and_sees_it
      occupy(0, 2)
      ::Sidekiq::Testing.inline! { LimitOptionJobs::SidekiqExport.perform_async("a") }

      assert_equal [["a", 1, "exports#slot-1", 1, true]], LimitOptionJobs::PERFORMED
      refute_predicate @store.status("exports#slot-1"), :held?, "released after perform"
    end

    def test_a_sidekiq_job_finding_every_slot_held_is_occupied
      occupy(0, 1, 2)
      error = assert_raises(Occupied) do
        ::Sidekiq::Testing.inline! { LimitOptionJobs::SidekiqExport.perform_async("b") }
      end

      assert_equal "exports", error.resource
      assert_empty LimitOptionJobs::PERFORMED
    end

    def test_an_active_job_runs_in_the_free_slot_and_sees_it
      occupy(1, 2)
      LimitOptionJobs::ActiveExport.perform_now("c")

      assert_equal [["c", 0, "exports#slot-0", 1, true]], LimitOptionJobs::PERFORMED
      occupy(0)
      assert_raises(Occupied) { LimitOptionJobs::ActiveExport.perform_now("d") }
    end

    def test_limit_defaults_to_one_the_resource_itself
      option = Jobs::LeaseOption.new({ "resource" => "exports" }, aliases: {}, owner: "Job")

      assert_equal 1, option.limit
      assert_equal 3, Jobs::LeaseOption.new({ "resource" => "exports", "limit" => 3 }, aliases: {}, owner: "Job").limit
    end

    def test_a_bad_limit_is_refused_when_the_class_declares_it_naming_limit_and_the_value
      [[0, ArgumentError], [2.5, TypeError], ["3", TypeError], [nil, TypeError]].each do |limit, error|
        raised = assert_raises(error) do
          Class.new(::ActiveJob::Base) do
            include LeaseMachines::ActiveJob

            def self.name = "BadLimitJob"
            leased resource: "exports", limit: limit
          end
        end
        assert_match(/\ABadLimitJob leased limit must be an Integer from 1 to 256 .*got #{Regexp.escape(limit.inspect)}/,
                     raised.message)
      end
      raised = assert_raises(ArgumentError) do
        Class.new do
          include ::Sidekiq::Worker

          def self.name = "BadSidekiqLimitJob"
          sidekiq_options lease: { resource: "exports", limit: 0 }
        end
      end
      assert_match(/limit must be an Integer from 1 to 256 .*got 0/, raised.message)
    end

    def test_bypass_mode_gives_the_job_a_slot_as_production_does
      Testing.bypass do
        LimitOptionJobs::ActiveExport.perform_now("e")
      end

      name, slot, resource, token = LimitOptionJobs::PERFORMED.first
      assert_equal "e", name
      assert_equal "exports#slot-#{slot}", resource
      assert_equal 1, token
    end
  end
end
