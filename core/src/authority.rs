//! The single-resource decision engine.

use core::time::Duration;

use crate::{Checkpoint, Decision, FencingToken, Lease, OwnerId, Rejection};

/// What the authority does with a `now` earlier than one it already observed.
///
/// ```
/// use core::time::Duration;
/// use lease_machines::{ClockPolicy, Decision, LeaseAuthority, OwnerId, Rejection};
///
/// let secs = Duration::from_secs;
/// let mut strict = LeaseAuthority::new();
/// let _ = strict.acquire(OwnerId::new(1), secs(10), secs(5));
/// assert_eq!(
///     strict.acquire(OwnerId::new(2), secs(9), secs(5)),
///     Decision::Rejected(Rejection::ClockRegressed),
/// );
///
/// let mut lenient = LeaseAuthority::new().with_clock_policy(ClockPolicy::Clamp);
/// let _ = lenient.acquire(OwnerId::new(1), secs(10), secs(5));
/// // Evaluated at 10 s, not 9 s: the lease still runs, and no deadline moves back.
/// assert_eq!(
///     lenient.acquire(OwnerId::new(2), secs(9), secs(5)),
///     Decision::Rejected(Rejection::Occupied),
/// );
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum ClockPolicy {
    /// Answer [`Rejection::ClockRegressed`] and change nothing. The default.
    #[default]
    Reject,
    /// Evaluate the request at the latest observed instant instead, so a small
    /// backwards step can neither revive nor shorten a lease.
    Clamp,
}

/// Where a grant's token starts: the next in the sequence only, or at least
/// the instant the grant is evaluated at, in whole microseconds.
///
/// A token floor keeps tokens monotonic across a history that lost its end:
/// a store that fails over to a replica which never received the last grants
/// (or restarts from a backup, or loses commits in a crash) continues from an
/// older `last_issued`. Under [`TokenFloor::Sequence`] it issues the lost
/// tokens again; under [`TokenFloor::ClockMicros`] it issues at least its
/// clock in microseconds, which is above every token the lost grants carried
/// as long as they were issued at an earlier instant (on a clock that agrees)
/// and no more than one grant per microsecond ran ahead of the clock.
///
/// ```
/// use core::time::Duration;
/// use lease_machines::{Decision, LeaseAuthority, OwnerId, TokenFloor};
///
/// let owner = OwnerId::new(1);
/// let now = Duration::from_micros(1_700_000_000_000_000);
/// let ttl = Duration::from_secs(30);
/// let mut floored = LeaseAuthority::new().with_token_floor(TokenFloor::ClockMicros);
/// let Decision::Granted(first) = floored.acquire(owner, now, ttl) else { panic!() };
/// assert_eq!(first.token().value(), 1_700_000_000_000_000);
/// // Within the same microsecond: the sequence goes on.
/// let Decision::Granted(second) = floored.reacquire(owner, now, ttl) else { panic!() };
/// assert_eq!(second.token().value(), 1_700_000_000_000_001);
///
/// // The same history restored without its last grant (a failover that lost
/// // it) issues above the lost token once its clock has moved on.
/// let mut promoted = LeaseAuthority::new().with_token_floor(TokenFloor::ClockMicros);
/// let later = now + Duration::from_millis(5);
/// let Decision::Granted(again) = promoted.acquire(OwnerId::new(2), later, ttl) else { panic!() };
/// assert!(again.token() > second.token());
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum TokenFloor {
    /// The token is `last_issued + 1` (1 for a fresh history). The default.
    #[default]
    Sequence,
    /// The token is `max(last_issued + 1, now in whole microseconds)`, `now`
    /// being the instant the grant is evaluated at (after the clock policy).
    /// A history whose tokens are below the clock moves up to it once; one
    /// whose `last_issued` is above the clock goes on with `+ 1`. A clock
    /// past `u64::MAX` microseconds floors at [`FencingToken::MAX`]. Tokens
    /// still never wrap: after `u64::MAX` every grant is
    /// [`Rejection::TokensExhausted`].
    ClockMicros,
}

impl TokenFloor {
    /// The least token this floor allows at `now` (0: no floor).
    fn at(self, now: Duration) -> u64 {
        match self {
            Self::Sequence => 0,
            Self::ClockMicros => u64::try_from(now.as_micros()).unwrap_or(u64::MAX),
        }
    }
}

/// Decides who holds one resource and until when.
///
/// Pure and deterministic: the caller supplies every instant, nothing allocates,
/// nothing panics. One instance models one resource and one token namespace.
/// See the crate documentation for the order of checks.
///
/// ```
/// use core::time::Duration;
/// use lease_machines::{Decision, LeaseAuthority, OwnerId, Rejection};
///
/// let secs = Duration::from_secs;
/// let (seven, twelve) = (OwnerId::new(7), OwnerId::new(12));
/// let mut authority = LeaseAuthority::new();
///
/// let Decision::Granted(first) = authority.acquire(seven, secs(0), secs(30)) else { panic!() };
/// // Worker 7 stalls past its TTL; worker 12 takes over with a greater token.
/// let Decision::Granted(second) = authority.acquire(twelve, secs(35), secs(30)) else { panic!() };
/// assert!(second.token() > first.token());
/// // Worker 7 wakes up: its renewal is refused.
/// assert_eq!(
///     authority.renew(seven, first.token(), secs(40), secs(30)),
///     Decision::Rejected(Rejection::StaleToken),
/// );
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct LeaseAuthority {
    state: Checkpoint,
    policy: ClockPolicy,
    horizon: Duration,
    floor: TokenFloor,
}

