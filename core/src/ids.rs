//! Owner identities and fencing tokens: plain `u64`s on the wire.

use core::fmt;
use core::num::NonZeroU64;

/// Who asks for a lease.
///
/// The authority only compares owners for equality; what the number means is the
/// caller's business (a worker id, a hash of a host name and pid, ...).
///
/// ```
/// use lease_machines::OwnerId;
///
/// let owner = OwnerId::new(7);
/// assert_eq!(owner.value(), 7);
/// assert_eq!(owner, OwnerId::from(7));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct OwnerId(u64);

impl OwnerId {
    /// Wraps a raw owner number. Every `u64`, zero included, is a valid owner.
    #[must_use]
    pub const fn new(value: u64) -> Self {
        Self(value)
    }

    /// The raw owner number.
    #[must_use]
    pub const fn value(self) -> u64 {
        self.0
    }
}

impl From<u64> for OwnerId {
    fn from(value: u64) -> Self {
        Self(value)
    }
}

impl fmt::Display for OwnerId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

/// The number handed out with every grant, strictly greater than every token
/// issued before it in the same history.
///
/// Zero is never a token: the first grant of a fresh history carries 1, so a
/// stored `0` can stand for "no token" without ambiguity. Tokens are ordered;
/// a protected resource compares them with a [`Fence`](crate::Fence).
///
/// ```
/// use lease_machines::FencingToken;
///
/// assert_eq!(FencingToken::new(0), None);
/// let one = FencingToken::new(1).unwrap();
/// let two = FencingToken::new(2).unwrap();
/// assert!(one < two);
/// assert_eq!(one.next(), Some(two));
/// assert_eq!(FencingToken::MAX.next(), None);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct FencingToken(NonZeroU64);

impl FencingToken {
    /// The first token of every history.
    pub const FIRST: Self = Self(NonZeroU64::MIN);

    /// The last token a history can issue; after it the authority fails closed
    /// with [`Rejection::TokensExhausted`](crate::Rejection::TokensExhausted).
    pub const MAX: Self = Self(NonZeroU64::MAX);

    /// A token from its raw value, or `None` for 0, which is never issued.
    #[must_use]
    pub const fn new(value: u64) -> Option<Self> {
        match NonZeroU64::new(value) {
            Some(v) => Some(Self(v)),
            None => None,
        }
    }

    /// The raw value, never 0.
    #[must_use]
    pub const fn value(self) -> u64 {
        self.0.get()
    }

    /// The token after this one, or `None` when this is [`FencingToken::MAX`].
    /// Tokens never wrap.
    #[must_use]
    pub const fn next(self) -> Option<Self> {
        match self.0.checked_add(1) {
            Some(v) => Some(Self(v)),
            None => None,
        }
    }
}

impl From<FencingToken> for u64 {
    fn from(token: FencingToken) -> Self {
        token.value()
    }
}

impl fmt::Display for FencingToken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}
