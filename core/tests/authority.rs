//! Every rejection and every step of the order of checks (SPEC 2.1) for
//! acquire, reacquire, renew and release, plus checkpoints (SPEC 2.2).
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    clippy::arithmetic_side_effects
)]

use std::collections::BTreeSet;
use std::time::Duration;

use lease_machines::{
    Checkpoint, ClockPolicy, Decision, FencingToken, Lease, LeaseAuthority, OwnerId, Rejection,
};

const ALICE: OwnerId = OwnerId::new(1);
const BOB: OwnerId = OwnerId::new(2);
const ONE_NS: Duration = Duration::from_nanos(1);

fn secs(n: u64) -> Duration {
    Duration::from_secs(n)
}

fn token(n: u64) -> FencingToken {
    FencingToken::new(n).unwrap()
}

fn granted(decision: Decision) -> Lease {
    match decision {
        Decision::Granted(lease) => lease,
        other => panic!("expected a grant, got {other:?}"),
    }
}

fn renewed(decision: Decision) -> Lease {
    match decision {
        Decision::Renewed(lease) => lease,
        other => panic!("expected a renewal, got {other:?}"),
    }
}

fn rejected(reason: Rejection) -> Decision {
    Decision::Rejected(reason)
}

/// An authority in which ALICE holds token 1 from 0 s until 10 s.
fn held_by_alice(policy: ClockPolicy) -> (LeaseAuthority, Lease) {
    let mut authority = LeaseAuthority::new().with_clock_policy(policy);
    let lease = granted(authority.acquire(ALICE, secs(0), secs(10)));
    (authority, lease)
}

/// An authority that has observed `at` and holds nothing.
fn observed_at(policy: ClockPolicy, at: Duration) -> LeaseAuthority {
    LeaseAuthority::restore(Checkpoint::from_parts(None, None, at).unwrap())
        .with_clock_policy(policy)
}

const POLICIES: [ClockPolicy; 2] = [ClockPolicy::Reject, ClockPolicy::Clamp];

// ---------------------------------------------------------------- fresh state

#[test]
fn a_fresh_authority_is_empty_and_strict() {
    let authority = LeaseAuthority::new();
    assert_eq!(authority.clock_policy(), ClockPolicy::Reject);
    assert_eq!(authority.lease(), None);
    assert_eq!(authority.last_issued(), None);
    assert_eq!(authority.observed(), Duration::ZERO);
    assert_eq!(authority, LeaseAuthority::default());
    assert_eq!(ClockPolicy::default(), ClockPolicy::Reject);
    assert_eq!(
        authority
            .with_clock_policy(ClockPolicy::Clamp)
            .clock_policy(),
        ClockPolicy::Clamp
    );
}

// -------------------------------------------------------------------- acquire

#[test]
fn acquire_grants_token_one_until_now_plus_ttl() {
    let mut authority = LeaseAuthority::new();
    let lease = granted(authority.acquire(ALICE, secs(3), secs(10)));
    assert_eq!(lease, Lease::new(ALICE, token(1), secs(13)));
    assert_eq!(authority.lease(), Some(lease));
    assert_eq!(authority.last_issued(), Some(token(1)));
    assert_eq!(authority.observed(), secs(3));
}

#[test]
fn step1_regressing_clock_under_reject_changes_nothing_for_every_request() {
    let (authority, lease) = held_by_alice(ClockPolicy::Reject);
    let mut authority = authority;
    // Move the observed clock to 5 s with an accepted renewal.
    let lease = renewed(authority.renew(ALICE, lease.token(), secs(5), secs(10)));
    let before = authority.checkpoint();

    let requests: [fn(&mut LeaseAuthority, FencingToken) -> Decision; 4] = [
        |a, _| a.acquire(BOB, secs(4), secs(10)),
        |a, _| a.reacquire(ALICE, secs(4), secs(10)),
        |a, t| a.renew(ALICE, t, secs(4), secs(10)),
        |a, t| a.release(ALICE, t, secs(4)),
    ];
    for request in requests {
        let mut copy = authority;
        assert_eq!(
            request(&mut copy, lease.token()),
            rejected(Rejection::ClockRegressed)
        );
        assert_eq!(
            copy.checkpoint(),
            before,
            "a refused regression changed the state"
        );
    }
    // One nanosecond back is already a regression.
    assert_eq!(
        authority.acquire(BOB, secs(5) - ONE_NS, secs(1)),
        rejected(Rejection::ClockRegressed)
    );
    assert_eq!(authority.checkpoint(), before);
    // The same instant is not a regression.
    assert_eq!(
        authority.acquire(BOB, secs(5), secs(1)),
        rejected(Rejection::Occupied)
    );
}

#[test]
fn step1_regression_is_checked_before_the_ttl_and_the_token() {
    let mut authority = observed_at(ClockPolicy::Reject, secs(5));
    assert_eq!(
        authority.acquire(ALICE, secs(4), Duration::ZERO),
        rejected(Rejection::ClockRegressed)
    );
    assert_eq!(
        authority.reacquire(ALICE, secs(4), Duration::MAX),
        rejected(Rejection::ClockRegressed)
    );
    assert_eq!(
        authority.renew(ALICE, None, secs(4), Duration::ZERO),
        rejected(Rejection::ClockRegressed)
    );
    assert_eq!(
        authority.release(ALICE, None, secs(4)),
        rejected(Rejection::ClockRegressed)
    );
    assert_eq!(authority.observed(), secs(5));
}

