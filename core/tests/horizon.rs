//! The deadline horizon (`LeaseAuthority::with_horizon`) and the flat form of
//! a checkpoint (`Checkpoint::from_flat`, `Checkpoint::flat`).
//!
//! Two properties pin the horizon down:
//!
//! - step by step against an unbounded authority restored from the same
//!   state: the same answer and state, except that a grant or renewal whose
//!   deadline falls past the horizon is `DeadlineOverflow` (and only the
//!   observed clock moves);
//! - a store's timeline: whole nanoseconds in `0..=u64::MAX` with the horizon at
//!   `u64::MAX` ns decides exactly as the unit trick it replaced (nanoseconds
//!   handed to an unbounded authority as its "seconds", where the deadline
//!   overflow falls at the same place), for random histories near both ends.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    clippy::arithmetic_side_effects
)]

use std::time::Duration;

use lease_machines::{
    Checkpoint, CheckpointError, ClockPolicy, Decision, FencingToken, FlatCheckpoint, Lease,
    LeaseAuthority, OwnerId, Rejection,
};
use proptest::prelude::*;

/// One request, on a timeline of plain `u64` units.
#[derive(Clone, Copy, Debug)]
enum Request {
    Acquire(u64, u64, u64),
    Reacquire(u64, u64, u64),
    Renew(u64, u64, u64, u64),
    Release(u64, u64, u64),
}

/// An instant or a TTL: small, near the end of `u64`, or anywhere.
fn units() -> impl Strategy<Value = u64> {
    prop_oneof![
        4 => 0u64..12,
        2 => (0u64..6).prop_map(|n| u64::MAX - n),
        1 => (0u64..6).prop_map(|n| u64::MAX / 2 + n),
        1 => any::<u64>(),
    ]
}

fn request() -> impl Strategy<Value = Request> {
    let owner = 0u64..3;
    let token = prop_oneof![3 => 0u64..5, 1 => Just(u64::MAX)];
    prop_oneof![
        3 => (owner.clone(), units(), units()).prop_map(|(o, n, t)| Request::Acquire(o, n, t)),
        1 => (owner.clone(), units(), units()).prop_map(|(o, n, t)| Request::Reacquire(o, n, t)),
        3 => (owner.clone(), token.clone(), units(), units())
            .prop_map(|(o, k, n, t)| Request::Renew(o, k, n, t)),
        1 => (owner, token, units()).prop_map(|(o, k, n)| Request::Release(o, k, n)),
    ]
}

fn policy() -> impl Strategy<Value = ClockPolicy> {
    prop_oneof![Just(ClockPolicy::Reject), Just(ClockPolicy::Clamp)]
}

impl Request {
    /// Runs the request with `unit` turning its numbers into instants.
    fn apply(self, authority: &mut LeaseAuthority, unit: fn(u64) -> Duration) -> Decision {
        let owner = OwnerId::new;
        match self {
            Request::Acquire(o, now, ttl) => authority.acquire(owner(o), unit(now), unit(ttl)),
            Request::Reacquire(o, now, ttl) => authority.reacquire(owner(o), unit(now), unit(ttl)),
            Request::Renew(o, token, now, ttl) => {
                authority.renew(owner(o), FencingToken::new(token), unit(now), unit(ttl))
            }
            Request::Release(o, token, now) => {
                authority.release(owner(o), FencingToken::new(token), unit(now))
            }
        }
    }

    fn ttl(self) -> Option<u64> {
        match self {
            Request::Acquire(_, _, ttl) | Request::Reacquire(_, _, ttl) => Some(ttl),
            Request::Renew(_, _, _, ttl) => Some(ttl),
            Request::Release(..) => None,
        }
    }

    fn now(self) -> u64 {
        match self {
            Request::Acquire(_, now, _)
            | Request::Reacquire(_, now, _)
            | Request::Renew(_, _, now, _)
            | Request::Release(_, _, now) => now,
        }
    }

    fn is_grant(self) -> bool {
        matches!(self, Request::Acquire(..) | Request::Reacquire(..))
    }
}

