//! `Checkpoint::reconciled`: a history raised to a fence's mark.
//!
//! Unit tests pin each case of the rule (no history, a history below, at and
//! above the mark, a lease below, at (same owner, other owner, no owner
//! recorded) and above it); one property pins the rest down over any valid
//! checkpoint and mark: the result is a valid checkpoint, nothing goes down,
//! it is idempotent, a lease is cleared exactly when the fence has passed
//! it, and the next grant of the reconciled history is above the mark.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::arithmetic_side_effects
)]

use std::time::Duration;

use lease_machines::{
    Checkpoint, ClockPolicy, Decision, FencingToken, Lease, LeaseAuthority, OwnerId, Rejection,
    TokenFloor,
};
use proptest::prelude::*;

const HORIZON: Duration = Duration::from_nanos(u64::MAX);

fn token(value: u64) -> FencingToken {
    FencingToken::new(value).unwrap()
}

fn lease(owner: u64, value: u64) -> Lease {
    Lease::new(OwnerId::new(owner), token(value), Duration::from_secs(100))
}

fn row(last_issued: Option<u64>, lease: Option<Lease>) -> Checkpoint {
    Checkpoint::from_parts(last_issued.map(token), lease, Duration::from_secs(50)).unwrap()
}

#[test]
fn a_history_with_no_grant_starts_at_the_mark() {
    let done = Checkpoint::default().reconciled(token(7), Some(OwnerId::new(3)));
    assert_eq!(done.checkpoint.last_issued(), Some(token(7)));
    assert_eq!(done.checkpoint.lease(), None);
    assert_eq!(done.checkpoint.observed(), Duration::ZERO);
    assert_eq!(done.voided, None);
    assert!(done.changed(&Checkpoint::default()));
}

#[test]
fn a_history_below_the_mark_is_raised_to_it_and_its_stale_lease_cleared() {
    let before = row(Some(4), Some(lease(12, 4)));
    let done = before.reconciled(token(9), None);
    assert_eq!(done.checkpoint, row(Some(9), None));
    assert_eq!(done.voided, Some(lease(12, 4)));
}

#[test]
fn a_history_above_the_mark_is_left_as_it_is() {
    for before in [
        row(Some(9), None),
        row(Some(9), Some(lease(1, 9))),
        row(Some(9), Some(lease(1, 8))),
    ] {
        let done = before.reconciled(token(8), Some(OwnerId::new(1)));
        assert_eq!(done.checkpoint, before);
        assert_eq!(done.voided, None);
        assert!(!done.changed(&before));
    }
}

#[test]
fn a_lease_below_the_mark_is_cleared_even_when_its_history_is_above() {
    let before = row(Some(9), Some(lease(1, 5)));
    let done = before.reconciled(token(6), None);
    assert_eq!(done.checkpoint, row(Some(9), None));
    assert_eq!(done.voided, Some(lease(1, 5)));
}

#[test]
fn a_lease_at_the_mark_is_kept_for_its_recorded_owner_or_none() {
    let before = row(Some(5), Some(lease(7, 5)));
    for owner in [Some(OwnerId::new(7)), None] {
        let done = before.reconciled(token(5), owner);
        assert_eq!(done.checkpoint, before);
        assert_eq!(done.voided, None);
    }
}

#[test]
fn a_lease_at_the_mark_of_another_owner_was_reissued_and_is_cleared() {
    let before = row(Some(5), Some(lease(12, 5)));
    let done = before.reconciled(token(5), Some(OwnerId::new(7)));
    assert_eq!(done.checkpoint, row(Some(5), None));
    assert_eq!(done.voided, Some(lease(12, 5)));
}

#[test]
fn the_top_token_stays_the_top_and_the_resource_stays_closed() {
    let done = row(Some(3), None).reconciled(token(u64::MAX), None);
    assert_eq!(done.checkpoint.last_issued(), Some(token(u64::MAX)));
    let mut authority = LeaseAuthority::restore(done.checkpoint)
        .with_clock_policy(ClockPolicy::Clamp)
        .with_horizon(HORIZON);
    assert_eq!(
        authority.acquire(
            OwnerId::new(1),
            Duration::from_secs(60),
            Duration::from_secs(1)
        ),
        Decision::Rejected(Rejection::TokensExhausted)
    );
}

/// Any valid checkpoint: a mark, a lease at or below it (of a few owners),
/// an observed instant.
fn checkpoint() -> impl Strategy<Value = Checkpoint> {
    let small = 1..20u64;
    (
        prop_oneof![
            Just(None),
            small.clone().prop_map(Some),
            (1..u64::MAX).prop_map(Some)
        ],
        any::<bool>(),
        0..3u64,
        any::<u64>(),
        0..200u64,
        0..200u64,
    )
        .prop_map(|(last, leased, owner, below, expires, observed)| {
            let lease = match (last, leased) {
                (Some(last), true) => Some(Lease::new(
                    OwnerId::new(owner),
                    token(last - below % last),
                    Duration::from_secs(expires),
                )),
                _ => None,
            };
            Checkpoint::from_parts(last.map(token), lease, Duration::from_secs(observed)).unwrap()
        })
}

fn mark() -> impl Strategy<Value = FencingToken> {
    prop_oneof![1..25u64, 1..u64::MAX].prop_map(token)
}

proptest! {
    #[test]
    fn reconciled_is_valid_monotonic_idempotent_and_grants_above_the_mark(
        before in checkpoint(),
        mark in mark(),
        mark_owner in prop_oneof![Just(None), (0..3u64).prop_map(|o| Some(OwnerId::new(o)))],
        floored in any::<bool>(),
    ) {
        let done = before.reconciled(mark, mark_owner);
        let after = done.checkpoint;

        // A valid checkpoint, in flat form too.
        prop_assert_eq!(Checkpoint::from_flat(after.flat()), Ok(after));
        // Nothing goes down, the clock stays.
        prop_assert!(after.last_issued() >= before.last_issued());
        prop_assert!(after.last_issued() >= Some(mark));
        prop_assert_eq!(after.observed(), before.observed());
        // Idempotent.
        prop_assert_eq!(after.reconciled(mark, mark_owner).checkpoint, after);
        prop_assert_eq!(after.reconciled(mark, mark_owner).voided, None);
        // A lease is cleared exactly when the fence has passed it, and only then.
        let passed = before.lease().is_some_and(|lease| {
            lease.token() < mark
                || (lease.token() == mark && mark_owner.is_some_and(|owner| owner != lease.owner()))
        });
        prop_assert_eq!(done.voided, if passed { before.lease() } else { None });
        prop_assert_eq!(after.lease(), if passed { None } else { before.lease() });
        // The history's last token only moved if it was below the mark.
        if before.last_issued() >= Some(mark) {
            prop_assert_eq!(after.last_issued(), before.last_issued());
        }

        // The next grant, once any kept lease ran out, is above the mark.
        let floor = if floored { TokenFloor::ClockMicros } else { TokenFloor::Sequence };
        let mut authority = LeaseAuthority::restore(after)
            .with_clock_policy(ClockPolicy::Clamp)
            .with_horizon(HORIZON)
            .with_token_floor(floor);
        let later = after.lease().map_or(after.observed(), |lease| lease.expires_at().max(after.observed()));
        match authority.acquire(OwnerId::new(9), later, Duration::from_secs(1)) {
            Decision::Granted(lease) => prop_assert!(lease.token() > mark),
            Decision::Rejected(Rejection::TokensExhausted) => {
                prop_assert_eq!(after.last_issued(), Some(token(u64::MAX)));
            }
            other => prop_assert!(false, "expected a grant, got {:?}", other),
        }
    }
}
