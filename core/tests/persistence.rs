//! `must_store`: a store that writes only what the rule says it must, against
//! one that writes every decided state, over random histories under the
//! stores' policy (`Clamp`, horizon `u64::MAX` nanoseconds), with clocks that
//! go forwards, backwards and to the limits.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    clippy::arithmetic_side_effects
)]

use std::time::Duration;

use lease_machines::{
    must_store, Checkpoint, ClockPolicy, Decision, FencingToken, Lease, LeaseAuthority, OwnerId,
    Rejection,
};
use proptest::prelude::*;
use proptest::test_runner::TestCaseError;

/// The end of a store's timeline.
const HORIZON: Duration = Duration::from_nanos(u64::MAX);

fn store_authority(row: Checkpoint) -> LeaseAuthority {
    LeaseAuthority::restore(row)
        .with_clock_policy(ClockPolicy::Clamp)
        .with_horizon(HORIZON)
}

/// How the caller's clock moves for the next request (always within the
/// store's timeline, as a store's `now` is).
#[derive(Clone, Copy, Debug)]
enum Clock {
    Forward(u64),
    Back(u64),
    Small(u64),
    End,
    NearEnd(u64),
    Anywhere(u64),
}

impl Clock {
    fn resolve(self, previous: u64) -> u64 {
        match self {
            Clock::Forward(n) => previous.saturating_add(n),
            Clock::Back(n) => previous.saturating_sub(n),
            Clock::Small(n) => n,
            Clock::End => u64::MAX,
            Clock::NearEnd(n) => u64::MAX - n,
            Clock::Anywhere(n) => n,
        }
    }

    fn never_back(self) -> Self {
        match self {
            Clock::Back(n) => Clock::Forward(n),
            Clock::Small(n) => Clock::Forward(n),
            Clock::NearEnd(_) | Clock::Anywhere(_) => Clock::Forward(1),
            other => other,
        }
    }
}

fn clock() -> impl Strategy<Value = Clock> {
    prop_oneof![
        8 => (0u64..6).prop_map(Clock::Forward),
        4 => (1u64..8).prop_map(Clock::Back),
        2 => (0u64..16).prop_map(Clock::Small),
        1 => Just(Clock::End),
        1 => (0u64..6).prop_map(Clock::NearEnd),
        1 => any::<u64>().prop_map(Clock::Anywhere),
    ]
}

fn ttl() -> impl Strategy<Value = u64> {
    prop_oneof![
        1 => Just(0),
        8 => 1u64..8,
        1 => Just(u64::MAX),
        1 => (0u64..4).prop_map(|n| u64::MAX - n),
        1 => any::<u64>(),
    ]
}

/// Which token a renew or release shows: the current lease's, or a raw
/// wire value (0: none).
#[derive(Clone, Copy, Debug)]
enum Token {
    Current,
    Raw(u64),
}

fn token() -> impl Strategy<Value = Token> {
    prop_oneof![
        6 => Just(Token::Current),
        2 => (0u64..6).prop_map(Token::Raw),
        1 => Just(Token::Raw(u64::MAX)),
    ]
}

#[derive(Clone, Copy, Debug)]
enum Kind {
    Acquire(u64),
    Reacquire(u64),
    Renew(Token, u64),
    Release(Token),
}

fn kind() -> impl Strategy<Value = Kind> {
    prop_oneof![
        4 => ttl().prop_map(Kind::Acquire),
        2 => ttl().prop_map(Kind::Reacquire),
        4 => (token(), ttl()).prop_map(|(t, d)| Kind::Renew(t, d)),
        2 => token().prop_map(Kind::Release),
    ]
}

#[derive(Clone, Copy, Debug)]
struct Step {
    owner: u64,
    clock: Clock,
    kind: Kind,
}

fn step() -> impl Strategy<Value = Step> {
    (0u64..3, clock(), kind()).prop_map(|(owner, clock, kind)| Step { owner, clock, kind })
}

