//! Shared by `properties.rs` and `exhaustive.rs`:
//!
//! - [`Op`]: one concrete request to an authority;
//! - [`Reference`]: an independent reference model of SPEC section 2.1, written
//!   from the specification with its own representation (instants as `u128`
//!   nanoseconds, tokens as raw `u64` with 0 meaning "none"), so that it does
//!   not share arithmetic or helpers with the crate;
//! - [`Checker`]: the history invariants, judged only from the decisions the
//!   authority returns and the checkpoints it exposes.
#![allow(dead_code)]

use core::time::Duration;

use lease_machines::{
    Checkpoint, ClockPolicy, Decision, Fence, FencingToken, Lease, LeaseAuthority, OwnerId,
    Rejection,
};

/// The largest instant a `Duration` can hold, in nanoseconds.
pub const MAX_NANOS: u128 = Duration::MAX.as_nanos();

/// One request. Tokens are raw wire values: 0 stands for "no token".
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Op {
    Acquire {
        owner: u64,
        now: Duration,
        ttl: Duration,
    },
    Reacquire {
        owner: u64,
        now: Duration,
        ttl: Duration,
    },
    Renew {
        owner: u64,
        token: u64,
        now: Duration,
        ttl: Duration,
    },
    Release {
        owner: u64,
        token: u64,
        now: Duration,
    },
}

impl Op {
    pub fn now(&self) -> Duration {
        match *self {
            Op::Acquire { now, .. }
            | Op::Reacquire { now, .. }
            | Op::Renew { now, .. }
            | Op::Release { now, .. } => now,
        }
    }

    pub fn owner(&self) -> u64 {
        match *self {
            Op::Acquire { owner, .. }
            | Op::Reacquire { owner, .. }
            | Op::Renew { owner, .. }
            | Op::Release { owner, .. } => owner,
        }
    }

    /// Sends the request to the real authority.
    pub fn apply(&self, authority: &mut LeaseAuthority) -> Decision {
        match *self {
            Op::Acquire { owner, now, ttl } => authority.acquire(OwnerId::new(owner), now, ttl),
            Op::Reacquire { owner, now, ttl } => authority.reacquire(OwnerId::new(owner), now, ttl),
            Op::Renew {
                owner,
                token,
                now,
                ttl,
            } => authority.renew(OwnerId::new(owner), FencingToken::new(token), now, ttl),
            Op::Release { owner, token, now } => {
                authority.release(OwnerId::new(owner), FencingToken::new(token), now)
            }
        }
    }
}

/// A decision in the reference model's own terms.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Outcome {
    Granted {
        owner: u64,
        token: u64,
        expires_at: u128,
    },
    Renewed {
        owner: u64,
        token: u64,
        expires_at: u128,
    },
    Released,
    Rejected(Rejection),
}