#[test]
fn step1_clamp_evaluates_a_regressing_acquire_at_the_observed_instant() {
    let (mut authority, first) = held_by_alice(ClockPolicy::Clamp);
    // Observe 10 s, the instant the lease lapses.
    assert_eq!(
        authority.acquire(BOB, secs(10), Duration::ZERO),
        rejected(Rejection::InvalidTtl)
    );
    // At 9 s the lease would still be live; evaluated at 10 s it has lapsed,
    // and the new lease counts from 10 s, not 9 s.
    let lease = granted(authority.acquire(BOB, secs(9), secs(5)));
    assert_eq!(
        lease,
        Lease::new(BOB, first.token().next().unwrap(), secs(15))
    );
    assert_eq!(
        authority.observed(),
        secs(10),
        "clamp never moves the clock back"
    );
}

#[test]
fn step1_clamp_evaluates_a_regressing_reacquire_at_the_observed_instant() {
    let (mut authority, first) = held_by_alice(ClockPolicy::Clamp);
    let _ = authority.acquire(BOB, secs(4), secs(3)); // observe 4 s (Occupied)
    let lease = granted(authority.reacquire(ALICE, secs(1), secs(2)));
    assert_eq!(
        lease,
        Lease::new(ALICE, first.token().next().unwrap(), secs(6))
    );
    assert_eq!(authority.observed(), secs(4));
}

#[test]
fn step1_clamp_evaluates_a_regressing_renew_at_the_observed_instant() {
    let (mut authority, lease) = held_by_alice(ClockPolicy::Clamp);
    let _ = authority.acquire(BOB, secs(6), secs(1)); // observe 6 s
                                                      // Renewal sent with 2 s: evaluated at 6 s, so it ends at 6 + 8 = 14 s.
    let renewed = renewed(authority.renew(ALICE, lease.token(), secs(2), secs(8)));
    assert_eq!(renewed.expires_at(), secs(14));

    // Once the observed clock passes the deadline, a regressing renewal is
    // Expired although its own `now` is before the deadline.
    let _ = authority.acquire(BOB, secs(14), Duration::ZERO); // observe 14 s
    assert_eq!(
        authority.renew(ALICE, lease.token(), secs(13), secs(8)),
        rejected(Rejection::Expired)
    );
    assert_eq!(authority.lease(), Some(renewed));
}

#[test]
fn step1_clamp_evaluates_a_regressing_release_at_the_observed_instant() {
    let (mut authority, lease) = held_by_alice(ClockPolicy::Clamp);
    let _ = authority.acquire(BOB, secs(10), Duration::ZERO); // observe 10 s
    assert_eq!(
        authority.release(ALICE, lease.token(), secs(9)),
        rejected(Rejection::Expired)
    );
    assert_eq!(authority.lease(), Some(lease));

    let (mut authority, lease) = held_by_alice(ClockPolicy::Clamp);
    let _ = authority.acquire(BOB, secs(5), Duration::ZERO); // observe 5 s
    assert_eq!(
        authority.release(ALICE, lease.token(), secs(1)),
        Decision::Released
    );
    assert_eq!(authority.observed(), secs(5));
}

#[test]
fn step1_clamp_overflow_is_computed_from_the_observed_instant() {
    let mut authority = observed_at(ClockPolicy::Clamp, Duration::MAX - secs(1));
    // now + ttl fits (0 + 2 s) but observed + ttl does not.
    assert_eq!(
        authority.acquire(ALICE, Duration::ZERO, secs(2)),
        rejected(Rejection::DeadlineOverflow)
    );
    let lease = granted(authority.acquire(ALICE, Duration::ZERO, secs(1)));
    assert_eq!(lease.expires_at(), Duration::MAX);
}

#[test]
fn step2_a_non_regressing_observation_advances_the_clock_even_when_rejected() {
    for policy in POLICIES {
        // InvalidTtl
        let mut authority = LeaseAuthority::new().with_clock_policy(policy);
        assert_eq!(
            authority.acquire(ALICE, secs(7), Duration::ZERO),
            rejected(Rejection::InvalidTtl)
        );
        assert_eq!(authority.observed(), secs(7));
        assert_eq!(authority.lease(), None);
        assert_eq!(authority.last_issued(), None);

        // Occupied, StaleToken, NotOwner, Expired
        let (mut authority, lease) = held_by_alice(policy);
        assert_eq!(
            authority.acquire(BOB, secs(2), secs(1)),
            rejected(Rejection::Occupied)
        );
        assert_eq!(authority.observed(), secs(2));
        assert_eq!(
            authority.renew(ALICE, token(9), secs(3), secs(1)),
            rejected(Rejection::StaleToken)
        );
        assert_eq!(authority.observed(), secs(3));
        assert_eq!(
            authority.release(BOB, lease.token(), secs(4)),
            rejected(Rejection::NotOwner)
        );
        assert_eq!(authority.observed(), secs(4));
        assert_eq!(
            authority.release(ALICE, lease.token(), secs(12)),
            rejected(Rejection::Expired)
        );
        assert_eq!(authority.observed(), secs(12));
        assert_eq!(authority.lease(), Some(lease));
        assert_eq!(authority.last_issued(), Some(lease.token()));

        // DeadlineOverflow at the end of time moves the clock to the end of time.
        let mut authority = LeaseAuthority::new().with_clock_policy(policy);
        assert_eq!(
            authority.acquire(ALICE, Duration::MAX, ONE_NS),
            rejected(Rejection::DeadlineOverflow)
        );
        assert_eq!(authority.observed(), Duration::MAX);
    }
}

