# frozen_string_literal: true

require "minitest/autorun"
require "lease_machines"
require "lease_machines/sidekiq"
require "sidekiq/api"
require "open3"
require "tmpdir"
require "fileutils"
require_relative "../support/sidekiq_redis"

# Sidekiq 6.4 on Debian's redis gem 4.8 warns on every call.
Redis.silence_deprecations = true if defined?(Redis) && Redis.respond_to?(:silence_deprecations=)

module LeaseMachines
  # `on_enqueue: :skip_if_held` on Sidekiq: the client middleware that
  # `require "lease_machines/sidekiq"` adds does not push a job whose lease
  # is held, reading the store (a real SQLite file) and pushing through
  # Sidekiq::Client to a real Redis (script/redis, database 7).
  class SidekiqEnqueueTest < Minitest::Test
    ROOT = File.expand_path("../..", __dir__)
    REDIS_PORT = ENV.fetch("LEASE_MACHINES_REDIS_PORT", "63799")

    def self.redis_url
      @redis_url ||= begin
        out, status = Open3.capture2({ "LEASE_MACHINES_REDIS_PORT" => REDIS_PORT }, File.join(ROOT, "script/redis"), "start")
        raise "script/redis start failed" unless status.success?

        out.strip.sub(%r{/0\z}, "/7")
      end
    end

    def setup
      super
      @dir = Dir.mktmpdir("lm_sidekiq_enqueue")
      @store = Stores::SQLite.new(File.join(@dir, "leases.sqlite3")).setup!
      SidekiqRedis.use(self.class.redis_url)
      ::Sidekiq.redis(&:flushdb)
      @events = []
      @subscriber = LeaseMachines.subscribe { |name, payload| @events << [name, payload] }
    end

    def teardown
      LeaseMachines.unsubscribe(@subscriber)
      ::Sidekiq.redis(&:flushdb)
      @store.close
      FileUtils.rm_rf(@dir)
      super
    end

    def job_class(name, **lease)
      store = @store
      klass = Class.new do
        include ::Sidekiq::Job

        def perform(*); end
      end
      klass.define_singleton_method(:name) { name }
      klass.define_singleton_method(:to_s) { name }
      klass.sidekiq_options queue: "reports",
                            lease: { resource: ->(args) { "reports/#{args[0]}" }, store: store, **lease }
      klass
    end

    def queued
      ::Sidekiq::Queue.new("reports").map { |job| job.args.first }.sort
    end

    def test_a_job_whose_lease_is_held_is_not_pushed
      job = job_class("SkippedReport", on_enqueue: :skip_if_held)
      @store.authority("reports/7").acquire(owner: 99, ttl: 30)

      assert_nil job.perform_async(7), "Sidekiq's answer to a push a client middleware stopped"
      refute_nil job.perform_async(8)
      assert_equal [8], queued
      skipped = @events.select { |name, _| name == :enqueue_skipped }.map(&:last)
      assert_equal(["reports/7"], skipped.map { |payload| payload[:resource] })
      assert_equal "SkippedReport", skipped.first[:tags][:job]

      @store.authority("reports/7").release(owner: 99, token: 1)
      refute_nil job.perform_async(7), "pushed once the lease is free"
      assert_equal [7, 8], queued
    end

    def test_the_check_reads_the_store_and_grants_nothing
      job = job_class("ReadOnlyReport", on_enqueue: :skip_if_held)
      @store.authority("reports/7").acquire(owner: 99, ttl: 30)
      job.perform_async(7)
      job.perform_async(8)

      assert_equal [1, 99], [@store.status("reports/7").last_issued, @store.status("reports/7").lease.owner]
      assert_nil @store.status("reports/8"), "no row is written for a resource nobody held"
    end

    def test_without_on_enqueue_a_held_job_is_pushed_and_the_run_decides
      job = job_class("PlainReport")
      @store.authority("reports/7").acquire(owner: 99, ttl: 30)

      refute_nil job.perform_async(7)
      assert_equal [7], queued
    end

    def test_a_limit_is_held_only_when_every_slot_is
      job = job_class("LimitedReport", on_enqueue: :skip_if_held, limit: 3)
      2.times { |slot| @store.authority("reports/7#slot-#{slot}").acquire(owner: 90 + slot, ttl: 30) }
      refute_nil job.perform_async(7), "a slot is free"
      @store.authority("reports/7#slot-2").acquire(owner: 92, ttl: 30)

      assert_nil job.perform_async(7), "all three slots are held"
      assert_equal [7], queued
    end

    def test_a_job_the_server_middleware_reschedules_is_pushed_anyway
      job = job_class("RescheduledReport", on_enqueue: :skip_if_held)
      @store.authority("reports/7").acquire(owner: 99, ttl: 30)

      refute_nil ::Sidekiq::Client.push("class" => job, "args" => [7], "lease_reschedules" => 1)
      assert_equal [7], queued
    end

    def test_a_job_pushed_by_the_name_of_a_class_this_process_does_not_have_is_pushed
      refute_nil ::Sidekiq::Client.push("class" => "NoSuchReportJob", "queue" => "reports", "args" => [7])
      assert_equal [7], queued
    end

    def test_on_enqueue_is_checked_when_the_class_declares_it
      error = assert_raises(ArgumentError) { job_class("BadReport", on_enqueue: :skip) }
      assert_match(/BadReport sidekiq_options lease on_enqueue must be one of \[nil, :skip_if_held\], got :skip/,
                   error.message)
    end
  end
end
