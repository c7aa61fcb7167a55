# frozen_string_literal: true

require_relative "../test_helper"
require "json"
require "tmpdir"
require_relative "../../chaos/checker"

module LeaseMachines
  # The chaos checker on histories written by hand: a clean one passes, and
  # each property it checks is broken once, including those the unfenced runs
  # never break (the grants and the store's marks), so every check is seen
  # failing.
  class ChaosCheckerTest < Minitest::Test
    R0 = "chaos/r0" # data in the store's database (strict)
    R1 = "chaos/r1" # data in the other database

    def test_a_clean_history_has_no_violation
      report = check(grants: [grant(R0, 1, 100), grant(R0, 2, 300), grant(R1, 1, 100)],
                     rows: [row(1, R0, 1, 150, store: [1, 10_000]), row(2, R0, 2, 350, store: [2, 10_000]),
                            row(3, R1, 1, 150)],
                     last_issued: { R0 => 2, R1 => 1 })
      assert_predicate report, :ok?, report.details
      assert_equal 3, report.figures[:writes_accepted]
    end

    def test_a_stale_write_is_caught_twice
      report = check(grants: [grant(R1, 1, 100), grant(R1, 2, 300)],
                     rows: [row(1, R1, 1, 150), row(2, R1, 2, 350), row(3, R1, 1, 400)], last_issued: { R1 => 2 })
      assert_equal %i[token_went_down write_after_greater], kinds(report)
      assert_match(/write #3 with token 1 was accepted after token 2/, report.details)
    end

    def test_a_write_after_its_lease_ended_is_caught_on_the_strict_resource_only
      rows = [row(1, R0, 1, 150, store: [1, 120]), row(2, R0, 2, 350, store: [3, 10_000]),
              row(3, R1, 1, 150)]
      report = check(grants: [grant(R0, 1, 100), grant(R0, 2, 300), grant(R0, 3, 340), grant(R1, 1, 100)],
                     rows: rows, last_issued: { R0 => 3, R1 => 1 })
      assert_equal %i[expired_lease_write expired_lease_write], kinds(report)
      assert_match(/write #1 with token 1 was accepted: the lease expired/, report.details)
      assert_match(/write #2 with token 2 was accepted: the store's lease was token 3's/, report.details)
    end

    def test_a_token_granted_twice_is_caught
      report = check(grants: [grant(R1, 1, 100), grant(R1, 1, 300, worker: 1)], rows: [], last_issued: { R1 => 1 })
      assert_includes kinds(report), :duplicate_grant
    end

    # A token issued twice (a failover that lost the first grant) and both
    # holders admitted: one grant's record each, and writes from both.
    def test_writes_with_one_token_from_two_grants_are_caught
      report = check(grants: [grant(R1, 1, 100), grant(R1, 1, 300, worker: 1)],
                     rows: [row(1, R1, 1, 150), row(2, R1, 1, 350, worker: 1), row(3, R1, 1, 360, worker: 1)],
                     last_issued: { R1 => 1 })
      assert_equal %i[duplicate_grant grant_out_of_order writes_from_two_grants], kinds(report)
      assert_includes report.details, "writes with token 1 were accepted from two grants: " \
                                      "worker 0 (pid 100, write #1) and worker 1 (pid 101, write #2)"
      clean = check(grants: [grant(R1, 1, 100)], rows: [row(1, R1, 1, 150), row(2, R1, 1, 160)], last_issued: { R1 => 1 })
      assert_predicate clean, :ok?, "one grant's many writes are no violation: #{clean.details}"
    end

    def test_a_smaller_token_granted_after_a_greater_one_ended_is_caught
      report = check(grants: [grant(R1, 2, 100), grant(R1, 1, 300, worker: 1)], rows: [], last_issued: { R1 => 2 })
      assert_equal %i[grant_out_of_order], kinds(report)
    end

    # Overlapping requests may be answered in either order.
    def test_overlapping_grants_may_come_in_either_order
      report = check(grants: [grant(R1, 2, 100, duration: 50), grant(R1, 1, 120, duration: 50, worker: 1)],
                     rows: [], last_issued: { R1 => 2 })
      assert_predicate report, :ok?, report.details
    end

    def test_a_grant_or_a_write_above_the_stores_mark_is_caught
      report = check(grants: [grant(R1, 1, 100), grant(R1, 2, 300)], rows: [row(1, R1, 3, 350)],
                     last_issued: { R1 => 1 })
      assert_equal %i[lost_grant lost_grant], kinds(report)
      assert_match(/token 2 was granted, but the store's last_issued is 1/, report.details)
    end

    private

    def kinds(report)
      report.violations.map { |violation| violation[:kind] }.sort
    end

    def grant(resource, token, at_ns, duration: 10, worker: 0)
      { t: at_ns, event: "acquire", worker: worker, pid: 100 + worker, resource: resource, token: token,
        status: "granted", duration_ns: duration }
    end

    def row(id, resource, token, at_ns, store: [nil, nil], worker: 0)
      { id: id, database: "sqlite", resource: resource, token: token, worker: worker, pid: 100 + worker, sequence: id,
        written_at_ns: at_ns, store_token: store[0], store_expires_ns: store[1], fenced: true }
    end

    def check(grants:, rows:, last_issued:)
      Dir.mktmpdir("chaos-checker") do |dir|
        Dir.mkdir(File.join(dir, "workers"))
        File.write(File.join(dir, "runner.jsonl"),
                   "#{JSON.generate(t: 0, event: 'run', engine: 'sqlite', resources: 2, duration: 1.0, seed: 1)}\n")
        File.write(File.join(dir, "workers", "w0.jsonl"), grants.map { |g| "#{JSON.generate(g)}\n" }.join)
        File.write(File.join(dir, "data.json"), JSON.generate(rows: rows, last_issued: last_issued))
        Chaos::Checker.new(dir).run
      end
    end
  end
end
