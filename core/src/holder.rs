//! The holder's side: when to renew, when to be nervous, when to stop.

use core::time::Duration;

use crate::FencingToken;

/// How a holder paces itself: the TTL it asks for, how long after a
/// confirmation it renews, and how long before expiry it starts to worry.
///
/// Valid when `ttl > 0`, `renew_after > 0`, `warn_before < ttl` and
/// `renew_after <= ttl - warn_before` (a holder must try to renew before it
/// would have to warn). A maximum hold ([`Cadence::with_max_hold`], at least
/// `ttl`) ends the renewals once the holder has held that long since its
/// grant: its lease then runs out at its TTL.
///
/// ```
/// use core::time::Duration;
/// use lease_machines::Cadence;
///
/// let secs = Duration::from_secs;
/// let cadence = Cadence::new(secs(30), secs(10), secs(5)).unwrap();
/// assert_eq!(cadence.warn_after(), secs(25));
/// assert_eq!(Cadence::new(secs(30), secs(26), secs(5)), None);
/// assert_eq!(Cadence::new(secs(30), secs(10), secs(30)), None);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Cadence {
    ttl: Duration,
    renew_after: Duration,
    warn_before: Duration,
    max_hold: Option<Duration>,
}

impl Cadence {
    /// A cadence, or `None` when the three spans do not fit together.
    #[must_use]
    pub fn new(ttl: Duration, renew_after: Duration, warn_before: Duration) -> Option<Self> {
        let window = ttl.checked_sub(warn_before)?;
        if ttl.is_zero() || renew_after.is_zero() || window.is_zero() || renew_after > window {
            return None;
        }
        Some(Self {
            ttl,
            renew_after,
            warn_before,
            max_hold: None,
        })
    }

    /// This cadence with renewals ending `max_hold` after the grant, or
    /// `None` when `max_hold` is shorter than `ttl` (the first grant alone
    /// lasts `ttl`).
    ///
    /// ```
    /// use core::time::Duration;
    /// use lease_machines::Cadence;
    ///
    /// let secs = Duration::from_secs;
    /// let cadence = Cadence::new(secs(30), secs(10), secs(5)).unwrap();
    /// assert_eq!(cadence.with_max_hold(secs(60)).unwrap().max_hold(), Some(secs(60)));
    /// assert_eq!(cadence.with_max_hold(secs(29)), None);
    /// ```
    #[must_use]
    pub fn with_max_hold(self, max_hold: Duration) -> Option<Self> {
        if max_hold < self.ttl {
            return None;
        }
        Some(Self {
            max_hold: Some(max_hold),
            ..self
        })
    }

    /// How long after the grant renewals end (`None`: they never do).
    #[must_use]
    pub const fn max_hold(&self) -> Option<Duration> {
        self.max_hold
    }

    /// The TTL the holder asks for.
    #[must_use]
    pub const fn ttl(&self) -> Duration {
        self.ttl
    }

    /// How long after a confirmation a renewal is due.
    #[must_use]
    pub const fn renew_after(&self) -> Duration {
        self.renew_after
    }

    /// How long before expiry the holder is at risk.
    #[must_use]
    pub const fn warn_before(&self) -> Duration {
        self.warn_before
    }

    /// `ttl - warn_before`: how long after a confirmation the holder is at risk.
    #[must_use]
    pub fn warn_after(&self) -> Duration {
        self.ttl.saturating_sub(self.warn_before)
    }
}

/// Where a holder stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum HolderState {
    /// The authority confirmed the lease; no renewal is outstanding.
    Confirmed,
    /// A renewal was started and not yet confirmed.
    Unconfirmed,
    /// A renewal is outstanding and the warning deadline has passed: stop
    /// starting work that cannot be abandoned.
    AtRisk,
    /// The authority said the lease is gone. Only a newer grant recovers.
    Expired,
    /// The resource refused the token. Terminal.
    Fenced,
}

/// The worker's view of one lease, on the worker's own clock.
///
/// It never compares its instants with the authority's: it only remembers when
/// it last heard a confirmation and counts from there.
///
/// ```
/// use core::time::Duration;
/// use lease_machines::{Cadence, FencingToken, Holder, HolderState};
///
/// let secs = Duration::from_secs;
/// let cadence = Cadence::new(secs(30), secs(10), secs(5)).unwrap();
/// let one = FencingToken::new(1).unwrap();
/// let mut holder = Holder::new(one, secs(0), cadence);
/// assert!(!holder.renewal_due(secs(9)));
/// assert!(holder.renewal_due(secs(10)));
/// assert!(holder.refresh(secs(10)));
/// assert_eq!(holder.state(), HolderState::Unconfirmed);
/// assert!(holder.confirm(one, secs(11)));
/// assert_eq!(holder.warning_deadline(), Some(secs(36)));
/// assert!(holder.at_risk(secs(36)));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Holder {
    token: FencingToken,
    granted_at: Duration,
    confirmed_at: Duration,
    cadence: Cadence,
    state: HolderState,
}

impl Holder {
    /// A holder that was granted `token` at `at` (its own clock).
    #[must_use]
    pub const fn new(token: FencingToken, at: Duration, cadence: Cadence) -> Self {
        Self {
            token,
            granted_at: at,
            confirmed_at: at,
            cadence,
            state: HolderState::Confirmed,
        }
    }

