# frozen_string_literal: true

require "socket"
require "minitest/autorun"
require "lease_machines"
require_relative "sidekiq_cluster"
require "active_job"

# The test process enqueues ActiveReportJob as an app's web process would: the
# class of the same name in test/jobs/sidekiq_app.rb performs it.
class ActiveReportJob < ActiveJob::Base
  self.queue_adapter = :sidekiq
end

module LeaseMachines
  # The Sidekiq integration in real `sidekiq` processes on a real Redis.
  class SidekiqTest < Minitest::Test
    RESOURCE = "reports/nightly"

    def teardown
      @cluster&.stop
      super
    end

    def test_jobs_on_one_resource_hold_it_one_at_a_time_and_the_rest_are_rescheduled
      @cluster = SidekiqCluster.new(ttl: 2)
      @cluster.start(concurrency: 5)
      6.times { @cluster.push("ReportJob", 0.3) }
      @cluster.wait_for("six reports") { @cluster.held.size == 6 }
      held = @cluster.held

      assert_equal(["written"] * 6, held.map { |row| row["outcome"] })
      held.each_cons(2) do |earlier, later|
        assert_operator later["started_ns"], :>=, earlier["ended_ns"], "two jobs held #{RESOURCE} at once: #{held}"
        assert_operator later["token"], :>, earlier["token"], "tokens rise in the order the jobs held the lease"
      end
      assert_equal held.last["token"].to_s, @cluster.report[1], "the last holder's write is the report"
      assert_match(/rescheduled ReportJob \h+ in \d/, @cluster.log, "the jobs that found it held waited their turn")
      refute_predicate @cluster.store.status(RESOURCE), :held?, "the last job released the lease"
    end

    def test_a_skipping_job_is_dropped_while_another_holds_the_resource
      @cluster = SidekiqCluster.new(ttl: 5)
      @cluster.start(concurrency: 5)
      ids = Array.new(4) { @cluster.push("SkippingReportJob", 1.5) }
      @cluster.wait_for("every job to run or be skipped") do
        @cluster.held.size + @cluster.log.scan("skipped SkippingReportJob").size == 4
      end
      written = @cluster.held

      assert_operator written.size, :>=, 1
      assert_operator written.size, :<, 4, "at least one job found the resource held"
      skipped = ids - written.map { |row| row["jid"] }
      skipped.each { |jid| assert_includes @cluster.log, "skipped SkippingReportJob #{jid}: #{RESOURCE} is held" }
      assert_equal 0, ::Sidekiq::Queue.new("default").size + ::Sidekiq::ScheduledSet.new.size, "nothing requeued"
    end

    def test_active_job_on_the_sidekiq_adapter_holds_the_lease_one_job_at_a_time
      @cluster = SidekiqCluster.new(ttl: 2)
      @cluster.start(concurrency: 4)
      ::ActiveJob::Base.logger = Logger.new(File::NULL)
      ids = Array.new(4) { ActiveReportJob.perform_later(0.2).job_id }
      @cluster.wait_for("four reports") { @cluster.held.size == 4 }
      held = @cluster.held

      assert_equal ids.sort, held.map { |row| row["jid"] }.sort
      held.each_cons(2) do |earlier, later|
        assert_operator later["started_ns"], :>=, earlier["ended_ns"], "two jobs held #{RESOURCE} at once: #{held}"
        assert_operator later["token"], :>, earlier["token"]
      end
      assert_equal(["written"] * 4, held.map { |row| row["outcome"] })
    end

    # A retry is the same job with the same arguments: its key, computed from
    # them (never from the jid or the attempt), names the same resource, and
    # the retry takes that lease again, with the next token.
    def test_a_retried_job_takes_the_lease_of_the_same_resource_again
      @cluster = SidekiqCluster.new(ttl: 5)
      @cluster.start(concurrency: 2)
      jid = @cluster.push("RetriedReportJob", "2026-12-01")
      @cluster.wait_for("the run and its retry") { @cluster.held.count { |row| row["jid"] == jid } == 2 }
      runs = @cluster.held.select { |row| row["jid"] == jid }

      assert_equal ["reports/2026-12-01"] * 2, runs.map { |row| row["outcome"] }, "the same key on both runs"
      assert_equal [1, 2], runs.map { |row| row["token"] }, "the retry was granted that resource's lease again"
      assert_match(/the first run fails/, @cluster.log)
      @cluster.wait_for("the retry's release") { !@cluster.store.status("reports/2026-12-01").held? }
    end

    def test_a_job_without_a_lease_runs_as_before
      @cluster = SidekiqCluster.new(ttl: 2)
      @cluster.start(concurrency: 1)
      @cluster.push("PlainJob")
      @cluster.wait_for("the plain job") { @cluster.held.size == 1 }

      assert_equal "nil", @cluster.held.first["outcome"], "a job that declares no lease has none"
    end

    # Worker A's process is stopped (SIGSTOP, a GC pause as long as you like)
    # past the TTL while its job holds the lease; worker B takes the lease
    # with a greater token and writes; A, resumed, finishes its job, and its
    # late write is refused by the fence.
    def test_a_job_stopped_past_its_ttl_loses_the_lease_and_its_late_write_is_fenced
      @cluster = SidekiqCluster.new(ttl: 1)
      first = @cluster.start(concurrency: 1)
      stale = @cluster.push("ReportJob", 2.5)
      @cluster.wait_for("the first job to hold the lease") { @cluster.store.status(RESOURCE)&.held? }
      Process.kill(:STOP, first)
      sleep 1.5
      @cluster.start(concurrency: 1)
      fresh = @cluster.push("ReportJob", 0.1)
      @cluster.wait_for("the second job's write") { @cluster.held.any? { |row| row["jid"] == fresh } }
      Process.kill(:CONT, first)
      @cluster.wait_for("the first job to finish") { @cluster.held.any? { |row| row["jid"] == stale } }
      rows = @cluster.held.to_h { |row| [row["jid"], row] }

      assert_equal "written", rows[fresh]["outcome"]
      assert_equal "fenced", rows[stale]["outcome"], "the stale job's write was refused"
      assert_operator rows[fresh]["token"], :>, rows[stale]["token"]
      assert_equal ["written by #{fresh}", rows[fresh]["token"].to_s], @cluster.report
    end

    # TERM with a job running past Sidekiq's shutdown timeout: Sidekiq pushes
    # the job back and raises Sidekiq::Shutdown in its thread; the lease is
    # released, so the job's next run need not wait out its 60-second TTL.
    def test_shutdown_pushes_the_job_back_and_releases_its_lease
      @cluster = SidekiqCluster.new(ttl: 60)
      pid = @cluster.start(concurrency: 1, timeout: 1)
      jid = @cluster.push("ReportJob", 30)
      @cluster.wait_for("the job to hold the lease") { @cluster.store.status(RESOURCE)&.held? }
      assert_equal "#{Socket.gethostname} pid #{pid} job=ReportJob jid=#{jid}", @cluster.store.status(RESOURCE).label,
                   "the holder's label names the process, the job class and its jid"
      Process.kill(:TERM, pid)
      @cluster.wait_for("sidekiq to exit", seconds: 15) { !@cluster.alive?(pid) }

      refute_predicate @cluster.store.status(RESOURCE), :held?, "the lease was released on shutdown"
      assert_equal 1, ::Sidekiq::Queue.new("default").size, "the job was pushed back to its queue"
      assert_empty @cluster.held, "the interrupted job wrote nothing"
    end
  end
end
