//! Property tests over random histories of acquire, reacquire, renew, release
//! and checkpoint-restore, with clocks that go forwards, backwards and to the
//! end of time, under both clock policies.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    clippy::arithmetic_side_effects
)]

mod support;

use std::time::Duration;

use lease_machines::{
    Cadence, Checkpoint, ClockPolicy, Decision, Fence, FencingToken, Holder, HolderState, Lease,
    LeaseAuthority, OwnerId,
};
use proptest::prelude::*;
use proptest::test_runner::TestCaseError;
use support::{restored, Checker, Op, Outcome, Reference};

// ------------------------------------------------------------------ strategies

/// How the caller's clock moves for the next request.
#[derive(Clone, Copy, Debug)]
enum TimeStep {
    Forward(u64),
    Back(u64),
    Small(u64),
    EndOfTime,
    NearEnd(u64),
    Anywhere(u64, u32),
}

impl TimeStep {
    fn resolve(self, previous: Duration) -> Duration {
        let ns = Duration::from_nanos;
        match self {
            TimeStep::Forward(n) => previous.saturating_add(ns(n)),
            TimeStep::Back(n) => previous.saturating_sub(ns(n)),
            TimeStep::Small(n) => ns(n),
            TimeStep::EndOfTime => Duration::MAX,
            TimeStep::NearEnd(n) => Duration::MAX - ns(n),
            TimeStep::Anywhere(secs, nanos) => Duration::new(secs, nanos),
        }
    }
}

fn time_step() -> impl Strategy<Value = TimeStep> {
    prop_oneof![
        8 => (0u64..4).prop_map(TimeStep::Forward),
        3 => (1u64..4).prop_map(TimeStep::Back),
        2 => (0u64..12).prop_map(TimeStep::Small),
        1 => Just(TimeStep::EndOfTime),
        1 => (0u64..4).prop_map(TimeStep::NearEnd),
        1 => (any::<u64>(), 0u32..1_000_000_000).prop_map(|(s, n)| TimeStep::Anywhere(s, n)),
    ]
}

fn ttl() -> impl Strategy<Value = Duration> {
    prop_oneof![
        1 => Just(Duration::ZERO),
        8 => (1u64..6).prop_map(Duration::from_nanos),
        1 => Just(Duration::MAX),
        1 => (0u64..3).prop_map(|n| Duration::MAX - Duration::from_nanos(n)),
        1 => (any::<u64>(), 0u32..1_000_000_000).prop_map(|(s, n)| Duration::new(s, n)),
    ]
}

/// Which token a renew or release shows.
#[derive(Clone, Copy, Debug)]
enum TokenPick {
    /// The token of the lease record, if any (else "none").
    Current,
    /// The n-th most recent granted token (stale once a newer one exists).
    Recent(usize),
    /// A raw wire value: 0 (no token), small, or the largest.
    Raw(u64),
}

fn token_pick() -> impl Strategy<Value = TokenPick> {
    prop_oneof![
        6 => Just(TokenPick::Current),
        2 => (0usize..4).prop_map(TokenPick::Recent),
        1 => Just(TokenPick::Raw(0)),
        1 => (1u64..6).prop_map(TokenPick::Raw),
        1 => Just(TokenPick::Raw(u64::MAX)),
    ]
}

#[derive(Clone, Copy, Debug)]
enum Step {
    Acquire(u64, TimeStep, Duration),
    Reacquire(u64, TimeStep, Duration),
    Renew(u64, TokenPick, TimeStep, Duration),
    Release(u64, TokenPick, TimeStep),
    /// Store the checkpoint and carry on with an authority rebuilt from it.
    Restore,
}

fn step() -> impl Strategy<Value = Step> {
    let owner = 0u64..3;
    prop_oneof![
        4 => (owner.clone(), time_step(), ttl()).prop_map(|(o, t, d)| Step::Acquire(o, t, d)),
        2 => (owner.clone(), time_step(), ttl()).prop_map(|(o, t, d)| Step::Reacquire(o, t, d)),
        4 => (owner.clone(), token_pick(), time_step(), ttl())
            .prop_map(|(o, k, t, d)| Step::Renew(o, k, t, d)),
        2 => (owner, token_pick(), time_step()).prop_map(|(o, k, t)| Step::Release(o, k, t)),
        1 => Just(Step::Restore),
    ]
}