    /// The current state.
    #[must_use]
    pub const fn state(&self) -> HolderState {
        self.state
    }

    /// The token the holder shows the resource.
    #[must_use]
    pub const fn token(&self) -> FencingToken {
        self.token
    }

    /// When the lease was last confirmed (the holder's clock).
    #[must_use]
    pub const fn confirmed_at(&self) -> Duration {
        self.confirmed_at
    }

    /// The cadence.
    #[must_use]
    pub const fn cadence(&self) -> Cadence {
        self.cadence
    }

    /// When renewals end: the grant (`new`'s `at`) + the cadence's
    /// `max_hold`. `None` without a maximum hold, or when that instant does
    /// not fit in a `Duration` (it never arrives).
    #[must_use]
    pub fn renewals_end(&self) -> Option<Duration> {
        self.granted_at.checked_add(self.cadence.max_hold?)
    }

    /// Whether a renewal may still be sent at `at`: before
    /// [`Holder::renewals_end`], and never once `Expired` or `Fenced`. A
    /// holder past its maximum hold keeps its lease until the TTL runs out,
    /// unrenewed.
    #[must_use]
    pub fn renewal_allowed(&self, at: Duration) -> bool {
        !self.is_done() && self.renewals_end().map_or(true, |end| at < end)
    }

    const fn is_done(&self) -> bool {
        matches!(self.state, HolderState::Expired | HolderState::Fenced)
    }

    /// Last confirmation + `ttl - warn_before`; `None` once `Expired` or
    /// `Fenced`, and `None` when that instant does not fit in a `Duration`
    /// (it never arrives).
    #[must_use]
    pub fn warning_deadline(&self) -> Option<Duration> {
        if self.is_done() {
            return None;
        }
        self.confirmed_at.checked_add(self.cadence.warn_after())
    }

    /// Whether to send a renewal now: in `Confirmed`, once `renew_after` has
    /// passed since the last confirmation; always while a renewal is
    /// outstanding (a failed attempt retries on the next poll); never once
    /// `Expired` or `Fenced`, nor once renewals ended
    /// ([`Holder::renewal_allowed`]).
    #[must_use]
    pub fn renewal_due(&self, at: Duration) -> bool {
        if !self.renewal_allowed(at) {
            return false;
        }
        match self.state {
            HolderState::Confirmed => self
                .confirmed_at
                .checked_add(self.cadence.renew_after)
                .is_some_and(|due| at >= due),
            HolderState::Unconfirmed | HolderState::AtRisk => true,
            HolderState::Expired | HolderState::Fenced => false,
        }
    }

    /// Starts a renewal attempt: `Unconfirmed`, or `AtRisk` once past the
    /// warning deadline (and `AtRisk` stays `AtRisk` until confirmed).
    /// `false`, changing nothing, when no renewal is allowed
    /// ([`Holder::renewal_allowed`]: `Expired`, `Fenced`, or past the
    /// maximum hold).
    pub fn refresh(&mut self, at: Duration) -> bool {
        if !self.renewal_allowed(at) {
            return false;
        }
        self.state = if self.state == HolderState::AtRisk || self.past_warning(at) {
            HolderState::AtRisk
        } else {
            HolderState::Unconfirmed
        };
        true
    }

    /// The authority confirmed `token` at `at` (pass the instant the request
    /// was sent, to stay on the safe side). An older token than the current one
    /// is a stale reply and is ignored (`false`); the same or a newer one is
    /// taken, the state becomes `Confirmed` and the schedule restarts at `at`.
    /// `false` when `Expired` or `Fenced`.
    pub fn confirm(&mut self, token: FencingToken, at: Duration) -> bool {
        if self.is_done() || token < self.token {
            return false;
        }
        self.token = token;
        self.confirmed_at = at;
        self.state = HolderState::Confirmed;
        true
    }

    /// `true` past the warning deadline, and always once `Expired` or `Fenced`
    /// (a holder that may not write is at risk).
    #[must_use]
    pub fn at_risk(&self, at: Duration) -> bool {
        self.is_done() || self.past_warning(at)
    }

    fn past_warning(&self, at: Duration) -> bool {
        self.warning_deadline()
            .is_some_and(|deadline| at >= deadline)
    }

    /// The authority said the lease is gone. `true` when this changed the state
    /// (`false` when already `Expired`, or `Fenced`, which is terminal).
    pub fn expire(&mut self) -> bool {
        if self.is_done() {
            return false;
        }
        self.state = HolderState::Expired;
        true
    }

    /// A new grant: only a strictly newer token recovers, into `Confirmed`
    /// with the schedule restarting at `at`. `false` when the token is not
    /// newer or the holder is `Fenced`.
    pub fn reacquire(&mut self, token: FencingToken, at: Duration) -> bool {
        if self.state == HolderState::Fenced || token <= self.token {
            return false;
        }
        self.token = token;
        self.confirmed_at = at;
        self.state = HolderState::Confirmed;
        true
    }

    /// The resource refused the token: terminal and idempotent. `true` when
    /// this changed the state.
    pub fn fence(&mut self) -> bool {
        if self.state == HolderState::Fenced {
            return false;
        }
        self.state = HolderState::Fenced;
        true
    }
}