#[test]
fn step2_the_advanced_clock_is_observable_by_the_next_request() {
    let mut authority = LeaseAuthority::new();
    let _ = authority.acquire(ALICE, secs(7), Duration::ZERO); // rejected, but observed
    assert_eq!(
        authority.acquire(ALICE, secs(6), secs(1)),
        rejected(Rejection::ClockRegressed)
    );

    let mut authority = LeaseAuthority::new().with_clock_policy(ClockPolicy::Clamp);
    let _ = authority.acquire(ALICE, secs(7), Duration::ZERO); // rejected, but observed
    let lease = granted(authority.acquire(ALICE, secs(6), secs(1)));
    assert_eq!(lease.expires_at(), secs(8), "evaluated at 7 s, not 6 s");
}

#[test]
fn step3_zero_ttl_is_invalid_and_checked_before_overflow_and_occupancy() {
    for policy in POLICIES {
        let mut authority = LeaseAuthority::new().with_clock_policy(policy);
        assert_eq!(
            authority.acquire(ALICE, Duration::MAX, Duration::ZERO),
            rejected(Rejection::InvalidTtl)
        );
        let (mut authority, _) = held_by_alice(policy);
        assert_eq!(
            authority.acquire(BOB, secs(1), Duration::ZERO),
            rejected(Rejection::InvalidTtl)
        );
        assert_eq!(
            authority.reacquire(ALICE, secs(1), Duration::ZERO),
            rejected(Rejection::InvalidTtl)
        );
        // One nanosecond is a valid TTL.
        let mut authority = LeaseAuthority::new().with_clock_policy(policy);
        let lease = granted(authority.acquire(ALICE, secs(1), ONE_NS));
        assert_eq!(lease.expires_at(), secs(1) + ONE_NS);
    }
}

#[test]
fn step4_deadline_overflow_at_the_end_of_time() {
    let mut authority = LeaseAuthority::new();
    assert_eq!(
        authority.acquire(ALICE, secs(1), Duration::MAX),
        rejected(Rejection::DeadlineOverflow)
    );
    assert_eq!(
        authority.acquire(ALICE, Duration::MAX, ONE_NS),
        rejected(Rejection::DeadlineOverflow)
    );
    assert_eq!(
        authority.acquire(ALICE, Duration::MAX, Duration::MAX),
        rejected(Rejection::DeadlineOverflow)
    );
    assert_eq!(authority.lease(), None);
    assert_eq!(authority.last_issued(), None);

    // Exactly reaching Duration::MAX is fine.
    let mut authority = LeaseAuthority::new();
    let lease = granted(authority.acquire(ALICE, Duration::MAX - ONE_NS, ONE_NS));
    assert_eq!(lease.expires_at(), Duration::MAX);
    let mut authority = LeaseAuthority::new();
    let lease = granted(authority.acquire(ALICE, Duration::ZERO, Duration::MAX));
    assert_eq!(lease.expires_at(), Duration::MAX);
    // ... and such a lease never lapses: even at Duration::MAX - 1 ns it is held.
    assert_eq!(
        authority.acquire(BOB, Duration::MAX - ONE_NS, ONE_NS),
        rejected(Rejection::Occupied)
    );
}

#[test]
fn step4_overflow_is_checked_before_occupancy_and_exhaustion() {
    let (mut authority, _) = held_by_alice(ClockPolicy::Reject);
    assert_eq!(
        authority.acquire(BOB, secs(1), Duration::MAX),
        rejected(Rejection::DeadlineOverflow)
    );
    let mut exhausted = LeaseAuthority::restore(
        Checkpoint::from_parts(Some(FencingToken::MAX), None, secs(0)).unwrap(),
    );
    assert_eq!(
        exhausted.acquire(ALICE, secs(1), Duration::MAX),
        rejected(Rejection::DeadlineOverflow)
    );
}

#[test]
fn step5_a_live_lease_is_occupied_for_others_until_the_instant_it_expires() {
    for policy in POLICIES {
        let (mut authority, lease) = held_by_alice(policy);
        let before = authority.checkpoint();
        assert_eq!(
            authority.acquire(BOB, secs(10) - ONE_NS, secs(5)),
            rejected(Rejection::Occupied)
        );
        assert_eq!(authority.lease(), before.lease());
        assert_eq!(authority.last_issued(), before.last_issued());
        assert_eq!(
            authority.reacquire(BOB, secs(10) - ONE_NS, secs(5)),
            rejected(Rejection::Occupied)
        );
        // At expires_at the lease has lapsed.
        let next = granted(authority.acquire(BOB, secs(10), secs(5)));
        assert_eq!(next, Lease::new(BOB, token(2), secs(15)));
        assert!(next.token() > lease.token());
    }
}

