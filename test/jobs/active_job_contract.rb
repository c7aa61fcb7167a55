# frozen_string_literal: true

require "minitest/autorun"
require "lease_machines"
require "lease_machines/active_job"
require "concurrent/array"
require "logger"
require "stringio"
require "tmpdir"
require_relative "../stores/store_helper"

module LeaseMachines
  # The jobs of the tests below (named: the async adapter finds a job's class
  # by its name). Each takes its resource name as its argument.
  module ActiveJobTestJobs
    EVENTS = Concurrent::Array.new

    # Records what perform saw.
    class Leased < ::ActiveJob::Base
      include LeaseMachines::ActiveJob

      def perform(resource)
        EVENTS << [:performed, resource, lease.token, LeaseMachines.current_lease.equal?(lease)]
        :done
      end
    end

    class Raise < Leased
      leased resource: ->(job) { job.arguments.first }, on_occupied: :raise
    end

    class Discard < Leased
      leased resource: ->(job) { job.arguments.first }, on_occupied: :discard
    end

    class Retry < Leased
      leased resource: ->(job) { job.arguments.first }, on_occupied: :retry, reschedule_in: 0.2
    end

    # Takes its own lease away, so that its release is refused and logged.
    class ForceReleased < Leased
      leased resource: ->(job) { job.arguments.first }, on_occupied: :raise

      def perform(resource)
        LeaseMachines.configuration.store.force_release(resource)
      end
    end

    class Failing < Raise
      def perform(_resource) = raise(ArgumentError, "boom")
    end
  end

  # The ActiveJob integration on ActiveJob's own inline and async adapters,
  # with the lease in a real SQLite or PostgreSQL store. (The Sidekiq adapter
  # runs in a real sidekiq process: test/jobs/sidekiq_test.rb.)
  module ActiveJobContract
    # Each test's resource, so that tests never share a lease.
    def resource
      @resource ||= "reports/#{self.class.name}/#{name}"
    end

    def setup
      super
      @log = StringIO.new
      ::ActiveJob::Base.logger = Logger.new(@log)
      LeaseMachines.reset_configuration!
      LeaseMachines.configure do |config|
        config.store = build_store
        config.owner = 42
        config.default_ttl = 5
      end
      @store = LeaseMachines.configuration.store
      @events = ActiveJobTestJobs::EVENTS.clear
    end

    def teardown
      LeaseMachines.reset_configuration!
      super
    end

    # A job class on `adapter` whose `on_occupied` is the given one.
    def job_class(adapter, on_occupied:)
      klass = ActiveJobTestJobs.const_get(on_occupied.to_s.capitalize)
      klass.queue_adapter = adapter
      klass
    end

    def day(name)
      "#{resource}/#{name}"
    end

    def occupy(name)
      @store.authority(day(name)).acquire(owner: 7, ttl: 30).lease
    end

    def test_perform_runs_under_the_lease_and_releases_it
      job_class(:inline, on_occupied: :raise).perform_now(day("monday"))
      performed = @events.first

      assert_equal :performed, performed[0]
      assert_kind_of Integer, performed[2]
      assert performed[3], "LeaseMachines.current_lease is the job's lease inside perform"
      refute_predicate @store.status(day("monday")), :held?, "released when perform returned"
      assert_nil LeaseMachines.current_lease
    end

    # The lease costs a job one acquire and one release, nothing else: a job
    # shorter than its renew_after is never renewed.
    def test_a_short_job_costs_one_acquire_and_one_release
      seen = []
      subscriber = LeaseMachines.subscribe do |event, payload|
        seen << [event, payload[:resource]] if payload[:resource] == day("saturday")
      end
      job_class(:inline, on_occupied: :raise).perform_now(day("saturday"))

      assert_equal [[:acquire, day("saturday")], [:release, day("saturday")]], seen
    ensure
      LeaseMachines.unsubscribe(subscriber) if subscriber
    end

    def test_an_error_in_perform_still_releases
      ActiveJobTestJobs::Failing.queue_adapter = :inline

      assert_raises(ArgumentError) { ActiveJobTestJobs::Failing.perform_now(day("tuesday")) }
      refute_predicate @store.status(day("tuesday")), :held?, "a subclass keeps its parent's lease, and releases it"
    end

    def test_raise_lets_the_job_see_occupied
      held = occupy("wednesday")
      error = assert_raises(Occupied) { job_class(:inline, on_occupied: :raise).perform_now(day("wednesday")) }

      assert_equal day("wednesday"), error.resource
      assert_empty @events, "perform did not run"
      assert_equal held.token, @store.status(day("wednesday")).checkpoint.lease.token, "the holder keeps it"
    end

    def test_discard_drops_the_job_and_says_so
      occupy("thursday")
      job = job_class(:inline, on_occupied: :discard).new(day("thursday"))
      job.perform_now

      assert_empty @events
      assert_includes @log.string, "lease_machines: discarded #{job.class.name} #{job.job_id}: #{day('thursday')} is held"
    end

    def test_retry_enqueues_the_job_again_and_it_runs_once_the_lease_is_free
      held = occupy("friday")
      job_class(:async, on_occupied: :retry).perform_later(day("friday"))
      sleep 0.05 until @log.string.include?("Retrying")
      @store.authority(day("friday")).release(owner: 7, token: held.token)
      deadline = Process.clock_gettime(Process::CLOCK_MONOTONIC) + 15
      sleep 0.05 until @events.any? || Process.clock_gettime(Process::CLOCK_MONOTONIC) > deadline

      assert_equal [:performed, day("friday")], @events.first&.first(2), @log.string
      assert_operator @events.first[2], :>, held.token
    end

    def test_the_lease_log_lines_and_events_name_the_job_class_and_its_id
      log = StringIO.new
      LeaseMachines.configuration.logger = Logger.new(log)
      released = []
      subscriber = LeaseMachines.subscribe { |event, payload| released << payload[:tags] if event == :release }
      job = ActiveJobTestJobs::ForceReleased.new(day("sunday"))
      job.perform_now

      tags = "job=LeaseMachines::ActiveJobTestJobs::ForceReleased job_id=#{job.job_id}"
      assert_match(/WARN -- : lease_machines: releasing "#{day('sunday')}" #{tags} \(token \d+\) was refused/, log.string)
      assert_equal [{ job: "LeaseMachines::ActiveJobTestJobs::ForceReleased", job_id: job.job_id }], released
    ensure
      LeaseMachines.unsubscribe(subscriber) if subscriber
    end

    def test_a_declaration_is_checked_when_it_is_made
      klass = Class.new(::ActiveJob::Base) { include LeaseMachines::ActiveJob }
      error = assert_raises(ArgumentError) { klass.leased(resource: "r", on_occupied: :wait) }
      assert_match(/on_occupied must be one of \[:reschedule, :discard, :raise, :retry\], got :wait \(Symbol\)/,
                   error.message)
      error = assert_raises(ArgumentError) { klass.leased(resource: "r", tll: 3) }
      assert_match(/unknown keys \(tll: 3 \(Integer\)\)/, error.message)
      error = assert_raises(TypeError) { klass.leased(resource: :r) }
      assert_match(/resource must be a String/, error.message)
      error = assert_raises(ArgumentError) { klass.leased(resource: "r", ttl: 0) }
      assert_match(/ttl must be seconds, got 0 \(Integer\)/, error.message)
    end
  end
end
