//! The token floor (`LeaseAuthority::with_token_floor`, `TokenFloor`).
//!
//! Unit tests pin the edges (a clock at 0, a history at `u64::MAX`, a history
//! above the clock, a clock past `u64::MAX` microseconds); one property pins
//! the rest down: step by step from any state, a floored authority decides
//! exactly as the sequence one restored from the same state, except that a
//! grant's token is `max(sequence token, evaluated now in µs)`.
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

const TTL: Duration = Duration::from_secs(30);

fn floored() -> LeaseAuthority {
    LeaseAuthority::new().with_token_floor(TokenFloor::ClockMicros)
}

fn history(last_issued: u64, observed: Duration) -> LeaseAuthority {
    let checkpoint =
        Checkpoint::from_parts(FencingToken::new(last_issued), None, observed).unwrap();
    LeaseAuthority::restore(checkpoint).with_token_floor(TokenFloor::ClockMicros)
}

fn token(decision: Decision) -> u64 {
    match decision {
        Decision::Granted(lease) => lease.token().value(),
        other => panic!("expected a grant, got {other:?}"),
    }
}

#[test]
fn the_default_is_the_sequence_and_every_constructor_keeps_it() {
    assert_eq!(TokenFloor::default(), TokenFloor::Sequence);
    assert_eq!(LeaseAuthority::new().token_floor(), TokenFloor::Sequence);
    assert_eq!(
        LeaseAuthority::default().token_floor(),
        TokenFloor::Sequence
    );
    let restored = LeaseAuthority::restore(floored().checkpoint());
    assert_eq!(restored.token_floor(), TokenFloor::Sequence);
    let chained = floored()
        .with_clock_policy(ClockPolicy::Clamp)
        .with_horizon(Duration::from_secs(9));
    assert_eq!(chained.token_floor(), TokenFloor::ClockMicros);
    assert_eq!(chained.clock_policy(), ClockPolicy::Clamp);
}

#[test]
fn a_fresh_history_starts_at_the_clock_in_whole_microseconds() {
    let mut authority = floored();
    let now = Duration::new(1_700_000_000, 123_456_789);
    assert_eq!(
        token(authority.acquire(OwnerId::new(1), now, TTL)),
        1_700_000_000_123_456
    );
}

#[test]
fn a_clock_at_zero_still_issues_one_never_zero() {
    let mut authority = floored();
    assert_eq!(
        token(authority.acquire(OwnerId::new(1), Duration::ZERO, TTL)),
        1
    );
    assert_eq!(
        token(authority.reacquire(OwnerId::new(1), Duration::from_nanos(999), TTL)),
        2,
        "below one microsecond the floor is 0: the sequence goes on"
    );
}

#[test]
fn grants_within_one_microsecond_go_on_with_the_sequence() {
    let mut authority = floored();
    let now = Duration::from_micros(5_000);
    let tokens: Vec<u64> = (0..4)
        .map(|_| token(authority.reacquire(OwnerId::new(1), now, TTL)))
        .collect();
    assert_eq!(tokens, [5_000, 5_001, 5_002, 5_003]);
}

#[test]
fn an_existing_history_moves_forward_once_and_never_back() {
    // Tokens 1..=41 under the sequence; the floor takes it to the clock once.
    let mut authority = history(41, Duration::from_secs(50));
    let first = token(authority.acquire(OwnerId::new(1), Duration::from_secs(60), TTL));
    assert_eq!(first, 60_000_000);
    // From there it follows the clock (or +1 within a microsecond), never back
    // to the old sequence.
    let second = token(authority.reacquire(OwnerId::new(1), Duration::from_secs(61), TTL));
    assert_eq!(second, 61_000_000);
    // The same history under the default sequence: +1, as always.
    let mut sequence = LeaseAuthority::restore(history(41, Duration::from_secs(50)).checkpoint());
    assert_eq!(
        token(sequence.acquire(OwnerId::new(1), Duration::from_secs(60), TTL)),
        42
    );
}

#[test]
fn a_history_above_the_clock_goes_on_with_plus_one() {
    let above = 9_000_000_000_000_000;
    let mut authority = history(above, Duration::from_secs(10));
    assert_eq!(
        token(authority.acquire(OwnerId::new(1), Duration::from_secs(11), TTL)),
        above + 1
    );
    assert_eq!(
        token(authority.reacquire(OwnerId::new(1), Duration::from_secs(12), TTL)),
        above + 2
    );
}

#[test]
fn the_last_token_fails_closed_whatever_the_clock() {
    let mut authority = history(u64::MAX, Duration::from_secs(10));
    let before = authority.checkpoint();
    assert_eq!(
        authority.acquire(OwnerId::new(1), Duration::from_secs(20), TTL),
        Decision::Rejected(Rejection::TokensExhausted)
    );
    assert_eq!(authority.last_issued(), before.last_issued());
    assert_eq!(authority.lease(), None);

    // One below the end: the last token is issued once, then exhaustion.
    let mut authority = history(u64::MAX - 1, Duration::from_secs(10));
    assert_eq!(
        token(authority.reacquire(OwnerId::new(1), Duration::from_secs(20), TTL)),
        u64::MAX
    );
    assert_eq!(
        authority.reacquire(OwnerId::new(1), Duration::from_secs(21), TTL),
        Decision::Rejected(Rejection::TokensExhausted)
    );
}

#[test]
fn a_clock_past_u64_max_microseconds_floors_at_the_last_token() {
    let far = Duration::from_micros(u64::MAX) + Duration::from_secs(1);
    let mut authority = floored();
    assert_eq!(
        token(authority.acquire(OwnerId::new(1), far, TTL)),
        u64::MAX
    );
    assert_eq!(
        authority.reacquire(OwnerId::new(1), far, TTL),
        Decision::Rejected(Rejection::TokensExhausted)
    );
}