/// A lease of the unit trick's timeline ("seconds" that are nanoseconds) on
/// the real one.
fn from_trick(lease: Lease) -> Lease {
    Lease::new(
        lease.owner(),
        lease.token(),
        Duration::from_nanos(lease.expires_at().as_secs()),
    )
}

fn decision_from_trick(decision: Decision) -> Decision {
    match decision {
        Decision::Granted(lease) => Decision::Granted(from_trick(lease)),
        Decision::Renewed(lease) => Decision::Renewed(from_trick(lease)),
        other => other,
    }
}

fn checkpoint_from_trick(checkpoint: Checkpoint) -> Checkpoint {
    Checkpoint::from_parts(
        checkpoint.last_issued(),
        checkpoint.lease().map(from_trick),
        Duration::from_nanos(checkpoint.observed().as_secs()),
    )
    .unwrap()
}

/// The end of a store's timeline.
const STORE_END: Duration = Duration::from_nanos(u64::MAX);

/// A start near token exhaustion, or fresh.
fn start() -> impl Strategy<Value = Option<u64>> {
    prop_oneof![3 => Just(None), 1 => (0u64..3).prop_map(Some)]
}

fn started(below_max: Option<u64>, unit: fn(u64) -> Duration) -> LeaseAuthority {
    let Some(below_max) = below_max else {
        return LeaseAuthority::new();
    };
    let last = FencingToken::new(u64::MAX - below_max).unwrap();
    let row = Checkpoint::from_parts(Some(last), None, unit(0)).unwrap();
    LeaseAuthority::restore(row)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2048, ..ProptestConfig::default() })]

    /// The store's timeline decides exactly as the unit trick did.
    #[test]
    fn store_timeline_matches_the_unit_trick(
        policy in policy(),
        start in start(),
        requests in proptest::collection::vec(request(), 1..40),
    ) {
        let mut trick = started(start, Duration::from_secs).with_clock_policy(policy);
        let mut store = started(start, Duration::from_nanos)
            .with_clock_policy(policy)
            .with_horizon(STORE_END);
        for request in requests {
            let old = decision_from_trick(request.apply(&mut trick, Duration::from_secs));
            let new = request.apply(&mut store, Duration::from_nanos);
            prop_assert_eq!(new, old, "{:?}", request);
            prop_assert_eq!(store.checkpoint(), checkpoint_from_trick(trick.checkpoint()));
        }
    }

    /// Step by step, a bounded authority is an unbounded one that refuses
    /// deadlines past the horizon (at the step where overflow is checked).
    #[test]
    fn horizon_refuses_only_deadlines_past_it(
        policy in policy(),
        horizon in units(),
        requests in proptest::collection::vec(request(), 1..40),
    ) {
        let horizon = Duration::from_nanos(horizon);
        let mut bounded = LeaseAuthority::new().with_clock_policy(policy).with_horizon(horizon);
        for request in requests {
            let before = bounded.checkpoint();
            let mut unbounded = LeaseAuthority::restore(before).with_clock_policy(policy);
            let expected = request.apply(&mut unbounded, Duration::from_nanos);
            let got = request.apply(&mut bounded, Duration::from_nanos);
            prop_assert_eq!(bounded.horizon(), horizon);

            let now = Duration::from_nanos(request.now());
            let regressed = now < before.observed();
            let at = now.max(before.observed());
            let past = request
                .ttl()
                .filter(|ttl| *ttl > 0)
                .and_then(|ttl| at.checked_add(Duration::from_nanos(ttl)))
                .is_some_and(|deadline| deadline > horizon);
            // Where the overflow check sits: before occupancy for a grant,
            // after the lease checks (on a renewal that would succeed) for renew.
            let refused = !(regressed && policy == ClockPolicy::Reject)
                && past
                && (request.is_grant() && expected != Decision::Rejected(Rejection::DeadlineOverflow)
                    || matches!(expected, Decision::Renewed(_)));
            if refused {
                prop_assert_eq!(got, Decision::Rejected(Rejection::DeadlineOverflow), "{:?}", request);
                let moved = Checkpoint::from_parts(before.last_issued(), before.lease(), at).unwrap();
                prop_assert_eq!(bounded.checkpoint(), moved);
            } else {
                prop_assert_eq!(got, expected, "{:?}", request);
                prop_assert_eq!(bounded.checkpoint(), unbounded.checkpoint());
            }
            if let Some(lease) = got.lease() {
                prop_assert!(lease.expires_at() <= horizon);
            }
        }
    }

    /// The flat form round-trips every checkpoint, and `from_flat` accepts
    /// exactly the combinations `from_parts` accepts.
    #[test]
    fn flat_form_round_trips(
        last_issued in proptest::option::of(0u64..4),
        owner in proptest::option::of(0u64..3),
        token in proptest::option::of(0u64..5),
        expires in proptest::option::of(any::<u64>()),
        observed in proptest::option::of(any::<u64>()),
    ) {
        let flat = FlatCheckpoint {
            last_issued,
            lease_owner: owner,
            lease_token: token,
            lease_expires_at: expires.map(Duration::from_nanos),
            observed: observed.map(Duration::from_nanos),
        };
        let expected = expected_error(flat);
        match Checkpoint::from_flat(flat) {
            Ok(checkpoint) => {
                prop_assert_eq!(expected, None);
                prop_assert_eq!(checkpoint.flat(), flat);
                prop_assert_eq!(Checkpoint::from_flat(checkpoint.flat()), Ok(checkpoint));
            }
            Err(error) => prop_assert_eq!(Some(error), expected),
        }
    }
}

