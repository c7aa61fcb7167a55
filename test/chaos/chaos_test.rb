# frozen_string_literal: true

require_relative "../test_helper"
require "stringio"
require "tmpdir"
require_relative "../../chaos/runner"

module LeaseMachines
  # Short chaos runs (chaos/runner.rb) on both engines, under the nemesis:
  # with the fences on, the checker finds no violation; with them off (plain
  # inserts, the token recorded), the same run must show violations, so the
  # checker is known to catch a stale write. The runs use a PostgreSQL cluster
  # of their own (the test cluster's port plus 17), which the nemesis
  # restarts, and on PostgreSQL network namespaces of their own, removed
  # whatever happens; without root the PostgreSQL runs fail with the reason.
  class ChaosTest < Minitest::Test
    RUN = { "WORKERS" => "4", "RESOURCES" => "2", "TTL" => "0.8", "FAULT_EVERY" => "0.4" }.freeze
    STALE_WRITE = %i[token_went_down write_after_greater expired_lease_write].freeze

    TWO_GRANTS = %i[duplicate_grant writes_from_two_grants grant_out_of_order].freeze

    Minitest.after_run do
      settings = Chaos::Settings.new(ENV.to_h.merge("CHAOS_DIR" => Dir.tmpdir))
      Chaos::Cluster.new(settings).stop
      Chaos::Failover.new(settings).reset
    end

    def test_sqlite_with_fences_has_no_violation
      assert_clean(run_chaos("sqlite", "on", duration: 10))
    end

    def test_sqlite_without_fences_the_checker_finds_stale_writes
      assert_caught(run_chaos("sqlite", "off", duration: 12))
    end

    def test_postgres_with_fences_has_no_violation
      assert_clean(run_chaos("postgres", "on", duration: 12))
    end

    # Under the workers' faults only: with the cluster's and the network's
    # too, a run in ten found no stale write (the pauses fell while the
    # database was down, and the paused writes failed).
    def test_postgres_without_fences_the_checker_finds_stale_writes
      assert_caught(run_chaos("postgres", "off", duration: 16, "NEMESIS" => "workers"))
    end

    # FAILOVER=on: the store's cluster fails over to an asynchronous standby
    # that missed the last grants. With `tokens: :clock_floor` and guards
    # that show their owner, no token is granted twice and no fence admits
    # two grants' writes; with `:sequence` and bare tokens, both happen and
    # the checker finds them.
    def test_postgres_failover_with_clock_floor_tokens_and_owners_has_no_violation
      report = run_chaos("postgres", "on", duration: 8, "FAILOVER" => "on", "FAILOVER_EVERY" => "2",
                                           "TOKENS" => "clock_floor", "OWNERS" => "on")
      assert_operator report.figures[:faults].fetch("pg_failover", 0), :>=, 1, report.summary
      assert_clean(report)
    end

    def test_postgres_failover_with_sequence_tokens_and_bare_guards_the_checker_finds_two_grants
      report = run_chaos("postgres", "on", duration: 9, "FAILOVER" => "on", "FAILOVER_EVERY" => "2",
                                           "TOKENS" => "sequence", "OWNERS" => "off")
      assert_operator report.figures[:faults].fetch("pg_failover", 0), :>=, 1, report.summary
      assert_ran(report)
      kinds = report.violations.map { |violation| violation[:kind] }.uniq
      assert_includes kinds, :duplicate_grant, report.summary
      assert_empty kinds - TWO_GRANTS, "#{report.summary}\n#{report.details}"
    end

    private

    def run_chaos(engine, fencing, duration:, **extra)
      Dir.mktmpdir("chaos-#{engine}-#{fencing}") do |dir|
        env = ENV.to_h.merge(RUN, "ENGINE" => engine, "FENCING" => fencing, "DURATION" => duration.to_s,
                                  "SEED" => (1000 + duration).to_s, "CHAOS_DIR" => dir, **extra)
        settings = Chaos::Settings.new(env)
        begin
          return Chaos::Runner.new(settings, out: StringIO.new).run
        ensure
          network = Chaos::Network.new(settings)
          network.teardown
          refute network.exists?, "the run's network namespaces were removed"
        end
      end
    end

    def assert_ran(report)
      figures = report.figures
      assert_operator figures[:faults].values.sum, :>, 5, "the nemesis injected faults:\n#{report.summary}"
      assert_operator figures[:writes_accepted], :>, 20, "the workers wrote:\n#{report.summary}"
      assert_operator figures[:decisions]["acquire"].fetch("granted", 0), :>, 5, report.summary
    end

    def assert_clean(report)
      assert_ran(report)
      assert_predicate report, :ok?, "#{report.summary}\n#{report.details}"
    end

    # Violations, and only the kinds a stale write makes (the grants and the
    # store's marks are right whether the writes are fenced or not).
    def assert_caught(report)
      assert_ran(report)
      refute_predicate report, :ok?, "stale writes were accepted and caught:\n#{report.summary}"
      kinds = report.violations.map { |violation| violation[:kind] }.uniq
      assert_empty kinds - STALE_WRITE, "#{report.summary}\n#{report.details}"
    end
  end
end