#[test]
fn step5_plain_acquire_is_occupied_for_the_current_owner_too() {
    let (mut authority, lease) = held_by_alice(ClockPolicy::Reject);
    assert_eq!(
        authority.acquire(ALICE, secs(1), secs(30)),
        rejected(Rejection::Occupied)
    );
    assert_eq!(
        authority.lease(),
        Some(lease),
        "plain acquire never rotates a live grant"
    );
    assert_eq!(authority.last_issued(), Some(lease.token()));
    // After expiry the same owner simply gets a new grant with a new token.
    let again = granted(authority.acquire(ALICE, secs(10), secs(30)));
    assert_eq!(again, Lease::new(ALICE, token(2), secs(40)));
}

#[test]
fn step5_occupancy_is_checked_before_exhaustion() {
    let live = Lease::new(ALICE, FencingToken::MAX, secs(10));
    let row = Checkpoint::from_parts(Some(FencingToken::MAX), Some(live), secs(0)).unwrap();
    let mut authority = LeaseAuthority::restore(row);
    assert_eq!(
        authority.acquire(BOB, secs(1), secs(1)),
        rejected(Rejection::Occupied)
    );
    // Once it lapses the history is exhausted.
    assert_eq!(
        authority.acquire(BOB, secs(10), secs(1)),
        rejected(Rejection::TokensExhausted)
    );
}

#[test]
fn step6_tokens_exhausted_fails_closed_and_changes_nothing_but_the_clock() {
    let row = Checkpoint::from_parts(Some(FencingToken::MAX), None, secs(1)).unwrap();
    for policy in POLICIES {
        let mut authority = LeaseAuthority::restore(row).with_clock_policy(policy);
        assert_eq!(
            authority.acquire(ALICE, secs(2), secs(1)),
            rejected(Rejection::TokensExhausted)
        );
        assert_eq!(
            authority.reacquire(ALICE, secs(3), secs(1)),
            rejected(Rejection::TokensExhausted)
        );
        assert_eq!(authority.lease(), None);
        assert_eq!(authority.last_issued(), Some(FencingToken::MAX));
        assert_eq!(authority.observed(), secs(3));
    }
}

#[test]
fn step6_the_last_token_is_u64_max_and_then_the_history_is_exhausted() {
    let below = FencingToken::new(u64::MAX - 1).unwrap();
    let row = Checkpoint::from_parts(Some(below), None, secs(0)).unwrap();
    let mut authority = LeaseAuthority::restore(row);
    let last = granted(authority.acquire(ALICE, secs(1), secs(1)));
    assert_eq!(last.token(), FencingToken::MAX);
    assert_eq!(last.token().value(), u64::MAX);
    assert_eq!(
        authority.release(ALICE, last.token(), secs(1)),
        Decision::Released
    );
    assert_eq!(
        authority.acquire(ALICE, secs(2), secs(1)),
        rejected(Rejection::TokensExhausted)
    );
}

#[test]
fn step6_an_exhausted_rotation_keeps_the_old_lease() {
    let live = Lease::new(ALICE, FencingToken::MAX, secs(10));
    let row = Checkpoint::from_parts(Some(FencingToken::MAX), Some(live), secs(0)).unwrap();
    let mut authority = LeaseAuthority::restore(row);
    assert_eq!(
        authority.reacquire(ALICE, secs(1), secs(5)),
        rejected(Rejection::TokensExhausted)
    );
    assert_eq!(authority.lease(), Some(live));
    assert_eq!(
        renewed(authority.renew(ALICE, live.token(), secs(2), secs(20))).expires_at(),
        secs(22)
    );
}

#[test]
fn step7_each_grant_takes_the_next_token() {
    let mut authority = LeaseAuthority::new();
    let mut tokens = Vec::new();
    for round in 0..5u64 {
        let owner = OwnerId::new(round % 2);
        let lease = granted(authority.acquire(owner, secs(round * 10), secs(10)));
        assert_eq!(lease.owner(), owner);
        assert_eq!(lease.expires_at(), secs(round * 10 + 10));
        tokens.push(lease.token().value());
    }
    assert_eq!(tokens, [1, 2, 3, 4, 5]);

    // A restored history continues from its high-water mark.
    let row = Checkpoint::from_parts(Some(token(41)), None, secs(0)).unwrap();
    let mut authority = LeaseAuthority::restore(row);
    assert_eq!(
        granted(authority.acquire(ALICE, secs(0), secs(1))).token(),
        token(42)
    );
}

// ------------------------------------------------------------------ reacquire

