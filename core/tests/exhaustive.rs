//! Exhaustive small-scope check: every history of requests up to a bounded
//! depth, over a small alphabet, under both clock policies, from a fresh
//! history and from a stored row whose fourth grant hits token exhaustion.
//!
//! Every transition from every reachable state is checked against
//! - the reference model of SPEC 2.1 (same decision, same state),
//! - the history invariants of `support::Checker`,
//! - restore equivalence: an authority rebuilt from the checkpoint before the
//!   request gives the same decision and ends in the same state.
//!
//! Histories that reach the same state (authority, model and checker state
//! together) have identical futures, because every check is a deterministic
//! function of that state and the request. So the search visits each distinct
//! state once (breadth first, so at the smallest depth it is reachable at) and
//! tries every request from it: this covers every history of up to `DEPTH`
//! requests (the sum of `alphabet^d` for d = 1..=DEPTH) without replaying each
//! of them. A second test enumerates histories one by
//! one, without merging, and confirms that it reaches exactly the same states.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    clippy::arithmetic_side_effects
)]

mod support;

use std::collections::{BTreeMap, HashSet};
use std::time::{Duration, Instant};

use lease_machines::{Checkpoint, ClockPolicy, Decision, FencingToken, LeaseAuthority, Rejection};
use support::{restored, Checker, Op, Outcome, Reference};

const DEPTH: usize = 6;
const OWNERS: [u64; 2] = [1, 2];
const TTLS: [u64; 3] = [0, 1, 2];
const POLICIES: [ClockPolicy; 2] = [ClockPolicy::Reject, ClockPolicy::Clamp];

/// Instants: small steps (any of which regresses after a later one), and the
/// end of time, where every TTL overflows, and one nanosecond before it,
/// where a TTL of 1 ns fits exactly.
fn times() -> [Duration; 6] {
    let ns = Duration::from_nanos;
    [
        ns(0),
        ns(1),
        ns(2),
        ns(3),
        Duration::MAX - ns(1),
        Duration::MAX,
    ]
}

#[derive(Clone, Copy, Debug)]
enum Start {
    Fresh,
    /// `last_issued = u64::MAX - 3`: the third grant takes `u64::MAX`, the
    /// fourth is `TokensExhausted`.
    NearExhaustion,
}

impl Start {
    fn authority(self, policy: ClockPolicy) -> LeaseAuthority {
        match self {
            Start::Fresh => LeaseAuthority::new().with_clock_policy(policy),
            Start::NearExhaustion => {
                let row =
                    Checkpoint::from_parts(FencingToken::new(u64::MAX - 3), None, Duration::ZERO)
                        .unwrap();
                LeaseAuthority::restore(row).with_clock_policy(policy)
            }
        }
    }

    /// "No token" plus every token this history can issue within the depth
    /// (and, near exhaustion, a low token it never issues).
    fn tokens(self) -> Vec<u64> {
        match self {
            Start::Fresh => (0..=DEPTH as u64).collect(),
            Start::NearExhaustion => vec![0, 1, u64::MAX - 2, u64::MAX - 1, u64::MAX],
        }
    }
}

/// Every request of the small scope.
fn alphabet(times: &[Duration], tokens: &[u64]) -> Vec<Op> {
    let mut ops = Vec::new();
    for &owner in &OWNERS {
        for &now in times {
            for ttl in TTLS.map(Duration::from_nanos) {
                ops.push(Op::Acquire { owner, now, ttl });
                ops.push(Op::Reacquire { owner, now, ttl });
                for &token in tokens {
                    ops.push(Op::Renew {
                        owner,
                        token,
                        now,
                        ttl,
                    });
                }
            }
            for &token in tokens {
                ops.push(Op::Release { owner, token, now });
            }
        }
    }
    ops
}

/// Everything the future of a history depends on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
struct Node {
    authority: LeaseAuthority,
    model: Reference,
    checker: Checker,
}

impl Node {
    fn new(authority: LeaseAuthority) -> Self {
        Self {
            authority,
            model: Reference::from_row(authority.clock_policy(), &authority.checkpoint()),
            checker: Checker::new(&authority).key(),
        }
    }

    /// Applies `op`, checks everything, and returns the next node and the
    /// decision.
    fn step(&self, op: &Op) -> (Node, Decision) {
        let before = self.authority;
        let mut authority = before;
        let decision = op.apply(&mut authority);

        let mut model = self.model;
        let expected = model.step(op);
        assert_eq!(
            Outcome::from(decision),
            expected,
            "model disagrees: {op:?} from {self:?}"
        );
        if let Err(message) = model.same_state_as(&authority.checkpoint()) {
            panic!("{message}; {op:?} from {self:?}");
        }

        let mut checker = self.checker;
        if let Err(message) = checker.check(op, &before, decision, &authority) {
            panic!("{message}; from {self:?}");
        }

        let mut copy = restored(&before);
        assert_eq!(
            copy, before,
            "restore(checkpoint) is not the same authority"
        );
        assert_eq!(
            op.apply(&mut copy),
            decision,
            "restored authority decides differently"
        );
        assert_eq!(copy, authority, "restored authority ends elsewhere");

        let next = Node {
            authority,
            model,
            checker: checker.key(),
        };
        (next, decision)
    }
}