fn history() -> impl Strategy<Value = (u64, Vec<Step>)> {
    (
        prop_oneof![Just(0u64), 0u64..32, Just(u64::MAX - 8)],
        prop::collection::vec(step(), 1..60),
    )
}

/// One request, resolved against the row it is decided on.
#[derive(Clone, Copy, Debug)]
struct Request {
    owner: OwnerId,
    now: Duration,
    kind: Kind,
}

impl Request {
    fn decide(self, row: Checkpoint) -> (Decision, Checkpoint) {
        let mut authority = store_authority(row);
        let token = |pick: Token| match pick {
            Token::Current => row.lease().map(|lease| lease.token()),
            Token::Raw(raw) => FencingToken::new(raw),
        };
        let nanos = Duration::from_nanos;
        let decision = match self.kind {
            Kind::Acquire(ttl) => authority.acquire(self.owner, self.now, nanos(ttl)),
            Kind::Reacquire(ttl) => authority.reacquire(self.owner, self.now, nanos(ttl)),
            Kind::Renew(pick, ttl) => {
                authority.renew(self.owner, token(pick), self.now, nanos(ttl))
            }
            Kind::Release(pick) => authority.release(self.owner, token(pick), self.now),
        };
        (decision, authority.checkpoint())
    }

    fn ttl(self) -> Duration {
        match self.kind {
            Kind::Acquire(ttl) | Kind::Reacquire(ttl) | Kind::Renew(_, ttl) => {
                Duration::from_nanos(ttl)
            }
            Kind::Release(_) => Duration::ZERO,
        }
    }
}

/// What the store that writes only what it must keeps, and the latest
/// instant a request showed since the row was last written (what a store
/// writing every decision would have as `observed`, had it made the same
/// decisions).
struct Necessary {
    row: Checkpoint,
    seen: Duration,
    writes: usize,
}

impl Necessary {
    fn new(observed: u64) -> Self {
        let row = Checkpoint::from_parts(None, None, Duration::from_nanos(observed)).unwrap();
        Self {
            row,
            seen: row.observed(),
            writes: 0,
        }
    }

    /// Decides `request`, writing the row only when `must_store` says so.
    fn decide(&mut self, request: Request) -> Decision {
        let (decision, after) = request.decide(self.row);
        self.seen = self.seen.max(request.now);
        if must_store(&self.row, &after) {
            self.row = after;
            self.seen = after.observed();
            self.writes += 1;
        }
        decision
    }

    /// The row a store writing every decision would hold after the same
    /// decisions: the same tokens and lease, the latest instant seen since
    /// the last write.
    fn written_every_time(&self) -> Checkpoint {
        let observed = self.row.observed().max(self.seen);
        Checkpoint::from_parts(self.row.last_issued(), self.row.lease(), observed).unwrap()
    }
}

/// Checks one decision made on the stored row (`necessary`) against the one
/// made on the row a store writing everything would hold (`every`), for the
/// same request after the same past. `stored` is the instant the first was
/// evaluated from at the least, `seen` the latest instant the second had.
fn allowed(
    request: Request,
    stored: Duration,
    seen: Duration,
    necessary: Decision,
    every: Decision,
) -> Result<(), TestCaseError> {
    let evaluated = request.now.max(stored);
    let full_evaluated = request.now.max(seen);
    let step_back = full_evaluated - evaluated;
    let ttl = request.ttl();
    let same_lease_earlier = |mine: Lease, theirs: Lease| -> Result<(), TestCaseError> {
        prop_assert_eq!(mine.owner(), theirs.owner());
        prop_assert_eq!(mine.token(), theirs.token());
        prop_assert!(
            mine.expires_at() <= theirs.expires_at(),
            "a deadline later than the other's"
        );
        prop_assert!(
            theirs.expires_at() - mine.expires_at() <= step_back,
            "deadlines differ by more than the clock stepped back: {mine:?} {theirs:?}"
        );
        Ok(())
    };
    match (necessary, every) {
        (a, b) if a == b => Ok(()),
        (Decision::Granted(mine), Decision::Granted(theirs)) => {
            prop_assert_eq!(
                mine.expires_at(),
                evaluated + ttl,
                "a grant counts from its own instant"
            );
            same_lease_earlier(mine, theirs)
        }
        (Decision::Renewed(mine), Decision::Renewed(theirs)) => {
            prop_assert!(mine.expires_at() >= evaluated + ttl);
            same_lease_earlier(mine, theirs)
        }
        // The deadline fits the horizon from the earlier instant: the checks
        // after the horizon's decide.
        (
            Decision::Granted(_)
            | Decision::Renewed(_)
            | Decision::Rejected(Rejection::Occupied | Rejection::TokensExhausted),
            Decision::Rejected(Rejection::DeadlineOverflow),
        ) => {
            prop_assert!(
                step_back > Duration::ZERO,
                "differ at the horizon without a step back"
            );
            prop_assert!(
                full_evaluated
                    .checked_add(ttl)
                    .map_or(true, |end| end > HORIZON),
                "overflow that is not at the horizon"
            );
            Ok(())
        }
        (a, b) => Err(TestCaseError::fail(format!(
            "{request:?}: the necessary store decided {a:?}, the every-time store {b:?}"
        ))),
    }
}