#[test]
fn reacquire_rotates_the_callers_own_live_lease_to_a_new_token() {
    for policy in POLICIES {
        let (mut authority, old) = held_by_alice(policy);
        let new = granted(authority.reacquire(ALICE, secs(4), secs(20)));
        assert_eq!(new, Lease::new(ALICE, token(2), secs(24)));
        assert_eq!(authority.lease(), Some(new));
        assert_eq!(authority.last_issued(), Some(new.token()));
        // Anything still holding the old token is stale.
        assert_eq!(
            authority.renew(ALICE, old.token(), secs(5), secs(20)),
            rejected(Rejection::StaleToken)
        );
        assert_eq!(
            authority.release(ALICE, old.token(), secs(5)),
            rejected(Rejection::StaleToken)
        );
        assert_eq!(
            authority.release(ALICE, new.token(), secs(5)),
            Decision::Released
        );
    }
}

#[test]
fn reacquire_is_a_new_grant_even_when_it_ends_earlier() {
    let (mut authority, _) = held_by_alice(ClockPolicy::Reject);
    let rotated = granted(authority.reacquire(ALICE, secs(1), secs(2)));
    assert_eq!(rotated.expires_at(), secs(3));
    // The new lease, not the old one, decides occupancy.
    assert_eq!(
        authority.acquire(BOB, secs(2), secs(1)),
        rejected(Rejection::Occupied)
    );
    assert!(authority.acquire(BOB, secs(3), secs(1)).is_granted());
}

#[test]
fn reacquire_behaves_as_acquire_otherwise() {
    // Fresh history.
    let mut authority = LeaseAuthority::new();
    assert_eq!(
        granted(authority.reacquire(ALICE, secs(0), secs(5))),
        Lease::new(ALICE, token(1), secs(5))
    );
    // Someone else's live lease.
    assert_eq!(
        authority.reacquire(BOB, secs(4), secs(5)),
        rejected(Rejection::Occupied)
    );
    // Lapsed lease, any owner.
    assert_eq!(
        granted(authority.reacquire(BOB, secs(5), secs(5))),
        Lease::new(BOB, token(2), secs(10))
    );
    // Released lease.
    assert_eq!(
        authority.release(BOB, token(2), secs(6)),
        Decision::Released
    );
    assert_eq!(
        granted(authority.reacquire(BOB, secs(6), secs(5))),
        Lease::new(BOB, token(3), secs(11))
    );
    // Step 4 comes before the rotation.
    assert_eq!(
        authority.reacquire(BOB, secs(7), Duration::MAX),
        rejected(Rejection::DeadlineOverflow)
    );
    assert_eq!(authority.lease(), Some(Lease::new(BOB, token(3), secs(11))));
}

// ---------------------------------------------------------------------- renew

#[test]
fn renew_extends_to_now_plus_ttl_with_the_same_token() {
    for policy in POLICIES {
        let (mut authority, lease) = held_by_alice(policy);
        let after = renewed(authority.renew(ALICE, lease.token(), secs(8), secs(10)));
        assert_eq!(after, Lease::new(ALICE, lease.token(), secs(18)));
        assert_eq!(authority.lease(), Some(after));
        assert_eq!(
            authority.last_issued(),
            Some(lease.token()),
            "renewal issues no token"
        );
        assert_eq!(authority.observed(), secs(8));
    }
}

#[test]
fn renew_never_shortens() {
    let mut authority = LeaseAuthority::new();
    let lease = granted(authority.acquire(ALICE, secs(0), secs(100)));
    // now + ttl = 15 s < 100 s: the lease keeps 100 s.
    let after = renewed(authority.renew(ALICE, lease.token(), secs(10), secs(5)));
    assert_eq!(after.expires_at(), secs(100));
    // now + ttl = 100 s exactly.
    let after = renewed(authority.renew(ALICE, lease.token(), secs(50), secs(50)));
    assert_eq!(after.expires_at(), secs(100));
    // now + ttl = 100 s + 1 ns.
    let after = renewed(authority.renew(ALICE, lease.token(), secs(50), secs(50) + ONE_NS));
    assert_eq!(after.expires_at(), secs(100) + ONE_NS);
}

#[test]
fn renew_of_an_expired_lease_is_expired_and_never_resurrects() {
    for policy in POLICIES {
        let (mut authority, lease) = held_by_alice(policy);
        // At expires_at exactly.
        assert_eq!(
            authority.renew(ALICE, lease.token(), secs(10), secs(10)),
            rejected(Rejection::Expired)
        );
        // Long after.
        assert_eq!(
            authority.renew(ALICE, lease.token(), secs(50), secs(10)),
            rejected(Rejection::Expired)
        );
        assert_eq!(
            authority.lease(),
            Some(lease),
            "the lapsed record stays as it was"
        );
        // The lapsed lease does not block anyone.
        assert!(authority.acquire(BOB, secs(50), secs(1)).is_granted());
    }
}

#[test]
fn renew_stale_token_when_there_is_no_lease_or_another_token() {
    let mut authority = LeaseAuthority::new();
    assert_eq!(
        authority.renew(ALICE, token(1), secs(0), secs(1)),
        rejected(Rejection::StaleToken)
    );
    let (mut authority, lease) = held_by_alice(ClockPolicy::Reject);
    assert_eq!(
        authority.renew(ALICE, token(2), secs(1), secs(1)),
        rejected(Rejection::StaleToken)
    );
    assert_eq!(
        authority.renew(ALICE, FencingToken::MAX, secs(1), secs(1)),
        rejected(Rejection::StaleToken)
    );
    assert_eq!(
        authority.release(ALICE, lease.token(), secs(2)),
        Decision::Released
    );
    assert_eq!(
        authority.renew(ALICE, lease.token(), secs(3), secs(1)),
        rejected(Rejection::StaleToken)
    );
}

