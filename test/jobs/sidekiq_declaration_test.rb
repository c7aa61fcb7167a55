# frozen_string_literal: true

require "minitest/autorun"
require "lease_machines"
require "lease_machines/sidekiq"
require "sidekiq/api"
require "active_support"
require "active_support/core_ext/integer/time"
require "open3"
require_relative "../support/sidekiq_redis"

# Sidekiq 6.4 on Debian's redis gem 4.8 warns on every call.
Redis.silence_deprecations = true if defined?(Redis) && Redis.respond_to?(:silence_deprecations=)

module LeaseMachines
  # `sidekiq_options lease:` is checked when the job class declares it, and
  # stays out of the job Sidekiq pushes to Redis (a real Redis, script/redis).
  class SidekiqDeclarationTest < Minitest::Test
    ROOT = File.expand_path("../..", __dir__)
    REDIS_PORT = ENV.fetch("LEASE_MACHINES_DECLARATION_REDIS_PORT", "26489")

    # A Redis of the test's own (database 6), stopped at exit only when this
    # test started it.
    def self.redis_url
      @redis_url ||= begin
        env = { "LEASE_MACHINES_REDIS_PORT" => REDIS_PORT }
        running = system("redis-cli", "-h", "127.0.0.1", "-p", REDIS_PORT, "ping", out: File::NULL, err: File::NULL)
        out, status = Open3.capture2(env, File.join(ROOT, "script/redis"), "start")
        raise "script/redis start failed" unless status.success?

        Minitest.after_run { system(env, File.join(ROOT, "script/redis"), "stop") } unless running
        out.strip.sub(%r{/0\z}, "/6")
      end
    end

    def job_class(name = "DeclaredJob", &)
      klass = Class.new do
        include ::Sidekiq::Job

        def perform(*); end
      end
      klass.define_singleton_method(:name) { name }
      klass.define_singleton_method(:to_s) { name }
      klass.class_eval(&) if block_given?
      klass
    end

    def test_an_unknown_key_raises_when_the_class_declares_it_naming_the_key_and_the_value
      error = assert_raises(ArgumentError) do
        job_class { sidekiq_options lease: { resource: "reports/nightly", tll: 30 } }
      end

      assert_match(/DeclaredJob sidekiq_options lease has unknown keys \(tll: 30 \(Integer\)\)/, error.message)
    end

    def test_a_negative_ttl_raises_when_the_class_declares_it
      error = assert_raises(ArgumentError) do
        job_class { sidekiq_options lease: { resource: "reports/nightly", ttl: -1 } }
      end

      assert_match(/DeclaredJob sidekiq_options lease ttl must be seconds, got -1/, error.message)
    end

    def test_an_active_job_choice_of_on_occupied_raises_when_the_class_declares_it
      error = assert_raises(ArgumentError) do
        job_class { sidekiq_options "lease" => { "resource" => "reports/nightly", "on_occupied" => :retry } }
      end

      assert_match(/on_occupied must be one of \[:reschedule, :discard, :raise, :skip\], got :retry/, error.message)
    end

    def test_a_declaration_is_kept_on_the_class_and_inherited
      parent = job_class { sidekiq_options lease: { resource: ->(args) { "reports/#{args[0]}" }, ttl: 30.seconds } }
      child = Class.new(parent)
      opted_out = Class.new(parent) { sidekiq_options lease: nil }

      assert_equal 30, Sidekiq.lease_option(parent).ttl, "an ActiveSupport::Duration is its seconds"
      assert_same Sidekiq.lease_option(parent), Sidekiq.lease_option(child)
      assert_equal "reports/7", Sidekiq.lease_option(child).resource_for([7])
      assert_nil Sidekiq.lease_option(opted_out)
      assert_equal "default", parent.get_sidekiq_options["queue"], "Sidekiq's own options are still Sidekiq's"
    end

    def test_durations_are_seconds_for_ttl_wait_and_reschedule_in
      job = job_class { sidekiq_options lease: { resource: "r", ttl: 2.minutes, wait: 3.seconds, reschedule_in: 1.second } }
      option = Sidekiq.lease_option(job)

      assert_equal [120, 3, 1], [option.ttl, option.wait, option.reschedule_in]
      assert_kind_of Integer, option.ttl, "plain seconds, as the runtime's hold takes them"
    end

    def test_the_default_ttl_takes_a_duration_as_its_seconds
      config = Configuration.new
      config.default_ttl = 45.seconds

      assert_equal 45, config.default_ttl
    end

    def test_the_pushed_job_carries_nothing_of_the_declaration
      SidekiqRedis.use(self.class.redis_url)
      ::Sidekiq.redis(&:flushdb)
      job = job_class("PayloadJob") do
        sidekiq_options queue: "reports", lease: { resource: ->(args) { "reports/#{args[0]}" }, ttl: 30 }
      end
      jid = ::Sidekiq::Client.push("class" => job, "args" => [7])
      pushed = ::Sidekiq::Queue.new("reports").find_job(jid)

      refute_nil pushed, "the job is in Redis"
      assert_equal %w[args class jid queue retry].sort, (pushed.item.keys - %w[created_at enqueued_at]).sort
      refute_includes JSON.generate(pushed.item), "Proc", "the resource callable stays out of Redis"
      refute_includes JSON.generate(pushed.item), __FILE__, "and so does the app's file path"
    ensure
      ::Sidekiq.redis(&:flushdb) if jid
    end
  end
end
