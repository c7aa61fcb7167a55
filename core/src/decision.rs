//! What an authority answers: a lease, a release, or a reason for refusing.

use core::fmt;
use core::time::Duration;

use crate::{FencingToken, OwnerId};

/// A grant: who holds the resource, under which token, until when.
///
/// `expires_at` is an instant on the caller's clock (a [`Duration`] from the
/// origin the caller chose). The lease has expired when `now >= expires_at`.
///
/// ```
/// use core::time::Duration;
/// use lease_machines::{FencingToken, Lease, OwnerId};
///
/// let token = FencingToken::new(3).unwrap();
/// let lease = Lease::new(OwnerId::new(7), token, Duration::from_secs(10));
/// assert_eq!(lease.owner(), OwnerId::new(7));
/// assert_eq!(lease.token(), token);
/// assert!(!lease.is_expired(Duration::from_secs(9)));
/// assert!(lease.is_expired(Duration::from_secs(10)));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Lease {
    owner: OwnerId,
    token: FencingToken,
    expires_at: Duration,
}

impl Lease {
    /// A lease record, as read back from storage or built by the authority.
    #[must_use]
    pub const fn new(owner: OwnerId, token: FencingToken, expires_at: Duration) -> Self {
        Self {
            owner,
            token,
            expires_at,
        }
    }

    /// The holder.
    #[must_use]
    pub const fn owner(&self) -> OwnerId {
        self.owner
    }

    /// The fencing token the holder must show the protected resource.
    #[must_use]
    pub const fn token(&self) -> FencingToken {
        self.token
    }

    /// The first instant at which the lease is no longer held.
    #[must_use]
    pub const fn expires_at(&self) -> Duration {
        self.expires_at
    }

    /// `true` when `now >= expires_at`.
    #[must_use]
    pub fn is_expired(&self, now: Duration) -> bool {
        now >= self.expires_at
    }
}

/// Why an authority refused a request. Rejections are answers, not faults:
/// nothing in the authority changed except, where the order of checks says so,
/// the observed clock.
///
/// ```
/// use lease_machines::Rejection;
///
/// assert_eq!(Rejection::StaleToken.as_str(), "stale_token");
/// assert_eq!(Rejection::ALL.len(), 8);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Rejection {
    /// Someone holds an unexpired lease (the caller too, for plain `acquire`).
    Occupied,
    /// There is no lease, or the token shown is not the current lease's token.
    StaleToken,
    /// The token is current but the owner shown is not its holder.
    NotOwner,
    /// The lease has already expired; renewal never resurrects and release of
    /// a lapsed lease is refused.
    Expired,
    /// `now` is earlier than an instant the authority has already observed
    /// (only with [`ClockPolicy::Reject`](crate::ClockPolicy::Reject)).
    ClockRegressed,
    /// The TTL is zero.
    InvalidTtl,
    /// `now + ttl` does not fit in a [`Duration`].
    DeadlineOverflow,
    /// The last token issued was `u64::MAX`; the history fails closed rather
    /// than wrap.
    TokensExhausted,
}

impl Rejection {
    /// Every rejection, in declaration order.
    pub const ALL: [Self; 8] = [
        Self::Occupied,
        Self::StaleToken,
        Self::NotOwner,
        Self::Expired,
        Self::ClockRegressed,
        Self::InvalidTtl,
        Self::DeadlineOverflow,
        Self::TokensExhausted,
    ];

    /// The snake_case name used on the wire and by the Ruby gem's reasons.
    #[must_use]
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Occupied => "occupied",
            Self::StaleToken => "stale_token",
            Self::NotOwner => "not_owner",
            Self::Expired => "expired",
            Self::ClockRegressed => "clock_regressed",
            Self::InvalidTtl => "invalid_ttl",
            Self::DeadlineOverflow => "deadline_overflow",
            Self::TokensExhausted => "tokens_exhausted",
        }
    }
}

impl fmt::Display for Rejection {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl core::error::Error for Rejection {}

/// The answer to every authority request.
///
/// ```
/// use core::time::Duration;
/// use lease_machines::{Decision, LeaseAuthority, OwnerId, Rejection};
///
/// let mut authority = LeaseAuthority::new();
/// let granted = authority.acquire(OwnerId::new(1), Duration::ZERO, Duration::from_secs(5));
/// assert!(granted.is_granted());
/// assert_eq!(granted.lease().map(|l| l.token().value()), Some(1));
///
/// let refused = authority.acquire(OwnerId::new(2), Duration::from_secs(1), Duration::from_secs(5));
/// assert_eq!(refused, Decision::Rejected(Rejection::Occupied));
/// assert_eq!(refused.rejection(), Some(Rejection::Occupied));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[must_use = "a decision says whether the caller may act; ignoring it is a bug"]
pub enum Decision {
    /// A new lease with a new, greater token.
    Granted(Lease),
    /// The same lease and token with an expiry no earlier than before.
    Renewed(Lease),
    /// The lease was handed back; the token high-water mark stays.
    Released,
    /// The request was refused; see [`Rejection`].
    Rejected(Rejection),
}

impl Decision {
    /// The lease of a `Granted` or `Renewed` decision.
    #[must_use]
    pub const fn lease(&self) -> Option<Lease> {
        match self {
            Self::Granted(lease) | Self::Renewed(lease) => Some(*lease),
            Self::Released | Self::Rejected(_) => None,
        }
    }

    /// The reason of a `Rejected` decision.
    #[must_use]
    pub const fn rejection(&self) -> Option<Rejection> {
        match self {
            Self::Rejected(reason) => Some(*reason),
            _ => None,
        }
    }

    /// `true` for `Granted`.
    #[must_use]
    pub const fn is_granted(&self) -> bool {
        matches!(self, Self::Granted(_))
    }

    /// `true` for `Renewed`.
    #[must_use]
    pub const fn is_renewed(&self) -> bool {
        matches!(self, Self::Renewed(_))
    }

    /// `true` for `Released`.
    #[must_use]
    pub const fn is_released(&self) -> bool {
        matches!(self, Self::Released)
    }

    /// `true` for `Rejected`.
    #[must_use]
    pub const fn is_rejected(&self) -> bool {
        matches!(self, Self::Rejected(_))
    }
}
