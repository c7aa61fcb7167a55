# frozen_string_literal: true

require "test_helper"

module LeaseMachines
  # The authority's clock policies: :reject (the default) refuses a `now`
  # earlier than one already observed; :clamp evaluates the request at the
  # latest observed instant instead.
  class AuthorityClockTest < Minitest::Test
    def test_reject_is_the_default_policy
      assert_equal :reject, Authority.new.clock_policy
      assert_equal :reject, Authority.restore(Authority.new.checkpoint).clock_policy
      assert_equal :clamp, Authority.new(clock_policy: :clamp).clock_policy
      assert_equal :clamp, Authority.restore(Authority.new.checkpoint, clock_policy: :clamp).clock_policy
    end

    def test_reject_refuses_an_earlier_now_at_every_entry_point_and_changes_nothing
      authority = moved_on(:reject)
      before = authority.checkpoint

      assert_same Decision.rejected(:clock_regressed), authority.acquire(owner: 3, now: 19.5, ttl: 100)
      assert_same Decision.rejected(:clock_regressed), authority.reacquire(owner: 12, now: 19.5, ttl: 100)
      assert_same Decision.rejected(:clock_regressed), authority.renew(owner: 12, token: 2, now: 19.5, ttl: 100)
      assert_same Decision.rejected(:clock_regressed), authority.release(owner: 12, token: 2, now: 19.5)
      assert_equal before, authority.checkpoint
    end

    def test_the_same_instant_again_is_not_a_regression
      authority = moved_on(:reject)

      assert_predicate authority.renew(owner: 12, token: 2, now: 20, ttl: 5), :renewed?
    end

    def test_clamp_evaluates_an_earlier_now_at_the_latest_observed_instant
      authority = moved_on(:clamp)

      # At 14 the lease of worker 12 (granted at 16) did not exist; at the
      # observed 20 it is live, so the answer is :occupied.
      assert_same Decision.rejected(:occupied), authority.acquire(owner: 3, now: 14, ttl: 5)
      assert_equal 20_000_000_000, authority.checkpoint.observed_ns
    end

    def test_clamp_cannot_revive_an_expired_lease
      authority = granted_authority(owner: 7, now: 10, ttl: 5, clock_policy: :clamp)
      authority.release(owner: 99, token: 99, now: 20) # advances the clock to 20

      assert_same Decision.rejected(:expired), authority.renew(owner: 7, token: 1, now: 12, ttl: 5)
      assert_same Decision.rejected(:expired), authority.release(owner: 7, token: 1, now: 12)
    end

    def test_clamp_grants_from_the_observed_instant_not_from_the_earlier_now
      authority = Authority.new(clock_policy: :clamp)
      authority.release(owner: 99, token: 99, now: 20)
      decision = authority.acquire(owner: 5, now: 5, ttl: 3)

      assert_equal Lease.new(owner: 5, token: 1, expires_at: 23), decision.lease
      assert_equal 20.0, authority.checkpoint.observed
    end

    def test_clamp_renewal_cannot_shorten_or_move_back_a_deadline
      authority = moved_on(:clamp)
      decision = authority.renew(owner: 12, token: 2, now: 1, ttl: 10)

      assert_equal 30, decision.lease.expires_at
    end

    def test_restore_keeps_the_policy_it_is_given_not_the_originals
      clamped = moved_on(:clamp)
      strict = Authority.restore(clamped.checkpoint)

      assert_same Decision.rejected(:clock_regressed), strict.acquire(owner: 3, now: 1, ttl: 1)
      assert_same Decision.rejected(:occupied), clamped.acquire(owner: 3, now: 1, ttl: 1)
    end

    def test_a_monotonic_clock_reading_is_a_valid_now
      now = Process.clock_gettime(Process::CLOCK_MONOTONIC)
      decision = Authority.new.acquire(owner: 1, now: now, ttl: 30)

      assert_predicate decision, :granted?
      assert_in_delta now + 30, decision.lease.expires_at, 1e-6
      refute decision.lease.expired?(now + 29.9)
      assert decision.lease.expired?(now + 30.1)
    end

    def test_nanosecond_resolution_is_kept_for_the_clock
      authority = Authority.new
      authority.acquire(owner: 1, now: 0.000000001, ttl: 1)

      assert_equal 1, authority.checkpoint.observed_ns
      assert_same Decision.rejected(:clock_regressed), authority.acquire(owner: 1, now: 0, ttl: 1)
    end

    private

    # Worker 7 held 10..15; worker 12 took over at 16 (token 2, until 21) and
    # renewed at 20 until 30. The clock has observed 20.
    def moved_on(policy)
      authority = granted_authority(owner: 7, now: 10, ttl: 5, clock_policy: policy)
      assert_predicate authority.acquire(owner: 12, now: 16, ttl: 5), :granted?
      assert_predicate authority.renew(owner: 12, token: 2, now: 20, ttl: 10), :renewed?
      authority
    end
  end
end