#[test]
fn renew_with_no_token_is_stale_after_the_clock_and_ttl_checks() {
    let (mut authority, _) = held_by_alice(ClockPolicy::Reject);
    let _ = authority.acquire(BOB, secs(5), Duration::ZERO); // observe 5 s
    assert_eq!(
        authority.renew(ALICE, None, secs(4), secs(1)),
        rejected(Rejection::ClockRegressed)
    );
    assert_eq!(
        authority.renew(ALICE, None, secs(5), Duration::ZERO),
        rejected(Rejection::InvalidTtl)
    );
    // Otherwise StaleToken, even where NotOwner, Expired or overflow would apply.
    assert_eq!(
        authority.renew(ALICE, None, secs(5), secs(1)),
        rejected(Rejection::StaleToken)
    );
    assert_eq!(
        authority.renew(BOB, None, secs(5), secs(1)),
        rejected(Rejection::StaleToken)
    );
    assert_eq!(
        authority.renew(ALICE, None, secs(5), Duration::MAX),
        rejected(Rejection::StaleToken)
    );
    assert_eq!(
        authority.renew(ALICE, None, secs(11), secs(1)),
        rejected(Rejection::StaleToken)
    );
    // A wire 0 maps to None.
    assert_eq!(
        authority.renew(ALICE, FencingToken::new(0), secs(11), secs(1)),
        rejected(Rejection::StaleToken)
    );
}

#[test]
fn renew_order_ttl_then_token_then_owner_then_expiry_then_overflow() {
    let (authority, lease) = held_by_alice(ClockPolicy::Reject);
    let t = lease.token();
    let cases = [
        // InvalidTtl beats StaleToken.
        (
            (BOB, Some(token(9)), secs(1), Duration::ZERO),
            Rejection::InvalidTtl,
        ),
        // StaleToken beats NotOwner and Expired.
        (
            (BOB, Some(token(9)), secs(20), secs(1)),
            Rejection::StaleToken,
        ),
        // NotOwner beats Expired and overflow.
        ((BOB, Some(t), secs(20), Duration::MAX), Rejection::NotOwner),
        ((BOB, Some(t), secs(1), secs(1)), Rejection::NotOwner),
        // Expired beats overflow.
        (
            (ALICE, Some(t), secs(20), Duration::MAX),
            Rejection::Expired,
        ),
        // Overflow on a live lease.
        (
            (ALICE, Some(t), secs(1), Duration::MAX),
            Rejection::DeadlineOverflow,
        ),
    ];
    for ((owner, tok, now, ttl), reason) in cases {
        let mut copy = authority;
        assert_eq!(
            copy.renew(owner, tok, now, ttl),
            rejected(reason),
            "{owner:?} {tok:?} {now:?} {ttl:?}"
        );
        assert_eq!(copy.lease(), Some(lease));
        assert_eq!(copy.last_issued(), Some(t));
        assert_eq!(copy.observed(), now);
    }
}

#[test]
fn renew_overflow_keeps_the_lease_even_when_it_already_ends_at_the_end_of_time() {
    let mut authority = LeaseAuthority::new();
    let lease = granted(authority.acquire(ALICE, Duration::ZERO, Duration::MAX));
    assert_eq!(
        authority.renew(ALICE, lease.token(), secs(1), Duration::MAX),
        rejected(Rejection::DeadlineOverflow)
    );
    assert_eq!(authority.lease(), Some(lease));
    // A fitting renewal keeps the later deadline.
    assert_eq!(
        renewed(authority.renew(ALICE, lease.token(), secs(1), secs(1))).expires_at(),
        Duration::MAX
    );
}

// -------------------------------------------------------------------- release

#[test]
fn release_removes_the_lease_and_keeps_the_high_water_mark() {
    for policy in POLICIES {
        let (mut authority, lease) = held_by_alice(policy);
        assert_eq!(
            authority.release(ALICE, lease.token(), secs(3)),
            Decision::Released
        );
        assert_eq!(authority.lease(), None);
        assert_eq!(authority.last_issued(), Some(lease.token()));
        assert_eq!(authority.observed(), secs(3));
        // The resource is free at once, and even the same owner gets a greater token.
        let next = granted(authority.acquire(ALICE, secs(3), secs(10)));
        assert_eq!(next.token(), token(2));
        // Releasing twice: the second is stale.
        assert_eq!(
            authority.release(ALICE, next.token(), secs(4)),
            Decision::Released
        );
        assert_eq!(
            authority.release(ALICE, next.token(), secs(4)),
            rejected(Rejection::StaleToken)
        );
    }
}

#[test]
fn release_of_an_expired_lease_is_expired_and_keeps_the_record() {
    let (mut authority, lease) = held_by_alice(ClockPolicy::Reject);
    assert_eq!(
        authority.release(ALICE, lease.token(), secs(10)),
        rejected(Rejection::Expired)
    );
    assert_eq!(authority.lease(), Some(lease));
    assert_eq!(authority.observed(), secs(10));
}