/// The first problem of a flat checkpoint, by the documented order.
fn expected_error(flat: FlatCheckpoint) -> Option<CheckpointError> {
    if flat.observed.is_none() {
        return Some(CheckpointError::MissingObserved);
    }
    let lease = [
        flat.lease_owner.is_some(),
        flat.lease_token.is_some(),
        flat.lease_expires_at.is_some(),
    ];
    if lease.contains(&true) && lease.contains(&false) {
        return Some(CheckpointError::PartialLease);
    }
    if flat.lease_token == Some(0) {
        return Some(CheckpointError::ZeroLeaseToken);
    }
    if flat.last_issued == Some(0) {
        return Some(CheckpointError::ZeroLastIssued);
    }
    match (flat.lease_token, flat.last_issued) {
        (Some(_), None) => Some(CheckpointError::UnissuedLease),
        (Some(token), Some(mark)) if token > mark => Some(CheckpointError::UnissuedLease),
        _ => None,
    }
}

#[test]
fn a_deadline_at_the_horizon_is_granted_and_one_past_it_is_not() {
    let end = Duration::from_nanos(1_000);
    let mut authority = LeaseAuthority::new().with_horizon(end);
    let one = OwnerId::new(1);
    assert_eq!(
        authority.acquire(one, Duration::from_nanos(10), Duration::from_nanos(991)),
        Decision::Rejected(Rejection::DeadlineOverflow)
    );
    let Decision::Granted(lease) =
        authority.acquire(one, Duration::from_nanos(10), Duration::from_nanos(990))
    else {
        panic!("a deadline at the horizon is granted");
    };
    assert_eq!(lease.expires_at(), end);
    assert_eq!(
        authority.renew(
            one,
            lease.token(),
            Duration::from_nanos(20),
            Duration::from_nanos(981)
        ),
        Decision::Rejected(Rejection::DeadlineOverflow)
    );
    // A renewal that does not reach past the horizon keeps the later deadline.
    assert_eq!(
        authority.renew(
            one,
            lease.token(),
            Duration::from_nanos(20),
            Duration::from_nanos(5)
        ),
        Decision::Renewed(lease)
    );
}

#[test]
fn the_default_horizon_is_the_end_of_duration() {
    assert_eq!(LeaseAuthority::new().horizon(), Duration::MAX);
    assert_eq!(LeaseAuthority::default(), LeaseAuthority::new());
    assert_eq!(
        LeaseAuthority::restore(Checkpoint::default()).horizon(),
        Duration::MAX
    );
}

#[test]
fn checkpoint_errors_are_listed_in_order_with_messages() {
    assert_eq!(CheckpointError::ALL.len(), 5);
    for error in CheckpointError::ALL {
        assert!(!error.as_str().is_empty());
        assert_eq!(error.to_string(), error.as_str());
    }
}
