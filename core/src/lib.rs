//! A deterministic decision model for time-limited ownership with fencing tokens.
//!
//! A lock with a TTL tells the next worker it may start; it never tells a
//! stalled one it must stop. This crate hands out a [`FencingToken`] with every
//! grant, strictly greater than every token before it, and gives the protected
//! resource a [`Fence`] that refuses any token lower than the highest it has
//! seen. A worker that wakes from a long pause still holding token 1 finds a
//! resource that has already seen token 2.
//!
//! - [`LeaseAuthority`] decides who holds one resource and until when. It is a
//!   pure state machine: the caller supplies every instant as a [`Duration`]
//!   from one origin, and gets a [`Decision`] back.
//! - [`Checkpoint`] is the authority's whole state. Store it before showing a
//!   decision to anyone, and [`LeaseAuthority::restore`] continues the history.
//! - [`Fence`] lives at the resource.
//! - [`Holder`] and [`Cadence`] are the worker's side: when to renew, when to
//!   worry, when to stop.
//!
//! The crate is `no_std`, allocates nothing, has no `unsafe` and no panics
//! reachable from its API: overflow is a [`Rejection`], never a wrap.
//!
//! # Order of checks
//!
//! The order is part of the contract (a rejection that is decided early leaves
//! later state alone):
//!
//! | step | `acquire` / `reacquire` | `renew` | `release` |
//! |---|---|---|---|
//! | 1 | `now < observed`: `ClockRegressed` (policy `Reject`, nothing changes) or evaluate at `observed` (policy `Clamp`) | same | same |
//! | 2 | `observed = max(observed, now)`, even if the request is then refused | same | same |
//! | 3 | `ttl == 0`: `InvalidTtl` | same | — |
//! | 4 | `now + ttl` overflows: `DeadlineOverflow` | no lease or other token: `StaleToken` | `StaleToken` |
//! | 5 | live lease: `Occupied` (`reacquire` rotates the caller's own) | other owner: `NotOwner` | `NotOwner` |
//! | 6 | last token `u64::MAX`: `TokensExhausted` | `now >= expires_at`: `Expired` | `Expired` |
//! | 7 | `Granted`, token `last + 1` (with [`TokenFloor::ClockMicros`]: `max(last + 1, now in µs)`) | overflow: `DeadlineOverflow`, else `Renewed` to `max(expires_at, now + ttl)` | `Released`, token mark kept |
//!
//! ```
//! use core::time::Duration;
//! use lease_machines::{Decision, Fence, LeaseAuthority, OwnerId};
//!
//! let secs = Duration::from_secs;
//! let mut authority = LeaseAuthority::new();
//! let mut fence = Fence::new(None);
//!
//! let Decision::Granted(old) = authority.acquire(OwnerId::new(7), secs(0), secs(30)) else {
//!     unreachable!()
//! };
//! assert!(fence.accept(old.token()));
//! // Worker 7 stalls for 40 s. Its lease lapses; worker 12 takes over.
//! let Decision::Granted(new) = authority.acquire(OwnerId::new(12), secs(35), secs(30)) else {
//!     unreachable!()
//! };
//! assert!(fence.accept(new.token()));
//! // Worker 7 wakes up and tries to write: the door has already seen token 2.
//! assert!(!fence.accept(old.token()));
//! ```
#![no_std]
#![forbid(unsafe_code)]
#![deny(missing_docs)]

mod authority;
mod checkpoint;
mod contention;
mod decision;
mod fence;
mod holder;
mod ids;
mod owner_id;
mod persistence;
mod proof;
mod reconcile;

pub use authority::{ClockPolicy, LeaseAuthority, TokenFloor};
pub use checkpoint::{Checkpoint, CheckpointError, FlatCheckpoint};
pub use contention::{Contention, RequestKind};
pub use core::time::Duration;
pub use decision::{Decision, Lease, Rejection};
pub use fence::Fence;
pub use holder::{Cadence, Holder, HolderState};
pub use ids::{FencingToken, OwnerId};
pub use owner_id::{fnv1a_64, FNV1A_64_OFFSET_BASIS, FNV1A_64_PRIME};
pub use persistence::must_store;
pub use proof::{any_verifies, KeyTooShort, ProofKey, TokenProof, DOMAIN as PROOF_DOMAIN};
pub use reconcile::Reconciliation;

#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
