# frozen_string_literal: true

require_relative "store_helper"
require_relative "../support/restart_cluster"
require "lease_machines/fences/postgres"
require "open3"

module LeaseMachines
  # A COMMIT that waits for a synchronous standby (synchronous_commit = on,
  # synchronous_standby_names set) and whose wait is cancelled (by
  # pg_cancel_backend here; a pooler or a timeout does the same) is committed
  # on this server only: PostgreSQL answers success with a WARNING
  # ("canceling wait for synchronous replication ... already committed
  # locally"). A failover to the standby would lose it, so a store must not
  # return that decision, nor a fence report that guard as done: both raise
  # OutcomeUnknownError.
  #
  # A cluster of this test's own (RestartCluster: the test cluster's port plus
  # 13) whose synchronous standby never connects, so every COMMIT waits until
  # it is cancelled.
  class PostgresUnreplicatedCommitTest < Minitest::Test
    include StoreTestHelper

    SCRIPT = File.expand_path("../../script/postgres", __dir__)
    CLUSTER = RestartCluster.environment(13)
    STANDBY = "lm_standby_never_connects"

    def setup
      super
      @url = cluster("start")
      @admin = PG.connect(@url)
      @admin.exec("SET client_min_messages = warning")
      @admin.exec("DROP TABLE IF EXISTS lease_machines_resources, lease_machines_fences, reports")
      @store = Stores::Postgres.new(@url).setup!
      @fences = Fences::Postgres.new(@url).setup!
      @admin.exec("CREATE TABLE reports (name text PRIMARY KEY, body text NOT NULL)")
      synchronous_standby(STANDBY)
    end

    def teardown
      synchronous_standby(nil) if @admin
      @store&.close
      @fences&.close
      @admin&.close
      cluster("stop")
      super
    end

    # statement_timeout does not bound a COMMIT's wait for the standby; the
    # store's timeout: does: the call ends at it as outcome unknown, and the
    # wait is cancelled, so the row lock it held is free for the next call.
    def test_a_timeout_ends_the_wait_for_the_standby_and_cancels_it
      name = unique_name
      store = Stores::Postgres.new(@url, timeout: 0.5, statement_timeout: 0.2)
      started = Process.clock_gettime(Process::CLOCK_MONOTONIC)
      caller = Thread.new do
        store.authority(name).acquire(owner: 7, ttl: 30)
      rescue StandardError => e
        e
      end
      assert caller.join(5), "the acquire still waits for the standby 5 s later"
      error = caller.value
      assert_kind_of OutcomeUnknownError, error
      assert_kind_of Stores::Deadline::Exceeded, error.cause
      assert_operator Process.clock_gettime(Process::CLOCK_MONOTONIC) - started, :<, 5
      wait_for(timeout: 3) { @admin.exec("SELECT 1 FROM pg_stat_activity WHERE wait_event = 'SyncRep'").ntuples.zero? }
      assert_equal "7", row(name)["lease_owner"], "committed here when its wait was cancelled"
    ensure
      caller&.kill
      store&.close
    end

    # With a synchronous standby named, durability: :strict lets the
    # decision through (to wait for the standby, cut off here by timeout:).
    def test_strict_durability_decides_with_a_synchronous_standby_named
      store = Stores::Postgres.new(@url, durability: :strict, timeout: 0.5)
      error = assert_raises(OutcomeUnknownError) { store.authority(unique_name).acquire(owner: 7, ttl: 30) }
      assert_kind_of Stores::Deadline::Exceeded, error.cause, "past the check, waiting for the standby"
    ensure
      store&.close
    end

    def test_durability_reads_the_synchronous_standby_and_sees_it_missing
      durability = @store.durability

      assert_equal :survives_failover, durability.verdict
      assert_equal STANDBY, durability.settings.fetch("synchronous_standby_names")
      assert_includes durability.reasons, "no synchronous standby is connected now: commits wait until one is"
    end

    def test_a_grant_whose_synchronous_commit_was_cancelled_is_outcome_unknown
      name = unique_name
      error = assert_raises(OutcomeUnknownError) { cancelled_commit { @store.authority(name).acquire(owner: 7, ttl: 30) } }

      assert_match(/\APostgreSQL: the server warned during .*: canceling wait for synchronous replication/, error.message)
      assert_match(/may or may not have been committed/, error.message)
      assert_equal "7", row(name)["lease_owner"], "committed here, though not on the standby"
    end

    def test_a_release_through_a_hook_whose_commit_was_cancelled_is_outcome_unknown
      name = unique_name
      # The grant commits without waiting: synchronous_commit = local on its own session. (Turning the standby
      # off and on around it raced the checkpointer, which tells backends whether a standby is named: the
      # release's COMMIT then sometimes did not wait.)
      granting = Stores::Postgres.new("#{@url}?options=-c%20synchronous_commit%3Dlocal")
      lease = granting.authority(name).acquire(owner: 7, ttl: 30).lease
      # A before_commit hook takes the locked transaction's path (an explicit COMMIT).
      hooked = Stores::Postgres.new(@url, before_commit: ->(_commit) {})

      assert_raises(OutcomeUnknownError) { cancelled_commit { hooked.authority(name).release(owner: 7, token: lease.token) } }
      assert_nil row(name)["lease_owner"], "released here, though not on the standby"
    ensure
      granting&.close
      hooked&.close
    end

    def test_a_guard_whose_synchronous_commit_was_cancelled_is_outcome_unknown
      error = assert_raises(OutcomeUnknownError) do
        cancelled_commit do
          @fences.guard("reports/nightly", 3) do |conn|
            conn.exec_params("INSERT INTO reports VALUES ($1, $2)", ["reports/nightly", "by 3"])
          end
        end
      end

      assert_match(/canceling wait for synchronous replication/, error.message)
    end

    # Runs the block in a thread, cancels its COMMIT's wait for the standby
    # once the server shows it waiting, and returns what the block returned
    # (or raises what it raised).
    def cancelled_commit(&)
      thread = Thread.new(&)
      thread.report_on_exception = false
      pid = waiting_for_the_standby(thread)
      @admin.exec_params("SELECT pg_cancel_backend($1)", [pid])
      thread.value
    end

    def waiting_for_the_standby(thread)
      500.times do
        pids = @admin.exec("SELECT pid FROM pg_stat_activity WHERE wait_event = 'SyncRep'").column_values(0)
        return Integer(pids.first) unless pids.empty?

        flunk "the call ended without waiting for the standby: #{thread.value.inspect}" unless thread.alive?
        sleep 0.02
      end
      flunk "no COMMIT waited for the standby within 10 s"
    end

    def synchronous_standby(name)
      setting = name ? "SET synchronous_standby_names = '#{name}'" : "RESET synchronous_standby_names"
      @admin.exec("ALTER SYSTEM #{setting}")
      @admin.exec("SELECT pg_reload_conf()")
      expected = name.to_s
      100.times do
        return if @admin.exec("SHOW synchronous_standby_names").getvalue(0, 0) == expected

        sleep 0.02
      end
      flunk "synchronous_standby_names did not become #{expected.inspect}"
    end

    def row(name)
      @admin.exec_params("SELECT * FROM lease_machines_resources WHERE name = $1", [name]).first
    end

    def cluster(command)
      out, err, status = Open3.capture3(CLUSTER, SCRIPT, command)
      assert_predicate status, :success?, "script/postgres #{command} failed: #{err}"
      out.strip
    end
  end
end
