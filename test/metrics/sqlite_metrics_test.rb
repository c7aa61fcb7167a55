# frozen_string_literal: true

require_relative "metrics_helper"
require "tmpdir"
require "lease_machines/stores/sqlite"
require "lease_machines/fences/sqlite"

module LeaseMachines
  # The registry on real parts: holds on an SQLite store on disk, renewed by
  # the renewal thread on the real clock, and an SQLite fence refusing a
  # stale write.
  class SQLiteMetricsTest < Minitest::Test
    include MetricsHelper

    RESOURCE = "reports/nightly"

    def setup
      super
      @dir = Dir.mktmpdir("lease_machines_metrics")
      path = File.join(@dir, "leases.sqlite3")
      @store = Stores::SQLite.new(path).setup!
      @fences = Fences::SQLite.new(path).setup!
    end

    def teardown
      @fences.close
      @store.close
      FileUtils.remove_entry(@dir)
      super
    end

    def test_a_stale_write_refused_by_the_fence_is_counted
      stale = assert_raises(FencedError) do
        @store.authority(RESOURCE).hold(owner: 1, ttl: 30) do |held|
          @store.force_release(RESOURCE) # an operator steps in; the next holder writes
          @store.authority(RESOURCE).hold(owner: 2, ttl: 30) { |newer| @fences.guard(RESOURCE, newer.token) { :written } }
          @fences.guard(RESOURCE, held.token) { flunk "a stale write ran" }
        end
      end
      assert_equal 1, stale.token

      text = exposition
      assert_equal 1.0, text.value("lease_machines_fence_refusals_total", family: "reports", reason: "stale")
      assert_equal 1.0, text.value("lease_machines_fenced_holds_total", family: "reports")
      assert_equal 1.0, text.value("lease_machines_lost_total", family: "reports", reason: "fenced")
      assert_equal 2.0, text.value("lease_machines_grants_total", family: "reports")
    end

    def test_a_fence_counts_refusals_outside_any_hold_too
      @fences.guard(RESOURCE, 5) { :written }
      2.times { assert_raises(FencedError) { @fences.guard(RESOURCE, 4) { flunk "ran" } } }
      assert_raises(FencedError) { @fences.guard(RESOURCE, 0) { flunk "ran" } }

      text = exposition
      assert_equal 2.0, text.value("lease_machines_fence_refusals_total", family: "reports", reason: "stale")
      assert_equal 1.0, text.value("lease_machines_fence_refusals_total", family: "reports", reason: "zero_token")
    end

    def test_real_renewals_on_the_renewal_thread
      # renew_after is ttl / 3 = 0.1 s: the hold is renewed at least twice.
      @store.authority(RESOURCE).hold(owner: 1, ttl: 0.3) { sleep 0.35 }

      text = exposition
      renewed = text.value("lease_machines_renewals_total", family: "reports", status: "renewed")
      assert_operator renewed, :>=, 2
      count, sum = observed("lease_machines_renewal_lateness_seconds", family: "reports")
      assert_equal renewed, count, "every renewal's lateness is observed"
      assert_operator sum, :>=, 0.0
      assert_equal renewed, text.value("lease_machines_store_call_seconds_count", family: "reports", event: "renew")
      held_count, held_sum = observed("lease_machines_held_seconds", family: "reports")
      assert_equal 1.0, held_count
      assert_operator held_sum, :>=, 0.35
    end
  end
end
