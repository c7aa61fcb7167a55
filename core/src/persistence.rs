//! Which decided states a store must write, and which it may leave unwritten.

use crate::Checkpoint;

/// Whether a store that keeps `stored` and has just decided `decided` (the
/// authority restored from `stored` with [`ClockPolicy::Clamp`], after one
/// request) must write `decided` before it answers.
///
/// It must when the token high-water mark or the lease record changed (a
/// grant, a rotation, a renewal that moved the deadline, a release), and when
/// the observed instant crossed the current lease's deadline
/// (`stored.observed < expires_at <= decided.observed`): from then on the
/// stored row itself says the lease has expired, so a clock that steps back
/// can never revive it. Any other decision (a refusal or a renewal that moved
/// nothing but the observed clock within the lease's life, or with no lease
/// at all) leaves the stored row as it is, and costs a store a read instead
/// of a commit.
///
/// An authority restored from a row written by this rule decides exactly as
/// one restored from a row written after every decision, as long as each
/// request's `now` is no earlier than every `now` seen before: the same
/// statuses, reasons, tokens and deadlines. When a clock steps back below an
/// instant that was observed and not written, the two differ only here:
///
/// - a grant or renewal counts its deadline from the request's own `now`
///   (or the stored instant, if later) instead of the latest instant seen,
///   so its deadline is earlier by at most that step back, and never earlier
///   than `now + ttl`;
/// - for the same reason a request's deadline may fit the horizon where the
///   other's is [`Rejection::DeadlineOverflow`] (only within `ttl` of the
///   horizon); the request is then decided by the later checks (granted,
///   renewed, occupied, tokens exhausted).
///
/// Whether a lease is live is always decided alike, so no lease is revived,
/// none is granted over a live one, and no lease is shortened.
///
/// ```
/// use core::time::Duration;
/// use lease_machines::{must_store, ClockPolicy, LeaseAuthority, OwnerId};
///
/// let secs = Duration::from_secs;
/// let mut authority = LeaseAuthority::new().with_clock_policy(ClockPolicy::Clamp);
/// let _ = authority.acquire(OwnerId::new(1), secs(10), secs(30));
/// let stored = authority.checkpoint();
///
/// // Refused at 20 s, within the lease's life: nothing to write.
/// let _ = authority.acquire(OwnerId::new(2), secs(20), secs(30));
/// assert!(!must_store(&stored, &authority.checkpoint()));
///
/// // Refused at 45 s: the lease ran out at 40 s, and the row must say so.
/// let _ = authority.renew(OwnerId::new(1), stored.last_issued(), secs(45), secs(30));
/// assert!(must_store(&stored, &authority.checkpoint()));
/// ```
///
/// [`ClockPolicy::Clamp`]: crate::ClockPolicy::Clamp
/// [`Rejection::DeadlineOverflow`]: crate::Rejection::DeadlineOverflow
#[must_use]
pub fn must_store(stored: &Checkpoint, decided: &Checkpoint) -> bool {
    if stored.last_issued != decided.last_issued || stored.lease != decided.lease {
        return true;
    }
    match decided.lease {
        Some(lease) => {
            let expires_at = lease.expires_at();
            stored.observed < expires_at && expires_at <= decided.observed
        }
        None => false,
    }
}