#[test]
fn release_order_token_then_owner_then_expiry() {
    let (authority, lease) = held_by_alice(ClockPolicy::Reject);
    let t = lease.token();
    let cases = [
        ((BOB, None, secs(20)), Rejection::StaleToken),
        ((ALICE, None, secs(1)), Rejection::StaleToken),
        ((BOB, Some(token(2)), secs(20)), Rejection::StaleToken),
        ((BOB, Some(t), secs(20)), Rejection::NotOwner),
        ((BOB, Some(t), secs(1)), Rejection::NotOwner),
        ((ALICE, Some(t), secs(20)), Rejection::Expired),
    ];
    for ((owner, tok, now), reason) in cases {
        let mut copy = authority;
        assert_eq!(
            copy.release(owner, tok, now),
            rejected(reason),
            "{owner:?} {tok:?} {now:?}"
        );
        assert_eq!(copy.lease(), Some(lease));
        assert_eq!(copy.observed(), now);
    }
    let mut empty = LeaseAuthority::new();
    assert_eq!(
        empty.release(ALICE, t, secs(0)),
        rejected(Rejection::StaleToken)
    );
}

// ------------------------------------------------------------ every rejection

#[test]
fn every_rejection_is_reachable_and_named() {
    let live = Lease::new(ALICE, FencingToken::MAX, secs(10));
    let exhausted = LeaseAuthority::restore(
        Checkpoint::from_parts(Some(FencingToken::MAX), Some(live), secs(5)).unwrap(),
    );
    type Scenario = fn(LeaseAuthority) -> Decision;
    let scenarios: [(Scenario, Rejection); 8] = [
        (
            |mut a| a.acquire(BOB, secs(6), secs(1)),
            Rejection::Occupied,
        ),
        (
            |mut a| a.renew(ALICE, token(1), secs(6), secs(1)),
            Rejection::StaleToken,
        ),
        (
            |mut a| a.release(BOB, FencingToken::MAX, secs(6)),
            Rejection::NotOwner,
        ),
        (
            |mut a| a.release(ALICE, FencingToken::MAX, secs(10)),
            Rejection::Expired,
        ),
        (
            |mut a| a.acquire(BOB, secs(4), secs(1)),
            Rejection::ClockRegressed,
        ),
        (
            |mut a| a.acquire(BOB, secs(6), Duration::ZERO),
            Rejection::InvalidTtl,
        ),
        (
            |mut a| a.acquire(BOB, secs(6), Duration::MAX),
            Rejection::DeadlineOverflow,
        ),
        (
            |mut a| a.acquire(BOB, secs(10), secs(1)),
            Rejection::TokensExhausted,
        ),
    ];
    let mut seen = BTreeSet::new();
    for (scenario, expected) in scenarios {
        let decision = scenario(exhausted);
        assert_eq!(decision, rejected(expected));
        assert_eq!(decision.rejection(), Some(expected));
        assert!(decision.is_rejected() && !decision.is_granted());
        assert_eq!(decision.lease(), None);
        seen.insert(expected);
    }
    assert_eq!(seen, Rejection::ALL.into_iter().collect::<BTreeSet<_>>());

    let names: Vec<String> = Rejection::ALL.iter().map(ToString::to_string).collect();
    assert_eq!(
        names,
        [
            "occupied",
            "stale_token",
            "not_owner",
            "expired",
            "clock_regressed",
            "invalid_ttl",
            "deadline_overflow",
            "tokens_exhausted"
        ]
    );
    for reason in Rejection::ALL {
        assert_eq!(reason.as_str(), reason.to_string());
        let _: &dyn std::error::Error = &reason;
    }
}

#[test]
fn decision_accessors() {
    let lease = Lease::new(ALICE, token(3), secs(9));
    let cases = [
        (
            Decision::Granted(lease),
            Some(lease),
            None,
            [true, false, false, false],
        ),
        (
            Decision::Renewed(lease),
            Some(lease),
            None,
            [false, true, false, false],
        ),
        (Decision::Released, None, None, [false, false, true, false]),
        (
            Decision::Rejected(Rejection::Expired),
            None,
            Some(Rejection::Expired),
            [false, false, false, true],
        ),
    ];
    for (decision, lease, reason, flags) in cases {
        assert_eq!(decision.lease(), lease);
        assert_eq!(decision.rejection(), reason);
        assert_eq!(
            [
                decision.is_granted(),
                decision.is_renewed(),
                decision.is_released(),
                decision.is_rejected()
            ],
            flags
        );
    }
}

#[test]
fn lease_expires_at_its_deadline() {
    let lease = Lease::new(OwnerId::new(0), token(1), secs(5));
    assert_eq!(lease.owner(), OwnerId::new(0));
    assert_eq!(lease.token(), token(1));
    assert_eq!(lease.expires_at(), secs(5));
    assert!(!lease.is_expired(secs(5) - ONE_NS));
    assert!(lease.is_expired(secs(5)));
    assert!(lease.is_expired(Duration::MAX));
    assert!(!Lease::new(ALICE, token(1), Duration::MAX).is_expired(Duration::MAX - ONE_NS));
}

