//! What a store answers a request that meets another decision of the same
//! resource while that decision is being committed.

use crate::Rejection;

/// The four requests an authority decides.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RequestKind {
    /// [`LeaseAuthority::acquire`](crate::LeaseAuthority::acquire).
    Acquire,
    /// [`LeaseAuthority::reacquire`](crate::LeaseAuthority::reacquire).
    Reacquire,
    /// [`LeaseAuthority::renew`](crate::LeaseAuthority::renew).
    Renew,
    /// [`LeaseAuthority::release`](crate::LeaseAuthority::release).
    Release,
}

/// What a store does when a decision it is about to write finds the
/// resource's row locked by another decision's write, not yet committed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Contention {
    /// Wait for that commit, then decide again on the row it wrote.
    Wait,
    /// Write nothing and answer this rejection at once.
    Refuse(Rejection),
}

impl RequestKind {
    /// The answer to this request, decided as a grant on the row it read,
    /// when another decision of the resource is committing its write.
    ///
    /// A plain acquire is refused as [`Rejection::Occupied`] without waiting.
    /// The other decision is, in all but rare cases, another caller's grant,
    /// which occupies the lease once committed; waiting would cost the
    /// caller that commit's flush to disk only to learn the same. A refusal
    /// writes nothing, so no history changes. It can be spurious, like a
    /// try-lock that may fail even though the lock is free: when the other
    /// decision was a refusal that stored only the clock past an expiry, or
    /// a grant whose commit failed, the lease stayed free and the caller
    /// tries again.
    ///
    /// A reacquire (whose other writer is likely the holder's own renewal or
    /// release), a renewal and a release wait: they come from a holder, and a
    /// spurious refusal would tell it that it had lost its lease.
    ///
    /// ```
    /// use lease_machines::{Contention, Rejection, RequestKind};
    ///
    /// assert_eq!(
    ///     RequestKind::Acquire.on_contention(),
    ///     Contention::Refuse(Rejection::Occupied)
    /// );
    /// assert_eq!(RequestKind::Renew.on_contention(), Contention::Wait);
    /// ```
    #[must_use]
    pub const fn on_contention(self) -> Contention {
        match self {
            Self::Acquire => Contention::Refuse(Rejection::Occupied),
            Self::Reacquire | Self::Renew | Self::Release => Contention::Wait,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{Contention, RequestKind};
    use crate::Rejection;

    #[test]
    fn only_a_plain_acquire_is_refused_without_waiting() {
        assert_eq!(
            RequestKind::Acquire.on_contention(),
            Contention::Refuse(Rejection::Occupied)
        );
        for kind in [
            RequestKind::Reacquire,
            RequestKind::Renew,
            RequestKind::Release,
        ] {
            assert_eq!(kind.on_contention(), Contention::Wait, "{kind:?}");
        }
    }
}
