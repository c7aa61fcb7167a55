//! An authority's state as a value, and its flat form for storage.

use core::fmt;
use core::time::Duration;

use crate::{FencingToken, Lease, OwnerId};

/// Everything an authority knows, as a value: the token high-water mark, the
/// current lease (possibly expired) and the latest observed instant.
///
/// Storing a checkpoint before a decision is shown to anyone is what makes an
/// authority durable; [`LeaseAuthority::restore`] rebuilds one that behaves
/// exactly as the original would.
///
/// ```
/// use core::time::Duration;
/// use lease_machines::{Checkpoint, FencingToken, Lease, LeaseAuthority, OwnerId};
///
/// let three = FencingToken::new(3).unwrap();
/// let lease = Lease::new(OwnerId::new(7), three, Duration::from_secs(9));
/// let row = Checkpoint::from_parts(Some(three), Some(lease), Duration::from_secs(4)).unwrap();
/// assert_eq!(LeaseAuthority::restore(row).checkpoint(), row);
///
/// // A lease whose token the history never issued is refused.
/// assert_eq!(Checkpoint::from_parts(FencingToken::new(2), Some(lease), Duration::ZERO), None);
/// assert_eq!(Checkpoint::from_parts(None, Some(lease), Duration::ZERO), None);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct Checkpoint {
    pub(crate) last_issued: Option<FencingToken>,
    pub(crate) lease: Option<Lease>,
    pub(crate) observed: Duration,
}

impl Checkpoint {
    /// Rebuilds a checkpoint from stored parts, or `None` when they cannot come
    /// from one history: a lease with no token issued, or a lease whose token is
    /// greater than the high-water mark.
    #[must_use]
    pub fn from_parts(
        last_issued: Option<FencingToken>,
        lease: Option<Lease>,
        observed: Duration,
    ) -> Option<Self> {
        if let Some(lease) = lease {
            if last_issued? < lease.token() {
                return None;
            }
        }
        Some(Self {
            last_issued,
            lease,
            observed,
        })
    }

    /// The greatest token ever issued, `None` for a fresh history.
    #[must_use]
    pub const fn last_issued(&self) -> Option<FencingToken> {
        self.last_issued
    }

    /// The current lease record, which may already have expired.
    #[must_use]
    pub const fn lease(&self) -> Option<Lease> {
        self.lease
    }

    /// The latest instant the authority observed.
    #[must_use]
    pub const fn observed(&self) -> Duration {
        self.observed
    }
}

/// A checkpoint as five plain fields, the shape a row or a serialized value
/// has: the token high-water mark, the lease's owner, token and deadline, and
/// the observed instant. Every field is optional here, because a stored row
/// can be missing any of them; [`Checkpoint::from_flat`] decides which
/// combinations come from one history (the lease fields all or none, no token
/// 0, no lease token past the mark, an observed instant always).
///
/// The instants are [`Duration`]s on the authority's timeline, not a unit of
/// storage: a store converts its own column (whole nanoseconds, say) with
/// `Duration::from_nanos` and bounds deadlines with
/// [`LeaseAuthority::with_horizon`](crate::LeaseAuthority::with_horizon).
///
/// ```
/// use core::time::Duration;
/// use lease_machines::{Checkpoint, CheckpointError, FlatCheckpoint};
///
/// let flat = FlatCheckpoint {
///     last_issued: Some(3),
///     lease_owner: Some(7),
///     lease_token: Some(3),
///     lease_expires_at: Some(Duration::from_secs(9)),
///     observed: Some(Duration::from_secs(4)),
/// };
/// let checkpoint = Checkpoint::from_flat(flat).unwrap();
/// assert_eq!(checkpoint.flat(), flat);
///
/// let half = FlatCheckpoint { lease_token: None, ..flat };
/// assert_eq!(Checkpoint::from_flat(half), Err(CheckpointError::PartialLease));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct FlatCheckpoint {
    /// The greatest token ever issued (`None`: a fresh history).
    pub last_issued: Option<u64>,
    /// The lease's holder.
    pub lease_owner: Option<u64>,
    /// The lease's token.
    pub lease_token: Option<u64>,
    /// The lease's deadline.
    pub lease_expires_at: Option<Duration>,
    /// The latest observed instant (required).
    pub observed: Option<Duration>,
}

/// Why a [`FlatCheckpoint`] cannot come from one history. The variants are
/// checked in the order listed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CheckpointError {
    /// `observed` is missing.
    MissingObserved,
    /// Some lease fields are given and others are not.
    PartialLease,
    /// The lease token is 0, which is never issued.
    ZeroLeaseToken,
    /// The high-water mark is 0, which is never issued.
    ZeroLastIssued,
    /// The lease token is past the high-water mark, or no token was issued.
    UnissuedLease,
}

impl CheckpointError {
    /// Every error, in the order they are checked.
    pub const ALL: [Self; 5] = [
        Self::MissingObserved,
        Self::PartialLease,
        Self::ZeroLeaseToken,
        Self::ZeroLastIssued,
        Self::UnissuedLease,
    ];

    /// A short description, naming the flat fields.
    #[must_use]
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::MissingObserved => "observed is missing",
            Self::PartialLease => "a lease needs owner, token and expires_at, all or none",
            Self::ZeroLeaseToken => "the lease token is 0",
            Self::ZeroLastIssued => "last_issued is 0",
            Self::UnissuedLease => "the lease's token was never issued",
        }
    }
}

impl fmt::Display for CheckpointError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Checkpoint {
    /// Rebuilds a checkpoint from its flat form, deciding which combinations
    /// of fields are one history (see [`CheckpointError`]).
    ///
    /// # Errors
    ///
    /// The first problem found, in the order of [`CheckpointError::ALL`].
    pub fn from_flat(flat: FlatCheckpoint) -> Result<Self, CheckpointError> {
        let observed = flat.observed.ok_or(CheckpointError::MissingObserved)?;
        let lease = match (flat.lease_owner, flat.lease_token, flat.lease_expires_at) {
            (None, None, None) => None,
            (Some(owner), Some(token), Some(expires_at)) => {
                let token = FencingToken::new(token).ok_or(CheckpointError::ZeroLeaseToken)?;
                Some(Lease::new(OwnerId::new(owner), token, expires_at))
            }
            _ => return Err(CheckpointError::PartialLease),
        };
        let last_issued = match flat.last_issued {
            None => None,
            Some(raw) => Some(FencingToken::new(raw).ok_or(CheckpointError::ZeroLastIssued)?),
        };
        Self::from_parts(last_issued, lease, observed).ok_or(CheckpointError::UnissuedLease)
    }

    /// The flat form: every field present that the checkpoint has
    /// (`observed` always).
    #[must_use]
    pub fn flat(&self) -> FlatCheckpoint {
        FlatCheckpoint {
            last_issued: self.last_issued.map(FencingToken::value),
            lease_owner: self.lease.map(|lease| lease.owner().value()),
            lease_token: self.lease.map(|lease| lease.token().value()),
            lease_expires_at: self.lease.map(|lease| lease.expires_at()),
            observed: Some(self.observed),
        }
    }
}
