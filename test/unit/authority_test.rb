# frozen_string_literal: true

require "test_helper"

module LeaseMachines
  # Every status and every rejection reason through the Ruby API, and the order
  # of checks of SPEC section 2.1.
  class AuthorityTest < Minitest::Test
    def test_a_fresh_history_grants_token_one_until_now_plus_ttl
      decision = Authority.new.acquire(owner: 7, now: 10, ttl: 5)

      assert_equal :granted, decision.status
      assert_predicate decision, :granted?
      assert_nil decision.reason
      assert_equal Lease.new(owner: 7, token: 1, expires_at: 15), decision.lease
      assert_equal 15_000_000_000, decision.lease.expires_at_ns
      assert_equal 15.0, decision.lease.expires_at
    end

    def test_integer_and_float_seconds_are_the_same_instant
      from_integers = Authority.new.acquire(owner: 1, now: 2, ttl: 3)
      from_floats = Authority.new.acquire(owner: 1, now: 2.0, ttl: 3.0)

      assert_equal from_integers, from_floats
    end

    def test_owner_zero_and_the_largest_owner_are_ordinary_owners
      low = Authority.new.acquire(owner: 0, now: 0, ttl: 1)
      high = Authority.new.acquire(owner: U64_MAX, now: 0, ttl: 1)

      assert_equal 0, low.lease.owner
      assert_equal U64_MAX, high.lease.owner
    end

    def test_tokens_increase_by_one_with_every_grant_and_are_never_reused
      authority = Authority.new
      tokens = (0...5).map do |step|
        decision = authority.acquire(owner: step, now: step * 10, ttl: 1)
        assert_predicate decision, :granted?
        decision.lease.token
      end

      assert_equal [1, 2, 3, 4, 5], tokens
      assert_equal 5, authority.checkpoint.last_issued
    end

    def test_a_live_lease_is_occupied_for_everyone_even_its_owner
      authority = granted_authority(owner: 7, now: 10, ttl: 5)

      assert_same Decision.rejected(:occupied), authority.acquire(owner: 7, now: 14, ttl: 5)
      assert_same Decision.rejected(:occupied), authority.acquire(owner: 12, now: 14.999, ttl: 5)
      assert_equal 1, authority.checkpoint.last_issued
    end

    def test_a_lease_has_expired_at_exactly_its_expiry
      authority = granted_authority(owner: 7, now: 10, ttl: 5)
      decision = authority.acquire(owner: 12, now: 15, ttl: 5)

      assert_predicate decision, :granted?
      assert_equal Lease.new(owner: 12, token: 2, expires_at: 20), decision.lease
    end

    def test_reacquire_rotates_the_owners_own_live_lease_to_a_new_token
      authority = granted_authority(owner: 7, now: 10, ttl: 5)
      decision = authority.reacquire(owner: 7, now: 11, ttl: 30)

      assert_predicate decision, :granted?
      assert_equal Lease.new(owner: 7, token: 2, expires_at: 41), decision.lease
      # Anything still holding token 1 is stale from now on.
      assert_same Decision.rejected(:stale_token), authority.renew(owner: 7, token: 1, now: 12, ttl: 5)
      assert_same Decision.rejected(:stale_token), authority.release(owner: 7, token: 1, now: 12)
    end

    def test_reacquire_is_occupied_for_another_owner_and_grants_a_free_resource
      authority = granted_authority(owner: 7, now: 10, ttl: 5)

      assert_same Decision.rejected(:occupied), authority.reacquire(owner: 12, now: 11, ttl: 5)
      granted = authority.reacquire(owner: 12, now: 15, ttl: 5)

      assert_equal Lease.new(owner: 12, token: 2, expires_at: 20), granted.lease
      assert_predicate Authority.new.reacquire(owner: 1, now: 0, ttl: 1), :granted?
    end

    def test_renew_keeps_the_token_and_moves_the_expiry_to_now_plus_ttl
      authority = granted_authority(owner: 7, now: 10, ttl: 5)
      decision = authority.renew(owner: 7, token: 1, now: 13, ttl: 5)

      assert_equal :renewed, decision.status
      assert_predicate decision, :renewed?
      assert_nil decision.reason
      assert_equal Lease.new(owner: 7, token: 1, expires_at: 18), decision.lease
      assert_equal decision.lease, authority.checkpoint.lease
    end

    def test_renew_never_shortens_a_lease
      authority = granted_authority(owner: 7, now: 10, ttl: 60)
      decision = authority.renew(owner: 7, token: 1, now: 11, ttl: 1)

      assert_predicate decision, :renewed?
      assert_equal 70, decision.lease.expires_at
    end

    def test_renew_never_resurrects_an_expired_lease
      authority = granted_authority(owner: 7, now: 10, ttl: 5)

      assert_same Decision.rejected(:expired), authority.renew(owner: 7, token: 1, now: 15, ttl: 5)
      assert_same Decision.rejected(:expired), authority.renew(owner: 7, token: 1, now: 100, ttl: 5)
    end

    def test_renew_rejections
      authority = granted_authority(owner: 7, now: 10, ttl: 5)

      assert_same Decision.rejected(:stale_token), authority.renew(owner: 7, token: 2, now: 11, ttl: 5)
      assert_same Decision.rejected(:stale_token), authority.renew(owner: 7, token: 0, now: 11, ttl: 5)
      assert_same Decision.rejected(:not_owner), authority.renew(owner: 12, token: 1, now: 11, ttl: 5)
      assert_same Decision.rejected(:invalid_ttl), authority.renew(owner: 7, token: 1, now: 11, ttl: 0)
      assert_same Decision.rejected(:clock_regressed), authority.renew(owner: 7, token: 1, now: 9, ttl: 5)
      assert_same Decision.rejected(:stale_token), Authority.new.renew(owner: 7, token: 1, now: 0, ttl: 5)
    end

    def test_renew_past_the_largest_instant_is_a_deadline_overflow
      authority = granted_authority(owner: 7, now: U64_MAX - 10, ttl: 5)

      assert_same Decision.rejected(:deadline_overflow), authority.renew(owner: 7, token: 1, now: U64_MAX - 9, ttl: 10)
    end

    def test_release_answers_the_shared_released_decision_and_keeps_the_high_water_mark
      authority = granted_authority(owner: 7, now: 10, ttl: 5)
      decision = authority.release(owner: 7, token: 1, now: 11)

      assert_same Decision::RELEASED, decision
      assert_equal :released, decision.status
      assert_predicate decision, :released?
      assert_nil decision.lease
      assert_nil decision.reason
      assert_nil authority.checkpoint.lease
      assert_equal 1, authority.checkpoint.last_issued
      # The next grant, even to the same owner, carries a greater token.
      assert_equal 2, authority.acquire(owner: 7, now: 11, ttl: 5).lease.token
    end

    def test_release_rejections
      authority = granted_authority(owner: 7, now: 10, ttl: 5)

      assert_same Decision.rejected(:stale_token), authority.release(owner: 7, token: 2, now: 11)
      assert_same Decision.rejected(:stale_token), authority.release(owner: 7, token: 0, now: 11)
      assert_same Decision.rejected(:not_owner), authority.release(owner: 12, token: 1, now: 11)
      assert_same Decision.rejected(:clock_regressed), authority.release(owner: 7, token: 1, now: 10.5)
      assert_same Decision.rejected(:expired), authority.release(owner: 7, token: 1, now: 15)
      assert_same Decision.rejected(:stale_token), Authority.new.release(owner: 7, token: 1, now: 0)
    end

    def test_a_zero_ttl_is_an_invalid_ttl_decision_not_an_error
      assert_same Decision.rejected(:invalid_ttl), Authority.new.acquire(owner: 1, now: 0, ttl: 0)
      assert_same Decision.rejected(:invalid_ttl), Authority.new.reacquire(owner: 1, now: 0, ttl: 0.0)
    end

    def test_a_deadline_past_the_largest_instant_is_a_deadline_overflow
      assert_same Decision.rejected(:deadline_overflow), Authority.new.acquire(owner: 1, now: U64_MAX, ttl: 1)
      assert_same Decision.rejected(:deadline_overflow), Authority.new.reacquire(owner: 1, now: 1, ttl: U64_MAX)
      granted = Authority.new.acquire(owner: 1, now: U64_MAX - 1, ttl: 1)

      assert_equal U64_MAX * 1_000_000_000, granted.lease.expires_at_ns
    end

    def test_the_last_token_is_issued_once_and_then_the_history_fails_closed
      mark = Checkpoint.from_parts(last_issued: U64_MAX - 1, lease: nil, observed: 0)
      authority = Authority.restore(mark)

      assert_equal U64_MAX, authority.acquire(owner: 1, now: 1, ttl: 1).lease.token
      assert_same Decision.rejected(:tokens_exhausted), authority.acquire(owner: 1, now: 2, ttl: 1)
      assert_same Decision.rejected(:tokens_exhausted), authority.reacquire(owner: 1, now: 3, ttl: 1)
      assert_equal U64_MAX, authority.checkpoint.last_issued
    end

    def test_every_rejection_reason_is_reachable_and_shared
      reasons = rejections_by_reason

      assert_equal Decision::REASONS.sort, reasons.keys.sort
      reasons.each do |reason, decision|
        assert_same Decision.rejected(reason), decision
        assert_equal :rejected, decision.status
        assert_equal reason, decision.reason
        assert_nil decision.lease
        assert_predicate decision, :rejected?
        refute_predicate decision, :granted?
        assert_predicate decision, :frozen?
      end
    end

    def test_every_status_is_reachable
      authority = Authority.new
      statuses = [
        authority.acquire(owner: 1, now: 0, ttl: 5),
        authority.renew(owner: 1, token: 1, now: 1, ttl: 5),
        authority.release(owner: 1, token: 1, now: 2),
        authority.release(owner: 1, token: 1, now: 3)
      ].map(&:status)

      assert_equal Decision::STATUSES, statuses
    end

    def test_grants_and_renewals_are_fresh_objects
      authority = Authority.new
      first = authority.acquire(owner: 1, now: 0, ttl: 5)
      second = authority.renew(owner: 1, token: 1, now: 0, ttl: 5)

      refute_same first, second
      refute_same first.lease, second.lease
      assert_equal first.lease, second.lease
    end

    # SPEC 2.1 steps 1-7: each pair below breaks two checks at once; the
    # earlier check must answer.
    def test_acquire_checks_in_order
      live = -> { granted_authority(owner: 7, now: 10, ttl: 5) }

      assert_same Decision.rejected(:clock_regressed), live.call.acquire(owner: 1, now: 9, ttl: 0)
      assert_same Decision.rejected(:invalid_ttl), live.call.acquire(owner: 1, now: U64_MAX, ttl: 0)
      assert_same Decision.rejected(:deadline_overflow), live.call.acquire(owner: 7, now: 11, ttl: U64_MAX)

      exhausted = Authority.restore(
        Checkpoint.from_parts(last_issued: U64_MAX, lease: Lease.new(owner: 7, token: U64_MAX, expires_at: 20), observed: 0)
      )

      assert_same Decision.rejected(:occupied), exhausted.acquire(owner: 1, now: 1, ttl: 1)
      assert_same Decision.rejected(:tokens_exhausted), exhausted.acquire(owner: 1, now: 20, ttl: 1)
    end

    def test_renew_checks_in_order
      authority = granted_authority(owner: 7, now: 10, ttl: 5)

      assert_same Decision.rejected(:clock_regressed), authority.renew(owner: 12, token: 9, now: 9, ttl: 0)
      assert_same Decision.rejected(:invalid_ttl), authority.renew(owner: 12, token: 9, now: 11, ttl: 0)
      assert_same Decision.rejected(:stale_token), authority.renew(owner: 12, token: 9, now: 16, ttl: U64_MAX)
      assert_same Decision.rejected(:not_owner), authority.renew(owner: 12, token: 1, now: 16, ttl: U64_MAX)
      assert_same Decision.rejected(:expired), authority.renew(owner: 7, token: 1, now: 16, ttl: U64_MAX)
    end

    def test_release_checks_in_order
      authority = granted_authority(owner: 7, now: 10, ttl: 5)

      assert_same Decision.rejected(:clock_regressed), authority.release(owner: 12, token: 9, now: 9)
      assert_same Decision.rejected(:stale_token), authority.release(owner: 12, token: 9, now: 16)
      assert_same Decision.rejected(:not_owner), authority.release(owner: 12, token: 1, now: 16)
      assert_same Decision.rejected(:expired), authority.release(owner: 7, token: 1, now: 16)
    end

    def test_a_rejection_at_a_later_instant_still_advances_the_clock
      authority = granted_authority(owner: 7, now: 10, ttl: 5)
      authority.acquire(owner: 12, now: 12.5, ttl: 5)

      assert_equal 12_500_000_000, authority.checkpoint.observed_ns
      assert_same Decision.rejected(:clock_regressed), authority.acquire(owner: 12, now: 12, ttl: 5)
    end

    def test_a_clock_regression_changes_nothing
      authority = granted_authority(owner: 7, now: 10, ttl: 5)
      before = authority.checkpoint
      authority.acquire(owner: 12, now: 1, ttl: 5)
      authority.reacquire(owner: 7, now: 1, ttl: 5)
      authority.renew(owner: 7, token: 1, now: 1, ttl: 5)
      authority.release(owner: 7, token: 1, now: 1)

      assert_equal before, authority.checkpoint
    end

    def test_inspect_shows_the_policy_and_the_state
      authority = granted_authority(owner: 7, now: 10, ttl: 5)

      assert_equal "#<LeaseMachines::Authority clock_policy=:reject last_issued=1 " \
                   "lease=#<LeaseMachines::Lease owner=7 token=1 expires_at=15.0> observed=10.0>",
                   authority.inspect
      assert_equal authority.inspect, authority.to_s
    end

    private

    def rejections_by_reason
      live = -> { granted_authority(owner: 7, now: 10, ttl: 5) }
      exhausted = Authority.restore(Checkpoint.from_parts(last_issued: U64_MAX, lease: nil, observed: 0))
      {
        occupied: live.call.acquire(owner: 12, now: 11, ttl: 5),
        stale_token: live.call.renew(owner: 7, token: 2, now: 11, ttl: 5),
        not_owner: live.call.release(owner: 12, token: 1, now: 11),
        expired: live.call.renew(owner: 7, token: 1, now: 15, ttl: 5),
        clock_regressed: live.call.reacquire(owner: 7, now: 9, ttl: 5),
        invalid_ttl: live.call.renew(owner: 7, token: 1, now: 11, ttl: 0),
        deadline_overflow: live.call.reacquire(owner: 7, now: 11, ttl: U64_MAX),
        tokens_exhausted: exhausted.acquire(owner: 1, now: 0, ttl: 1)
      }
    end
  end
end