impl From<Decision> for Outcome {
    fn from(decision: Decision) -> Self {
        match decision {
            Decision::Granted(lease) => Outcome::Granted {
                owner: lease.owner().value(),
                token: lease.token().value(),
                expires_at: lease.expires_at().as_nanos(),
            },
            Decision::Renewed(lease) => Outcome::Renewed {
                owner: lease.owner().value(),
                token: lease.token().value(),
                expires_at: lease.expires_at().as_nanos(),
            },
            Decision::Released => Outcome::Released,
            Decision::Rejected(reason) => Outcome::Rejected(reason),
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct RefLease {
    pub owner: u64,
    pub token: u64,
    pub expires_at: u128,
}

/// SPEC 2.1, step by step, on plain integers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Reference {
    clamp: bool,
    /// 0 for a fresh history.
    last_issued: u64,
    lease: Option<RefLease>,
    observed: u128,
}

impl Reference {
    pub fn new(policy: ClockPolicy) -> Self {
        Self {
            clamp: policy == ClockPolicy::Clamp,
            last_issued: 0,
            lease: None,
            observed: 0,
        }
    }

    /// The model of a stored row. The caller only passes rows that
    /// `Checkpoint::from_parts` accepts.
    pub fn from_row(policy: ClockPolicy, checkpoint: &Checkpoint) -> Self {
        Self {
            clamp: policy == ClockPolicy::Clamp,
            last_issued: checkpoint.last_issued().map_or(0, FencingToken::value),
            lease: checkpoint.lease().map(|lease| RefLease {
                owner: lease.owner().value(),
                token: lease.token().value(),
                expires_at: lease.expires_at().as_nanos(),
            }),
            observed: checkpoint.observed().as_nanos(),
        }
    }

    pub fn step(&mut self, op: &Op) -> Outcome {
        let result = match *op {
            Op::Acquire { owner, now, ttl } => {
                self.grant(false, owner, now.as_nanos(), ttl.as_nanos())
            }
            Op::Reacquire { owner, now, ttl } => {
                self.grant(true, owner, now.as_nanos(), ttl.as_nanos())
            }
            Op::Renew {
                owner,
                token,
                now,
                ttl,
            } => self.renew(owner, token, now.as_nanos(), ttl.as_nanos()),
            Op::Release { owner, token, now } => self.release(owner, token, now.as_nanos()),
        };
        match result {
            Ok(outcome) => outcome,
            Err(reason) => Outcome::Rejected(reason),
        }
    }

    /// Steps 1 and 2: the instant the request is evaluated at.
    fn clock(&mut self, now: u128) -> Result<u128, Rejection> {
        if now < self.observed {
            if self.clamp {
                return Ok(self.observed);
            }
            return Err(Rejection::ClockRegressed);
        }
        self.observed = now;
        Ok(now)
    }

    fn grant(
        &mut self,
        rotate_own: bool,
        owner: u64,
        now: u128,
        ttl: u128,
    ) -> Result<Outcome, Rejection> {
        let at = self.clock(now)?;
        if ttl == 0 {
            return Err(Rejection::InvalidTtl);
        }
        let expires_at = at + ttl;
        if expires_at > MAX_NANOS {
            return Err(Rejection::DeadlineOverflow);
        }
        if let Some(lease) = self.lease {
            let live = at < lease.expires_at;
            let own_rotation = rotate_own && lease.owner == owner;
            if live && !own_rotation {
                return Err(Rejection::Occupied);
            }
        }
        if self.last_issued == u64::MAX {
            return Err(Rejection::TokensExhausted);
        }
        self.last_issued += 1;
        self.lease = Some(RefLease {
            owner,
            token: self.last_issued,
            expires_at,
        });
        Ok(Outcome::Granted {
            owner,
            token: self.last_issued,
            expires_at,
        })
    }

    /// The StaleToken / NotOwner / Expired checks shared by renew and release.
    fn held(&self, owner: u64, token: u64, at: u128) -> Result<RefLease, Rejection> {
        let lease = match self.lease {
            Some(lease) if token != 0 && token == lease.token => lease,
            _ => return Err(Rejection::StaleToken),
        };
        if owner != lease.owner {
            return Err(Rejection::NotOwner);
        }
        if at >= lease.expires_at {
            return Err(Rejection::Expired);
        }
        Ok(lease)
    }

    fn renew(
        &mut self,
        owner: u64,
        token: u64,
        now: u128,
        ttl: u128,
    ) -> Result<Outcome, Rejection> {
        let at = self.clock(now)?;
        if ttl == 0 {
            return Err(Rejection::InvalidTtl);
        }
        let lease = self.held(owner, token, at)?;
        let wanted = at + ttl;
        if wanted > MAX_NANOS {
            return Err(Rejection::DeadlineOverflow);
        }
        let expires_at = wanted.max(lease.expires_at);
        self.lease = Some(RefLease {
            expires_at,
            ..lease
        });
        Ok(Outcome::Renewed {
            owner,
            token,
            expires_at,
        })
    }

    fn release(&mut self, owner: u64, token: u64, now: u128) -> Result<Outcome, Rejection> {
        let at = self.clock(now)?;
        self.held(owner, token, at)?;
        self.lease = None;
        Ok(Outcome::Released)
    }

    /// `Ok` when the authority's checkpoint holds exactly this model's state.
    pub fn same_state_as(&self, checkpoint: &Checkpoint) -> Result<(), String> {
        let other = Reference::from_row(
            if self.clamp {
                ClockPolicy::Clamp
            } else {
                ClockPolicy::Reject
            },
            checkpoint,
        );
        if other == *self {
            Ok(())
        } else {
            Err(format!(
                "state differs: model {self:?}, authority {checkpoint:?}"
            ))
        }
    }
}

/// The history invariants. It learns the lease only from decisions (never from
/// the authority's internals) and compares that knowledge with the checkpoint.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Checker {
    policy: ClockPolicy,
    /// The latest instant a decision was evaluated at.
    observed: Duration,
    /// The greatest token issued so far (from the starting row, then from grants).
    highest_issued: Option<FencingToken>,
    /// The lease as the decisions describe it.
    lease: Option<Lease>,
    /// A protected resource that sees every granted or renewed token in order.
    fence: Fence,
    /// How many decisions of each kind were checked: granted, renewed,
    /// released, rejected.
    pub counts: [u64; 4],
}

impl Checker {
    pub fn new(authority: &LeaseAuthority) -> Self {
        let checkpoint = authority.checkpoint();
        Self {
            policy: authority.clock_policy(),
            observed: checkpoint.observed(),
            highest_issued: checkpoint.last_issued(),
            lease: checkpoint.lease(),
            fence: Fence::new(None),
            counts: [0; 4],
        }
    }

    /// The part of the checker that matters for the future (everything but
    /// the counters), for de-duplicating states.
    pub fn key(&self) -> Self {
        Self {
            counts: [0; 4],
            ..*self
        }
    }