#[test]
fn the_floor_is_the_evaluated_instant_after_the_clock_policy() {
    // Clamp: a request at 5 s after one at 10 s is evaluated at 10 s.
    let mut clamped = floored().with_clock_policy(ClockPolicy::Clamp);
    let first = token(clamped.acquire(OwnerId::new(1), Duration::from_secs(10), TTL));
    let second = token(clamped.reacquire(OwnerId::new(1), Duration::from_secs(5), TTL));
    assert_eq!((first, second), (10_000_000, 10_000_001));
    // Reject: refused before any token is chosen; nothing changes.
    let mut strict = floored();
    let _ = strict.acquire(OwnerId::new(1), Duration::from_secs(10), TTL);
    let before = strict.checkpoint();
    assert_eq!(
        strict.reacquire(OwnerId::new(1), Duration::from_secs(5), TTL),
        Decision::Rejected(Rejection::ClockRegressed)
    );
    assert_eq!(strict.checkpoint(), before);
}

#[test]
fn refusals_issue_nothing() {
    let mut authority = floored();
    let held = token(authority.acquire(OwnerId::new(1), Duration::from_secs(1), TTL));
    assert_eq!(
        authority.acquire(OwnerId::new(2), Duration::from_secs(2), TTL),
        Decision::Rejected(Rejection::Occupied)
    );
    assert_eq!(
        authority.acquire(OwnerId::new(2), Duration::from_secs(2), Duration::ZERO),
        Decision::Rejected(Rejection::InvalidTtl)
    );
    assert_eq!(authority.last_issued().map(FencingToken::value), Some(held));
    // Renew and release keep the token.
    let lease = authority.lease().unwrap();
    let renewed = authority.renew(OwnerId::new(1), lease.token(), Duration::from_secs(3), TTL);
    assert_eq!(
        renewed,
        Decision::Renewed(Lease::new(
            OwnerId::new(1),
            lease.token(),
            Duration::from_secs(33)
        ))
    );
}

/// One request of the property, on a clock near the floor's interesting
/// range (tokens and microseconds of the same size).
#[derive(Clone, Copy, Debug)]
enum Step {
    Acquire(u64, u64),
    Reacquire(u64, u64),
    Renew(u64, u64),
    Release(u64),
}

fn step() -> impl Strategy<Value = (Step, u64)> {
    let owner = 0..3_u64;
    let now = 0..2_000_000_u64; // nanoseconds: 0..2 ms, around 1..2000 µs
    let ttl = 0..3_000_u64;
    (
        prop_oneof![
            (owner.clone(), ttl.clone()).prop_map(|(o, t)| Step::Acquire(o, t)),
            (owner.clone(), ttl.clone()).prop_map(|(o, t)| Step::Reacquire(o, t)),
            (owner.clone(), ttl).prop_map(|(o, t)| Step::Renew(o, t)),
            owner.prop_map(Step::Release),
        ],
        now,
    )
}

fn apply(authority: &mut LeaseAuthority, step: Step, now: Duration) -> Decision {
    let current = authority.lease().map(|lease| lease.token());
    match step {
        Step::Acquire(owner, ttl) => {
            authority.acquire(OwnerId::new(owner), now, Duration::from_nanos(ttl))
        }
        Step::Reacquire(owner, ttl) => {
            authority.reacquire(OwnerId::new(owner), now, Duration::from_nanos(ttl))
        }
        Step::Renew(owner, ttl) => {
            authority.renew(OwnerId::new(owner), current, now, Duration::from_nanos(ttl))
        }
        Step::Release(owner) => authority.release(OwnerId::new(owner), current, now),
    }
}

proptest! {
    #[test]
    fn the_floor_changes_only_the_token_of_a_grant(
        start in prop_oneof![Just(0_u64), 1..3_000_u64, Just(u64::MAX - 2)],
        clamp in any::<bool>(),
        steps in prop::collection::vec(step(), 1..40),
    ) {
        let policy = if clamp { ClockPolicy::Clamp } else { ClockPolicy::Reject };
        let checkpoint = Checkpoint::from_parts(FencingToken::new(start), None, Duration::ZERO).unwrap();
        let mut floored = LeaseAuthority::restore(checkpoint)
            .with_clock_policy(policy)
            .with_token_floor(TokenFloor::ClockMicros);
        let mut issued: Vec<u64> = Vec::new();
        for (step, now) in steps {
            let now = Duration::from_nanos(now);
            let evaluated = now.max(floored.observed());
            let mut sequence = LeaseAuthority::restore(floored.checkpoint()).with_clock_policy(policy);
            let expected = apply(&mut sequence, step, now);
            let decided = apply(&mut floored, step, now);
            match (expected, decided) {
                (Decision::Granted(plain), Decision::Granted(lease)) => {
                    let micros = u64::try_from(evaluated.as_micros()).unwrap();
                    prop_assert_eq!(lease.token().value(), plain.token().value().max(micros));
                    prop_assert_eq!((lease.owner(), lease.expires_at()), (plain.owner(), plain.expires_at()));
                    prop_assert_eq!(floored.last_issued(), Some(lease.token()));
                    if let Some(previous) = issued.last() {
                        prop_assert!(lease.token().value() > *previous);
                    }
                    issued.push(lease.token().value());
                }
                (expected, decided) => {
                    prop_assert_eq!(expected, decided);
                    prop_assert_eq!(sequence.checkpoint(), floored.checkpoint());
                }
            }
            prop_assert_eq!(floored.observed(), sequence.observed());
        }
    }
}
