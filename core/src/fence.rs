//! The check that the protected resource makes.

use crate::FencingToken;

/// The high-water mark a protected resource keeps: it refuses any token lower
/// than the highest it has accepted. Equal tokens pass, so one lease may make
/// many writes.
///
/// A fence knows nothing of expiry or owners. It cannot turn away a newly stale
/// holder until it has seen a greater token, and it protects nothing unless its
/// mark is stored in the same transaction as the write it guards.
///
/// ```
/// use lease_machines::{Fence, FencingToken};
///
/// let one = FencingToken::new(1).unwrap();
/// let two = FencingToken::new(2).unwrap();
/// let mut fence = Fence::new(None);
/// assert!(fence.accept(one));
/// assert!(fence.accept(two));
/// assert!(fence.accept(two));
/// assert!(!fence.accept(one));
/// assert!(!fence.accept(None)); // "no token" (a wire 0) is never accepted
/// assert_eq!(fence.highest(), Some(two));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct Fence {
    highest: Option<FencingToken>,
}

impl Fence {
    /// A fence that has already accepted `highest` (from storage), or nothing.
    #[must_use]
    pub const fn new(highest: Option<FencingToken>) -> Self {
        Self { highest }
    }

    /// `true`, raising the mark, when `token` is at least the highest accepted
    /// so far (or nothing was accepted yet); `false` otherwise, changing nothing.
    /// `None` is always refused.
    pub fn accept(&mut self, token: impl Into<Option<FencingToken>>) -> bool {
        let Some(token) = token.into() else {
            return false;
        };
        match self.highest {
            Some(highest) if token < highest => false,
            _ => {
                self.highest = Some(token);
                true
            }
        }
    }

    /// The highest token accepted, the mark to store with the protected data.
    #[must_use]
    pub const fn highest(&self) -> Option<FencingToken> {
        self.highest
    }
}