impl Default for LeaseAuthority {
    fn default() -> Self {
        Self::new()
    }
}

/// Which grant request is being made: plain acquire never rotates a live
/// grant, reacquire lets the holder rotate its own.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Grant {
    Acquire,
    Reacquire,
}

impl LeaseAuthority {
    /// A fresh history: no token issued, no lease, clock at the origin,
    /// [`ClockPolicy::Reject`], no horizon short of [`Duration::MAX`],
    /// [`TokenFloor::Sequence`].
    #[must_use]
    pub const fn new() -> Self {
        Self::restore(Checkpoint {
            last_issued: None,
            lease: None,
            observed: Duration::ZERO,
        })
    }

    /// The same authority with another clock policy.
    #[must_use]
    pub const fn with_clock_policy(mut self, policy: ClockPolicy) -> Self {
        self.policy = policy;
        self
    }

    /// The same authority with a deadline horizon: a grant or renewal whose
    /// deadline would fall past `horizon` is [`Rejection::DeadlineOverflow`],
    /// exactly as one that overflows [`Duration`]. A deadline *at* the horizon
    /// is granted. The default is [`Duration::MAX`].
    ///
    /// A store that keeps instants as `u64` nanoseconds sets the horizon to
    /// `Duration::from_nanos(u64::MAX)`, so that every deadline it is handed
    /// fits its column.
    ///
    /// ```
    /// use core::time::Duration;
    /// use lease_machines::{Decision, LeaseAuthority, OwnerId, Rejection};
    ///
    /// let end = Duration::from_nanos(u64::MAX);
    /// let mut store = LeaseAuthority::new().with_horizon(end);
    /// let owner = OwnerId::new(1);
    /// assert_eq!(
    ///     store.acquire(owner, end - Duration::from_nanos(1), Duration::from_nanos(2)),
    ///     Decision::Rejected(Rejection::DeadlineOverflow),
    /// );
    /// assert!(store.acquire(owner, end - Duration::from_nanos(1), Duration::from_nanos(1)).is_granted());
    /// ```
    #[must_use]
    pub const fn with_horizon(mut self, horizon: Duration) -> Self {
        self.horizon = horizon;
        self
    }

    /// The same authority with a token floor (see [`TokenFloor`]). The
    /// default is [`TokenFloor::Sequence`]. The floor is a policy, like the
    /// clock policy: it is not part of the [`Checkpoint`].
    #[must_use]
    pub const fn with_token_floor(mut self, floor: TokenFloor) -> Self {
        self.floor = floor;
        self
    }

    /// Rebuilds an authority from a checkpoint, with [`ClockPolicy::Reject`],
    /// no horizon and [`TokenFloor::Sequence`]; chain
    /// [`with_clock_policy`](Self::with_clock_policy),
    /// [`with_horizon`](Self::with_horizon) and
    /// [`with_token_floor`](Self::with_token_floor) for others.
    #[must_use]
    pub const fn restore(checkpoint: Checkpoint) -> Self {
        Self {
            state: checkpoint,
            policy: ClockPolicy::Reject,
            horizon: Duration::MAX,
            floor: TokenFloor::Sequence,
        }
    }

    /// The whole state, for storage.
    #[must_use]
    pub const fn checkpoint(&self) -> Checkpoint {
        self.state
    }

    /// The clock policy in force.
    #[must_use]
    pub const fn clock_policy(&self) -> ClockPolicy {
        self.policy
    }

    /// The token floor in force.
    #[must_use]
    pub const fn token_floor(&self) -> TokenFloor {
        self.floor
    }

    /// The latest deadline this authority grants (see
    /// [`with_horizon`](Self::with_horizon)).
    #[must_use]
    pub const fn horizon(&self) -> Duration {
        self.horizon
    }

    /// The current lease record, which may already have expired.
    #[must_use]
    pub const fn lease(&self) -> Option<Lease> {
        self.state.lease
    }

    /// The greatest token ever issued.
    #[must_use]
    pub const fn last_issued(&self) -> Option<FencingToken> {
        self.state.last_issued
    }

    /// The latest observed instant.
    #[must_use]
    pub const fn observed(&self) -> Duration {
        self.state.observed
    }

    /// Grants the resource to `owner` for `ttl` from `now` if nobody holds an
    /// unexpired lease, with a token greater than every one issued before.
    /// A live lease is `Occupied` even for its own owner; see
    /// [`reacquire`](Self::reacquire).
    pub fn acquire(&mut self, owner: OwnerId, now: Duration, ttl: Duration) -> Decision {
        self.grant(Grant::Acquire, owner, now, ttl)
    }

