# frozen_string_literal: true

require "test_helper"
require "tmpdir"
require "lease_machines/fences/sqlite"
require "lease_machines/stores/sqlite"

module LeaseMachines
  # A fence reports every write it refuses (`fence_refused`): a real SQLite
  # fence, a real stale token.
  class RefusalEventsTest < Minitest::Test
    def setup
      @dir = Dir.mktmpdir("lease_machines_refusals")
      @path = File.join(@dir, "fences.sqlite3")
      @fences = Fences::SQLite.new(@path).setup!
      @events = []
      @subscriber = LeaseMachines.subscribe { |name, payload| @events << [name, payload] }
    end

    def teardown
      LeaseMachines.unsubscribe(@subscriber)
      @fences.close
      FileUtils.remove_entry(@dir)
    end

    def refusals
      @events.select { |name, _| name == :fence_refused }.map(&:last)
    end

    def test_a_stale_write_refused_by_the_fence_is_an_event
      @fences.guard("reports/nightly", 2) { :written }
      assert_empty refusals, "an admitted write is not one"
      assert_raises(FencedError) { @fences.guard("reports/nightly", 1) { flunk "ran" } }
      assert_equal [{ resource: "reports/nightly", owner: nil, token: 1, status: :refused, reason: :stale,
                      duration: nil, highest: 2 }], refusals
      assert_predicate refusals.first, :frozen?
    end

    def test_token_zero_is_refused_with_its_own_reason
      assert_raises(FencedError) { @fences.guard("reports/nightly", 0) { flunk "ran" } }
      assert_equal([[:zero_token, nil]], refusals.map { |payload| payload.values_at(:reason, :highest) })
    end

    def test_a_bound_fence_tells_an_unknown_token_from_a_stale_one
      Stores::SQLite.new(@path).setup!.close
      bound = Fences::SQLite.new(@path, store: true)
      assert_raises(UnknownTokenError) { bound.guard("reports/nightly", 9) { flunk "ran" } }
      assert_equal([:unknown_token], refusals.map { |payload| payload[:reason] })
    ensure
      bound&.close
    end

    def test_a_token_written_by_another_owner_is_refused_as_reissued
      @fences.guard("reports/nightly", 5, owner: 7) { :written }
      assert_raises(ReissuedTokenError) { @fences.guard("reports/nightly", 5, owner: 8) { flunk "ran" } }
      assert_equal([[:reissued, 5, 5]], refusals.map { |payload| payload.values_at(:reason, :token, :highest) })
    end

    def test_a_forged_proof_is_refused_with_its_own_reason
      signed = Fences::SQLite.new(@path, signing_keys: ["k" * 32])
      assert_raises(ForgedTokenError) { signed.guard("reports/nightly", 3, proof: "0" * 64, owner: 1) { flunk "ran" } }
      assert_equal([:forged_token], refusals.map { |payload| payload[:reason] })
    ensure
      signed&.close
    end
  end
end