/// Where a history starts: fresh, or a stored row, possibly close to token
/// exhaustion so that `TokensExhausted` is reached.
#[derive(Clone, Copy, Debug)]
enum Start {
    Fresh,
    Row {
        below_max: u64,
        lease: Option<(u64, u64)>,
        observed: u64,
    },
}

fn start() -> impl Strategy<Value = Start> {
    prop_oneof![
        3 => Just(Start::Fresh),
        1 => (0u64..3, proptest::option::of((0u64..3, 0u64..8)), 0u64..6).prop_map(
            |(below_max, lease, observed)| Start::Row { below_max, lease, observed }
        ),
    ]
}

fn policy() -> impl Strategy<Value = ClockPolicy> {
    prop_oneof![Just(ClockPolicy::Reject), Just(ClockPolicy::Clamp)]
}

impl Start {
    fn authority(self, policy: ClockPolicy) -> LeaseAuthority {
        match self {
            Start::Fresh => LeaseAuthority::new().with_clock_policy(policy),
            Start::Row {
                below_max,
                lease,
                observed,
            } => {
                let last = FencingToken::new(u64::MAX - below_max).unwrap();
                let lease = lease.map(|(owner, expires)| {
                    Lease::new(OwnerId::new(owner), last, Duration::from_nanos(expires))
                });
                let row = Checkpoint::from_parts(Some(last), lease, Duration::from_nanos(observed))
                    .expect("a consistent row");
                LeaseAuthority::restore(row).with_clock_policy(policy)
            }
        }
    }
}

/// Turns the abstract steps into concrete requests against the running
/// history (the caller's clock and the tokens seen so far). `Restore` stays
/// `None`.
struct Resolver {
    clock: Duration,
    granted: Vec<u64>,
}

impl Resolver {
    fn new(authority: &LeaseAuthority) -> Self {
        Self {
            clock: authority.observed(),
            granted: authority
                .last_issued()
                .map(FencingToken::value)
                .into_iter()
                .collect(),
        }
    }

    fn resolve(&mut self, step: Step, authority: &LeaseAuthority) -> Option<Op> {
        let op = match step {
            Step::Acquire(owner, t, ttl) => Op::Acquire {
                owner,
                now: self.tick(t),
                ttl,
            },
            Step::Reacquire(owner, t, ttl) => Op::Reacquire {
                owner,
                now: self.tick(t),
                ttl,
            },
            Step::Renew(owner, pick, t, ttl) => Op::Renew {
                owner,
                token: self.token(pick, authority),
                now: self.tick(t),
                ttl,
            },
            Step::Release(owner, pick, t) => Op::Release {
                owner,
                token: self.token(pick, authority),
                now: self.tick(t),
            },
            Step::Restore => return None,
        };
        Some(op)
    }

    fn tick(&mut self, step: TimeStep) -> Duration {
        self.clock = step.resolve(self.clock);
        self.clock
    }

    fn token(&self, pick: TokenPick, authority: &LeaseAuthority) -> u64 {
        match pick {
            TokenPick::Current => authority.lease().map_or(0, |lease| lease.token().value()),
            TokenPick::Recent(n) => self.granted.iter().rev().nth(n).copied().unwrap_or(0),
            TokenPick::Raw(raw) => raw,
        }
    }

    fn saw(&mut self, decision: Decision) {
        if let Decision::Granted(lease) = decision {
            self.granted.push(lease.token().value());
        }
    }
}

fn history() -> impl Strategy<Value = (Start, ClockPolicy, Vec<Step>)> {
    (start(), policy(), proptest::collection::vec(step(), 1..80))
}

fn fail(message: String) -> TestCaseError {
    TestCaseError::fail(message)
}