    /// Like [`acquire`](Self::acquire), except that when `owner` itself holds
    /// the live lease, that lease is replaced by a new grant with a new token.
    /// Anything still holding the old token is stale from then on.
    pub fn reacquire(&mut self, owner: OwnerId, now: Duration, ttl: Duration) -> Decision {
        self.grant(Grant::Reacquire, owner, now, ttl)
    }

    /// Extends the current lease to `max(expires_at, now + ttl)`, keeping its
    /// token. Renewal never shortens a lease and never resurrects an expired one.
    ///
    /// `token` may be `None` for a caller that has no valid token (a wire value
    /// of 0): after the clock and TTL checks it is always `StaleToken`.
    pub fn renew(
        &mut self,
        owner: OwnerId,
        token: impl Into<Option<FencingToken>>,
        now: Duration,
        ttl: Duration,
    ) -> Decision {
        let now = match self.observe(now) {
            Ok(now) => now,
            Err(rejection) => return Decision::Rejected(rejection),
        };
        if ttl.is_zero() {
            return Decision::Rejected(Rejection::InvalidTtl);
        }
        let lease = match self.current(owner, token.into(), now) {
            Ok(lease) => lease,
            Err(rejection) => return Decision::Rejected(rejection),
        };
        let Some(deadline) = self.deadline(now, ttl) else {
            return Decision::Rejected(Rejection::DeadlineOverflow);
        };
        let renewed = Lease::new(owner, lease.token(), deadline.max(lease.expires_at()));
        self.state.lease = Some(renewed);
        Decision::Renewed(renewed)
    }

    /// Hands the lease back. The token high-water mark stays, so the next
    /// grant, even to the same owner, carries a greater token.
    ///
    /// `token` may be `None`, as for [`renew`](Self::renew).
    pub fn release(
        &mut self,
        owner: OwnerId,
        token: impl Into<Option<FencingToken>>,
        now: Duration,
    ) -> Decision {
        let now = match self.observe(now) {
            Ok(now) => now,
            Err(rejection) => return Decision::Rejected(rejection),
        };
        if let Err(rejection) = self.current(owner, token.into(), now) {
            return Decision::Rejected(rejection);
        }
        self.state.lease = None;
        Decision::Released
    }

    /// Steps 1 and 2 of every request: refuse or clamp a regressing `now`,
    /// otherwise advance the observed clock. Returns the instant at which the
    /// request is evaluated.
    fn observe(&mut self, now: Duration) -> Result<Duration, Rejection> {
        if now < self.state.observed {
            return match self.policy {
                ClockPolicy::Reject => Err(Rejection::ClockRegressed),
                ClockPolicy::Clamp => Ok(self.state.observed),
            };
        }
        self.state.observed = now;
        Ok(now)
    }

    /// `now + ttl`, or `None` when it overflows or falls past the horizon.
    fn deadline(&self, now: Duration, ttl: Duration) -> Option<Duration> {
        now.checked_add(ttl)
            .filter(|deadline| *deadline <= self.horizon)
    }

    /// The lease that `owner` may renew or release with `token` at `now`.
    fn current(
        &self,
        owner: OwnerId,
        token: Option<FencingToken>,
        now: Duration,
    ) -> Result<Lease, Rejection> {
        let lease = match (self.state.lease, token) {
            (Some(lease), Some(token)) if lease.token() == token => lease,
            _ => return Err(Rejection::StaleToken),
        };
        if lease.owner() != owner {
            return Err(Rejection::NotOwner);
        }
        if lease.is_expired(now) {
            return Err(Rejection::Expired);
        }
        Ok(lease)
    }

    /// The token a grant at `now` carries: the next in the sequence, raised
    /// to the floor; `None` once `u64::MAX` was issued (never a wrap, and
    /// never below the sequence).
    fn next_token(&self, now: Duration) -> Option<FencingToken> {
        let next = match self.state.last_issued {
            None => FencingToken::FIRST,
            Some(last) => last.next()?,
        };
        let floor = self.floor.at(now);
        if floor > next.value() {
            FencingToken::new(floor)
        } else {
            Some(next)
        }
    }

    fn grant(&mut self, kind: Grant, owner: OwnerId, now: Duration, ttl: Duration) -> Decision {
        let now = match self.observe(now) {
            Ok(now) => now,
            Err(rejection) => return Decision::Rejected(rejection),
        };
        if ttl.is_zero() {
            return Decision::Rejected(Rejection::InvalidTtl);
        }
        let Some(expires_at) = self.deadline(now, ttl) else {
            return Decision::Rejected(Rejection::DeadlineOverflow);
        };
        if let Some(lease) = self.state.lease {
            let rotating = kind == Grant::Reacquire && lease.owner() == owner;
            if !lease.is_expired(now) && !rotating {
                return Decision::Rejected(Rejection::Occupied);
            }
        }
        let Some(token) = self.next_token(now) else {
            return Decision::Rejected(Rejection::TokensExhausted);
        };
        let lease = Lease::new(owner, token, expires_at);
        self.state.last_issued = Some(token);
        self.state.lease = Some(lease);
        Decision::Granted(lease)
    }
}