fn label(decision: Decision) -> &'static str {
    match decision {
        Decision::Granted(_) => "granted",
        Decision::Renewed(_) => "renewed",
        Decision::Released => "released",
        Decision::Rejected(reason) => reason.as_str(),
    }
}

struct Report {
    /// Distinct states reachable within the depth, the start included.
    states: HashSet<Node>,
    /// Requests tried: each state reached before the last level, times the
    /// alphabet.
    transitions: u64,
    decisions: BTreeMap<&'static str, u64>,
}

fn breadth_first(start: LeaseAuthority, alphabet: &[Op], depth: usize) -> Report {
    let first = Node::new(start);
    let mut report = Report {
        states: HashSet::from([first]),
        transitions: 0,
        decisions: BTreeMap::new(),
    };
    let mut frontier = vec![first];
    for _ in 0..depth {
        let mut next = Vec::new();
        for node in &frontier {
            for op in alphabet {
                let (after, decision) = node.step(op);
                report.transitions += 1;
                *report.decisions.entry(label(decision)).or_default() += 1;
                if report.states.insert(after) {
                    next.push(after);
                }
            }
        }
        frontier = next;
    }
    report
}

/// Plain enumeration: replays every history one by one, no merging.
fn every_history(
    node: Node,
    alphabet: &[Op],
    depth: usize,
    seen: &mut HashSet<Node>,
    count: &mut u64,
) {
    seen.insert(node);
    if depth == 0 {
        return;
    }
    for op in alphabet {
        let (after, _) = node.step(op);
        *count += 1;
        every_history(after, alphabet, depth - 1, seen, count);
    }
}

fn histories(alphabet: usize, depth: usize) -> u128 {
    (1..=depth).map(|d| (alphabet as u128).pow(d as u32)).sum()
}

#[test]
fn every_history_up_to_depth_six_keeps_every_invariant() {
    let clock = Instant::now();
    let mut all_decisions: BTreeMap<&'static str, u64> = BTreeMap::new();
    let (mut states, mut transitions, mut covered) = (0u64, 0u64, 0u128);
    for start in [Start::Fresh, Start::NearExhaustion] {
        let alphabet = alphabet(&times(), &start.tokens());
        for policy in POLICIES {
            let report = breadth_first(start.authority(policy), &alphabet, DEPTH);
            let n = histories(alphabet.len(), DEPTH);
            println!(
                "exhaustive {start:?}/{policy:?}: alphabet {} requests, depth {DEPTH}: \
                 {} histories covered, {} distinct states, {} transitions checked",
                alphabet.len(),
                n,
                report.states.len(),
                report.transitions,
            );
            states += report.states.len() as u64;
            transitions += report.transitions;
            covered += n;
            for (name, k) in report.decisions {
                *all_decisions.entry(name).or_default() += k;
            }
        }
    }
    println!(
        "exhaustive total: {covered} histories covered, {states} distinct states, \
         {transitions} transitions checked in {:.2?}",
        clock.elapsed()
    );
    println!("exhaustive decisions: {all_decisions:?}");

    // The scope is only worth something if it reaches every kind of answer.
    for name in ["granted", "renewed", "released"]
        .into_iter()
        .chain(Rejection::ALL.map(Rejection::as_str))
    {
        assert!(
            all_decisions.get(name).copied().unwrap_or(0) > 0,
            "{name} never reached"
        );
    }
}

#[test]
fn merging_states_loses_no_history() {
    // Replay every history one by one at a smaller depth and confirm that the
    // merged search reaches exactly the same states.
    let clock = Instant::now();
    let mut replayed = 0u64;
    for start in [Start::Fresh, Start::NearExhaustion] {
        let alphabet = alphabet(&times(), &start.tokens());
        for policy in POLICIES {
            let authority = start.authority(policy);
            let mut seen = HashSet::new();
            every_history(Node::new(authority), &alphabet, 2, &mut seen, &mut replayed);
            let merged = breadth_first(authority, &alphabet, 2);
            assert_eq!(seen, merged.states, "{start:?}/{policy:?}");
        }
    }
    // Depth 3 over a smaller alphabet: two instants (so a regression, and a
    // lease ending exactly at the later one), both owners, every TTL, and the
    // tokens a depth-3 history can issue.
    let small_times = [0, 2].map(Duration::from_nanos);
    let alphabet = alphabet(&small_times, &[0, 1, 2, 3]);
    for policy in POLICIES {
        let authority = Start::Fresh.authority(policy);
        let mut seen = HashSet::new();
        every_history(Node::new(authority), &alphabet, 3, &mut seen, &mut replayed);
        let merged = breadth_first(authority, &alphabet, 3);
        assert_eq!(seen, merged.states, "small/{policy:?}");
    }
    println!(
        "literal enumeration: {replayed} requests replayed one history at a time in {:.2?}",
        clock.elapsed()
    );
}