#[test]
fn ids_round_trip() {
    assert_eq!(FencingToken::new(0), None);
    assert_eq!(FencingToken::new(1), Some(FencingToken::FIRST));
    assert_eq!(FencingToken::new(u64::MAX), Some(FencingToken::MAX));
    assert_eq!(token(7).value(), 7);
    assert_eq!(u64::from(token(7)), 7);
    assert_eq!(token(7).next(), Some(token(8)));
    assert_eq!(FencingToken::MAX.next(), None);
    assert!(token(2) > token(1));
    assert_eq!(token(7).to_string(), "7");
    assert_eq!(OwnerId::new(u64::MAX).value(), u64::MAX);
    assert_eq!(OwnerId::from(0), OwnerId::default());
    assert_eq!(OwnerId::new(12).to_string(), "12");
}

// ---------------------------------------------------------------- checkpoints

#[test]
fn from_parts_refuses_a_lease_with_no_token_issued() {
    let lease = Lease::new(ALICE, token(1), secs(5));
    assert_eq!(Checkpoint::from_parts(None, Some(lease), secs(0)), None);
}

#[test]
fn from_parts_refuses_a_lease_whose_token_is_above_the_high_water_mark() {
    let lease = Lease::new(ALICE, token(5), secs(5));
    assert_eq!(
        Checkpoint::from_parts(Some(token(4)), Some(lease), secs(0)),
        None
    );
    let lease = Lease::new(ALICE, FencingToken::MAX, secs(5));
    assert_eq!(
        Checkpoint::from_parts(FencingToken::new(u64::MAX - 1), Some(lease), secs(0)),
        None
    );
}

#[test]
fn from_parts_accepts_consistent_rows_and_gives_them_back() {
    let lease = Lease::new(ALICE, token(5), secs(5));
    let rows = [
        (None, None, Duration::ZERO),
        (None, None, Duration::MAX),
        (Some(token(5)), None, secs(3)),
        (Some(token(5)), Some(lease), secs(3)),
        (Some(token(9)), Some(lease), secs(30)), // an old, lapsed record below the mark
        (Some(FencingToken::MAX), Some(lease), secs(3)),
    ];
    for (last_issued, lease, observed) in rows {
        let row = Checkpoint::from_parts(last_issued, lease, observed).unwrap();
        assert_eq!(row.last_issued(), last_issued);
        assert_eq!(row.lease(), lease);
        assert_eq!(row.observed(), observed);
        let authority = LeaseAuthority::restore(row);
        assert_eq!(authority.checkpoint(), row);
        assert_eq!(authority.lease(), lease);
        assert_eq!(authority.last_issued(), last_issued);
        assert_eq!(authority.observed(), observed);
    }
    assert_eq!(Checkpoint::default(), LeaseAuthority::new().checkpoint());
}

#[test]
fn a_row_below_the_mark_still_grants_above_the_mark() {
    let lease = Lease::new(ALICE, token(5), secs(5));
    let row = Checkpoint::from_parts(Some(token(9)), Some(lease), secs(0)).unwrap();
    let mut authority = LeaseAuthority::restore(row);
    assert!(authority
        .renew(ALICE, token(5), secs(1), secs(1))
        .is_renewed());
    assert_eq!(
        granted(authority.acquire(BOB, secs(5), secs(1))).token(),
        token(10)
    );
}

#[test]
fn restore_defaults_to_reject_and_rebuilds_the_same_authority() {
    let (mut original, lease) = held_by_alice(ClockPolicy::Clamp);
    let _ = original.renew(ALICE, lease.token(), secs(4), secs(10));
    let plain = LeaseAuthority::restore(original.checkpoint());
    assert_eq!(plain.clock_policy(), ClockPolicy::Reject);
    let restored = plain.with_clock_policy(original.clock_policy());
    assert_eq!(restored, original);

    // And it answers like the original from here on.
    let mut restored = restored;
    let script: [fn(&mut LeaseAuthority) -> Decision; 5] = [
        |a| a.acquire(BOB, secs(3), secs(5)),
        |a| a.renew(ALICE, token(1), secs(2), secs(1)),
        |a| a.release(ALICE, token(1), secs(13)),
        |a| a.acquire(BOB, secs(14), secs(5)),
        |a| a.reacquire(BOB, secs(14), secs(5)),
    ];
    for step in script {
        assert_eq!(step(&mut restored), step(&mut original));
        assert_eq!(restored, original);
    }
    assert_eq!(restored.last_issued(), Some(token(3)));
}

#[test]
fn a_restored_live_lease_keeps_working_and_blocking() {
    let lease = Lease::new(ALICE, token(3), secs(20));
    let row = Checkpoint::from_parts(Some(token(3)), Some(lease), secs(10)).unwrap();
    let mut authority = LeaseAuthority::restore(row);
    assert_eq!(
        authority.acquire(BOB, secs(9), secs(1)),
        rejected(Rejection::ClockRegressed),
        "the stored clock is honoured"
    );
    assert_eq!(
        authority.acquire(BOB, secs(11), secs(1)),
        rejected(Rejection::Occupied)
    );
    assert_eq!(
        renewed(authority.renew(ALICE, token(3), secs(12), secs(30))).expires_at(),
        secs(42)
    );
}
