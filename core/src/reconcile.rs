//! Reconciling a history with a fence's mark: after a failover that lost
//! grants, the store's high-water mark is raised to what the fence has seen.

use crate::{Checkpoint, FencingToken, Lease, OwnerId};

/// What [`Checkpoint::reconciled`] did to a checkpoint.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Reconciliation {
    /// The checkpoint after it: the same one when nothing had to change.
    pub checkpoint: Checkpoint,
    /// The lease record it cleared, if any: one the fence can never admit
    /// again (see [`Checkpoint::reconciled`]).
    pub voided: Option<Lease>,
}

impl Reconciliation {
    /// Whether the checkpoint changed (a store writes it only then).
    #[must_use]
    pub fn changed(&self, before: &Checkpoint) -> bool {
        self.checkpoint != *before
    }
}

impl Checkpoint {
    /// This history raised to a fence's mark: the high-water mark is at least
    /// `mark`, so the next grant's token is above every token the fence has
    /// seen, even one the history lost (a failover to a replica that lacked
    /// the grant).
    ///
    /// The rule, which keeps the checkpoint valid (a lease's token is never
    /// above the high-water mark):
    ///
    /// - `last_issued` becomes `max(last_issued, mark)`: never lower;
    /// - the lease record is cleared when the fence has passed it, whether it
    ///   is live or expired: its token is below the mark (every write with it
    ///   is refused), or equal to the mark while the mark records another
    ///   owner (`mark_owner`, a reissued token). Its holder learns it at its
    ///   next renewal (`StaleToken`), and the resource can be granted again
    ///   at once, above the mark. Any other lease (above the mark, or equal
    ///   with the same owner or none recorded) is kept as it is;
    /// - the observed instant is kept.
    ///
    /// It is idempotent: reconciling the result with the same mark changes
    /// nothing.
    ///
    /// ```
    /// use core::time::Duration;
    /// use lease_machines::{Checkpoint, FencingToken, Lease, OwnerId};
    ///
    /// let token = |value| FencingToken::new(value).unwrap();
    /// // The promoted replica issued token 2 again, to owner 12; the fence saw 2 from owner 7.
    /// let reissued = Lease::new(OwnerId::new(12), token(2), Duration::from_secs(40));
    /// let row = Checkpoint::from_parts(Some(token(2)), Some(reissued), Duration::from_secs(10)).unwrap();
    /// let done = row.reconciled(token(2), Some(OwnerId::new(7)));
    /// assert_eq!(done.voided, Some(reissued));
    /// assert_eq!(done.checkpoint.last_issued(), Some(token(2)));
    /// assert_eq!(done.checkpoint.lease(), None);
    ///
    /// // A history already above the mark is left as it is.
    /// let ahead = Checkpoint::from_parts(Some(token(9)), None, Duration::ZERO).unwrap();
    /// assert_eq!(ahead.reconciled(token(5), None).checkpoint, ahead);
    /// ```
    #[must_use]
    pub fn reconciled(&self, mark: FencingToken, mark_owner: Option<OwnerId>) -> Reconciliation {
        let last_issued = Some(self.last_issued.map_or(mark, |last| last.max(mark)));
        let passed = |lease: &Lease| {
            lease.token() < mark
                || (lease.token() == mark && mark_owner.is_some_and(|owner| owner != lease.owner()))
        };
        let voided = self.lease.filter(passed);
        let lease = if voided.is_some() { None } else { self.lease };
        Reconciliation {
            checkpoint: Self {
                last_issued,
                lease,
                observed: self.observed,
            },
            voided,
        }
    }
}