// ------------------------------------------------------------------ properties

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    /// The strongest check: on every step the authority answers exactly what
    /// the reference model of SPEC 2.1 answers, and holds the same state.
    #[test]
    fn the_authority_agrees_with_the_reference_model((start, policy, steps) in history()) {
        let mut authority = start.authority(policy);
        let mut model = Reference::from_row(policy, &authority.checkpoint());
        let mut resolver = Resolver::new(&authority);
        for (i, step) in steps.into_iter().enumerate() {
            let Some(op) = resolver.resolve(step, &authority) else {
                authority = restored(&authority);
                continue;
            };
            let decision = op.apply(&mut authority);
            let expected = model.step(&op);
            prop_assert_eq!(Outcome::from(decision), expected, "step {} {:?}", i, op);
            model.same_state_as(&authority.checkpoint()).map_err(fail)?;
            resolver.saw(decision);
        }
    }

    /// Tokens only grow, never two live leases, renewal never shortens or
    /// resurrects, rejections change only the clock, the stored state matches
    /// what the decisions said.
    #[test]
    fn the_invariants_hold_on_every_step((start, policy, steps) in history()) {
        let mut authority = start.authority(policy);
        let mut checker = Checker::new(&authority);
        let mut resolver = Resolver::new(&authority);
        for step in steps {
            let Some(op) = resolver.resolve(step, &authority) else {
                authority = restored(&authority);
                continue;
            };
            let before = authority;
            let decision = op.apply(&mut authority);
            checker.check(&op, &before, decision, &authority).map_err(fail)?;
            resolver.saw(decision);
        }
    }

    /// An authority rebuilt from a checkpoint at any point of the history
    /// gives exactly the same decisions as the original for the rest of it.
    #[test]
    fn a_restored_authority_decides_like_the_original(
        (start, policy, steps) in history(),
        split in any::<prop::sample::Index>(),
    ) {
        let mut original = start.authority(policy);
        let mut resolver = Resolver::new(&original);
        let split = split.index(steps.len() + 1);
        let mut copy: Option<LeaseAuthority> = None;
        for (i, step) in steps.into_iter().enumerate() {
            if i == split {
                copy = Some(restored(&original));
            }
            let Some(op) = resolver.resolve(step, &original) else {
                continue;
            };
            let decision = op.apply(&mut original);
            if let Some(copy) = copy.as_mut() {
                prop_assert_eq!(op.apply(copy), decision, "step {} {:?}", i, op);
                prop_assert_eq!(copy.checkpoint(), original.checkpoint());
                prop_assert_eq!(copy.clock_policy(), original.clock_policy());
            }
            resolver.saw(decision);
        }
    }

    /// A fence fed every granted token, in any order, never accepts a token
    /// lower than one it accepted, and ends at the greatest.
    #[test]
    fn a_fence_never_accepts_below_what_it_accepted(
        (start, policy, steps) in history(),
        order in proptest::collection::vec(any::<u32>(), 80),
        stored in proptest::option::of(1u64..6),
    ) {
        let mut authority = start.authority(policy);
        let mut resolver = Resolver::new(&authority);
        let mut granted = Vec::new();
        for step in steps {
            if let Some(op) = resolver.resolve(step, &authority) {
                let decision = op.apply(&mut authority);
                if let Decision::Granted(lease) = decision {
                    granted.push(lease.token());
                }
                resolver.saw(decision);
            }
        }
        // Fed in grant order, every token passes.
        let mut in_order = Fence::new(None);
        for token in &granted {
            prop_assert!(in_order.accept(*token));
        }
        prop_assert_eq!(in_order.highest(), granted.last().copied());

        // Fed in a random order (each token twice, as a lease writes more
        // than once), from a possibly stored mark.
        let mut shuffled: Vec<(u32, FencingToken)> = granted
            .iter()
            .chain(granted.iter())
            .enumerate()
            .map(|(i, token)| (order[i % order.len()] ^ (i as u32), *token))
            .collect();
        shuffled.sort_unstable();
        let initial = stored.and_then(FencingToken::new);
        let mut fence = Fence::new(initial);
        let mut accepted: Vec<FencingToken> = initial.into_iter().collect();
        for (_, token) in shuffled {
            let mark = fence.highest();
            let ok = fence.accept(token);
            prop_assert_eq!(ok, mark.map_or(true, |mark| token >= mark));
            if ok {
                prop_assert!(accepted.iter().all(|earlier| token >= *earlier));
                accepted.push(token);
                prop_assert_eq!(fence.highest(), Some(token));
            } else {
                prop_assert_eq!(fence.highest(), mark);
            }
        }
        prop_assert_eq!(fence.highest(), granted.iter().copied().chain(initial).max());
    }

    /// The holder never leaves Fenced, its token never goes down, and only a
    /// strictly newer token brings it back from Expired.
    #[test]
    fn holder_transitions_respect_the_rules(
        calls in proptest::collection::vec((0u8..6, 0u64..6, 0u64..80), 1..60),
    ) {
        let cadence = Cadence::new(Duration::from_secs(30), Duration::from_secs(10), Duration::from_secs(5)).unwrap();
        let mut holder = Holder::new(FencingToken::new(2).unwrap(), Duration::ZERO, cadence);
        for (call, raw, at) in calls {
            let before = holder;
            let at = Duration::from_secs(at);
            let token = FencingToken::new(raw.max(1)).unwrap();
            let changed = match call {
                0 => holder.refresh(at),
                1 => holder.confirm(token, at),
                2 => holder.expire(),
                3 => holder.reacquire(token, at),
                4 => holder.fence(),
                _ => {
                    let due = holder.renewal_due(at);
                    prop_assert_eq!(holder, before);
                    prop_assert_eq!(
                        due,
                        match before.state() {
                            HolderState::Confirmed => at >= before.confirmed_at() + cadence.renew_after(),
                            HolderState::Unconfirmed | HolderState::AtRisk => true,
                            HolderState::Expired | HolderState::Fenced => false,
                        }
                    );
                    false
                }
            };
            prop_assert!(holder.token() >= before.token());
            if before.state() == HolderState::Fenced {
                prop_assert_eq!(holder, before);
                prop_assert!(!changed);
            }
            if before.state() == HolderState::Expired && holder.state() != HolderState::Expired {
                prop_assert!(
                    holder.state() == HolderState::Fenced || holder.token() > before.token()
                );
            }
            if !changed {
                prop_assert_eq!(holder, before);
            }
            prop_assert_eq!(
                holder.at_risk(at),
                matches!(holder.state(), HolderState::Expired | HolderState::Fenced)
                    || at >= holder.confirmed_at() + cadence.warn_after()
            );
        }
    }
}

/// The generators are only useful if the random histories reach every kind of
/// answer; this makes sure a change to them cannot quietly hollow out the
/// properties above.
#[test]
fn the_random_histories_reach_every_decision() {
    use proptest::strategy::ValueTree;
    use proptest::test_runner::TestRunner;
    use std::collections::BTreeSet;

    let mut runner = TestRunner::deterministic();
    let mut seen = BTreeSet::new();
    for _ in 0..400 {
        let (start, policy, steps) = history().new_tree(&mut runner).unwrap().current();
        let mut authority = start.authority(policy);
        let mut resolver = Resolver::new(&authority);
        for step in steps {
            if let Some(op) = resolver.resolve(step, &authority) {
                let decision = op.apply(&mut authority);
                seen.insert(match decision {
                    Decision::Granted(_) => "granted",
                    Decision::Renewed(_) => "renewed",
                    Decision::Released => "released",
                    Decision::Rejected(reason) => reason.as_str(),
                });
                resolver.saw(decision);
            }
        }
    }
    let wanted: BTreeSet<&str> = ["granted", "renewed", "released"]
        .into_iter()
        .chain(lease_machines::Rejection::ALL.map(lease_machines::Rejection::as_str))
        .collect();
    assert_eq!(seen, wanted);
}