    /// Judges one step: `before` and `after` are the authority around `op`,
    /// which answered `decision`.
    pub fn check(
        &mut self,
        op: &Op,
        before: &LeaseAuthority,
        decision: Decision,
        after: &LeaseAuthority,
    ) -> Result<(), String> {
        let fail = |what: &str| {
            Err(format!(
                "{what}: op {op:?} -> {decision:?}; before {before:?}; after {after:?}"
            ))
        };
        let (b, a) = (before.checkpoint(), after.checkpoint());

        if after.clock_policy() != self.policy {
            return fail("the clock policy changed");
        }
        if a.observed() < b.observed() {
            return fail("the observed clock went backwards");
        }
        if a.last_issued() < b.last_issued() {
            return fail("the token high-water mark went down");
        }
        if let (Some(lease), last) = (a.lease(), a.last_issued()) {
            if last.map_or(true, |last| lease.token() > last) {
                return fail("the lease carries a token that was never issued");
            }
        }

        // Steps 1 and 2.
        let now = op.now();
        let regressed = now < self.observed;
        if regressed && self.policy == ClockPolicy::Reject {
            if decision != Decision::Rejected(Rejection::ClockRegressed) || a != b {
                return fail("a regressing clock under Reject must be refused and change nothing");
            }
            self.counts[3] += 1;
            return Ok(());
        }
        if decision == Decision::Rejected(Rejection::ClockRegressed) {
            return fail("ClockRegressed without a regression under Reject");
        }
        let at = now.max(self.observed);
        if a.observed() != at {
            return fail("the observed clock is not max(observed, now)");
        }
        self.observed = at;

        let live = self.lease.filter(|lease| at < lease.expires_at());
        match decision {
            Decision::Granted(lease) => {
                self.counts[0] += 1;
                let (owner, ttl, rotate_own) = match *op {
                    Op::Acquire { owner, ttl, .. } => (owner, ttl, false),
                    Op::Reacquire { owner, ttl, .. } => (owner, ttl, true),
                    _ => return fail("only acquire and reacquire may grant"),
                };
                if lease.owner().value() != owner {
                    return fail("granted to someone who did not ask");
                }
                if self
                    .highest_issued
                    .is_some_and(|high| lease.token() <= high)
                {
                    return fail("granted token is not greater than every earlier token");
                }
                if let Some(current) = live {
                    if !(rotate_own && current.owner().value() == owner) {
                        return fail("granted while another lease was live");
                    }
                }
                if at.checked_add(ttl) != Some(lease.expires_at()) {
                    return fail("granted lease does not end at now + ttl");
                }
                if !self.fence.accept(lease.token()) {
                    return fail("the fence refused a fresh grant");
                }
                if let Some(old) = self.lease {
                    if self.fence.accept(old.token()) {
                        return fail("the fence still accepts the superseded token");
                    }
                }
                self.highest_issued = Some(lease.token());
                self.lease = Some(lease);
            }
            Decision::Renewed(lease) => {
                self.counts[1] += 1;
                let Op::Renew {
                    owner, token, ttl, ..
                } = *op
                else {
                    return fail("only renew may renew");
                };
                let Some(current) = live else {
                    return fail("renewed a lease that was not live (resurrection)");
                };
                if current.token().value() != token
                    || current.owner().value() != owner
                    || lease.token() != current.token()
                    || lease.owner() != current.owner()
                {
                    return fail("renewed with the wrong token or owner");
                }
                if lease.expires_at() < current.expires_at() {
                    return fail("renewal shortened the lease");
                }
                if at
                    .checked_add(ttl)
                    .map_or(true, |wanted| lease.expires_at() < wanted)
                {
                    return fail("renewal does not cover now + ttl");
                }
                if !self.fence.accept(lease.token()) {
                    return fail("the fence refused the current lease");
                }
                self.lease = Some(lease);
            }
            Decision::Released => {
                self.counts[2] += 1;
                let (owner, token) = match *op {
                    Op::Release { owner, token, .. } => (owner, token),
                    _ => return fail("only release may release"),
                };
                let Some(current) = live else {
                    return fail("released a lease that was not live");
                };
                if current.token().value() != token || current.owner().value() != owner {
                    return fail("released with the wrong token or owner");
                }
                self.lease = None;
            }
            Decision::Rejected(_) => {
                self.counts[3] += 1;
                if a.lease() != b.lease() || a.last_issued() != b.last_issued() {
                    return fail("a rejection changed more than the observed clock");
                }
            }
        }

        if a.lease() != self.lease {
            return fail("the stored lease is not the one the decisions describe");
        }
        if a.last_issued() != self.highest_issued {
            return fail("the stored high-water mark is not the greatest token granted");
        }
        Ok(())
    }
}

/// `LeaseAuthority::restore(a.checkpoint()).with_clock_policy(a.clock_policy())`.
pub fn restored(authority: &LeaseAuthority) -> LeaseAuthority {
    LeaseAuthority::restore(authority.checkpoint()).with_clock_policy(authority.clock_policy())
}