/// Whether the lease record is live at an instant, for one row.
fn live(row: Checkpoint, at: Duration) -> Option<bool> {
    row.lease().map(|lease| !lease.is_expired(at))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 1024, ..ProptestConfig::default() })]

    /// With a clock that never steps back, the two stores decide exactly
    /// alike, step by step, in two independent histories, and hold the same
    /// row but for an observed instant that may lag.
    #[test]
    fn with_clocks_that_never_step_back_nothing_differs((start, steps) in history()) {
        let mut necessary = Necessary::new(start);
        let mut every = Checkpoint::from_parts(None, None, Duration::from_nanos(start)).unwrap();
        let mut now = start;
        for step in steps {
            now = step.clock.never_back().resolve(now);
            let request = Request { owner: OwnerId::new(step.owner), now: Duration::from_nanos(now), kind: step.kind };
            let (decision, after) = request.decide(every);
            every = after;
            prop_assert_eq!(necessary.decide(request), decision, "{:?}", request);
            prop_assert_eq!(necessary.row.last_issued(), every.last_issued());
            prop_assert_eq!(necessary.row.lease(), every.lease());
            prop_assert!(necessary.row.observed() <= every.observed());
            prop_assert_eq!(necessary.written_every_time(), every);
        }
    }

    /// With any clock: after the same past, each decision made on the stored
    /// row is the one made on the every-time row, or differs only as
    /// `must_store` documents (a deadline counted from an earlier instant, by
    /// at most the step back; a grant that fits the horizon where the other
    /// overflows). Liveness is decided alike, the stored instant never goes
    /// back, and the lease record is never shortened.
    #[test]
    fn with_any_clock_only_the_documented_differences((start, steps) in history()) {
        let mut necessary = Necessary::new(start);
        let mut now = start;
        let mut seen_expired: Option<FencingToken> = None;
        for step in steps {
            now = step.clock.resolve(now);
            let request = Request { owner: OwnerId::new(step.owner), now: Duration::from_nanos(now), kind: step.kind };
            let before = necessary.row;
            let every_row = necessary.written_every_time();
            let (every, _) = request.decide(every_row);
            let stored = before.observed();
            let seen = necessary.seen;
            prop_assert_eq!(
                live(before, request.now.max(stored)),
                live(every_row, request.now.max(seen)),
                "liveness differs: stored {:?}, every-time {:?}, {:?}", before, every_row, request
            );
            let decision = necessary.decide(request);
            allowed(request, stored, seen, decision, every)?;
            if let Some(lease) = before.lease() {
                if lease.is_expired(request.now.max(stored)) {
                    seen_expired = Some(lease.token());
                }
                if seen_expired == Some(lease.token()) {
                    let revived = matches!(decision, Decision::Renewed(_) | Decision::Released
                        | Decision::Rejected(Rejection::Occupied));
                    prop_assert!(!revived, "a lease seen expired was revived: {:?} by {:?}", lease, request);
                }
            }
            let after = necessary.row;
            prop_assert!(after.observed() >= before.observed(), "the stored instant went back");
            if let (Some(old), Some(new)) = (before.lease(), after.lease()) {
                if old.token() == new.token() {
                    prop_assert!(new.expires_at() >= old.expires_at(), "a lease was shortened");
                }
            }
        }
    }

    /// The rule writes less: in a history of refusals against a live lease,
    /// only the grant and the refusal that crossed the deadline are written.
    #[test]
    fn refusals_within_the_lease_write_nothing(refusals in prop::collection::vec(0u64..40, 1..30)) {
        let mut necessary = Necessary::new(0);
        let grant = Request { owner: OwnerId::new(1), now: Duration::ZERO, kind: Kind::Acquire(40) };
        prop_assert!(necessary.decide(grant).is_granted());
        for at in refusals {
            let refusal = Request { owner: OwnerId::new(2), now: Duration::from_nanos(at), kind: Kind::Acquire(5) };
            prop_assert_eq!(necessary.decide(refusal), Decision::Rejected(Rejection::Occupied));
        }
        prop_assert_eq!(necessary.writes, 1);
        let late = Request { owner: OwnerId::new(1), now: Duration::from_nanos(40), kind: Kind::Renew(Token::Current, 5) };
        prop_assert_eq!(necessary.decide(late), Decision::Rejected(Rejection::Expired));
        prop_assert_eq!(necessary.writes, 2);
    }
}

/// The reason for the crossing rule: a refusal past the deadline, were it not
/// written, would let a clock stepping back renew the lease it saw expire.
#[test]
fn a_refusal_past_the_deadline_is_written_so_a_step_back_revives_nothing() {
    let mut necessary = Necessary::new(0);
    let nanos = Duration::from_nanos;
    let at = |now: u64, kind: Kind| Request {
        owner: OwnerId::new(1),
        now: nanos(now),
        kind,
    };
    assert!(necessary.decide(at(100, Kind::Acquire(10))).is_granted());
    let written = necessary.row;
    assert_eq!(
        necessary.decide(at(111, Kind::Renew(Token::Current, 5))),
        Decision::Rejected(Rejection::Expired)
    );
    assert_ne!(
        necessary.row, written,
        "the refusal that crossed the deadline is written"
    );
    assert_eq!(necessary.row.observed(), nanos(111));
    assert_eq!(
        necessary.decide(at(105, Kind::Renew(Token::Current, 5))),
        Decision::Rejected(Rejection::Expired),
        "a clock stepping back revives nothing"
    );
}

/// Exactly the crossing: a refusal that reaches the deadline is written, one
/// an instant before it is not; with no lease, nothing but tokens and leases
/// is written.
#[test]
fn the_crossing_is_exact() {
    let nanos = Duration::from_nanos;
    let three = FencingToken::new(3).unwrap();
    let lease = Lease::new(OwnerId::new(1), three, nanos(50));
    let row =
        |observed: u64| Checkpoint::from_parts(Some(three), Some(lease), nanos(observed)).unwrap();
    assert!(!must_store(&row(10), &row(49)));
    assert!(must_store(&row(10), &row(50)));
    assert!(must_store(&row(49), &row(u64::MAX)));
    assert!(!must_store(&row(50), &row(u64::MAX)));
    assert!(!must_store(&row(10), &row(10)));
    let free = |observed: u64| Checkpoint::from_parts(Some(three), None, nanos(observed)).unwrap();
    assert!(!must_store(&free(0), &free(u64::MAX)));
    assert!(must_store(&free(0), &row(0)), "a lease record appearing");
    assert!(must_store(&row(0), &free(0)), "a release");
    let fresh = Checkpoint::default();
    assert!(!must_store(
        &fresh,
        &Checkpoint::from_parts(None, None, nanos(7)).unwrap()
    ));
}
