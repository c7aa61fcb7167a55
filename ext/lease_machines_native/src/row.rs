//! The stores' row codec: five columns, each `nil` or canonical decimal text
//! of a `u64`, to and from the core's `FlatCheckpoint`.
//!
//! The columns are `last_issued`, `lease_owner`, `lease_token`,
//! `lease_expires_at_ns`, `observed_ns`; instants are whole nanoseconds since
//! the Unix epoch (`Duration::from_nanos`), all of `0..2**64-1`. A row that is
//! not that, or that no history can produce, is a `StoreError` naming the
//! resource and the problem in the store's column names.
//!
//! `LeaseMachines::Native.row_checkpoint(name, columns)` and
//! `Native.row_columns(checkpoint)` are the codec as Ruby sees it;
//! `Native.row_reconciled(name, columns, mark, mark_owner)` is the core's
//! `Checkpoint::reconciled` on a row (`store.reconcile`).

use core::time::Duration;

use lease_machines::{Checkpoint, CheckpointError, FlatCheckpoint, OwnerId};
use magnus::{function, prelude::*, Error, RArray, RModule, RString, Ruby, Value};

use crate::{
    checkpoint, convert,
    errors::{self, Failure},
    lease,
};

/// The columns, in order, as the stores name them.
const NAMES: [&str; 5] = [
    "last_issued",
    "lease_owner",
    "lease_token",
    "lease_expires_at_ns",
    "observed_ns",
];

/// `LeaseMachines::StoreError`, naming the resource whose row is bad.
fn bad_row(ruby: &Ruby, name: Value, problem: &str) -> Error {
    errors::raise(
        ruby,
        Failure::Store(format!(
            "the stored row for resource {} is not a valid checkpoint: {problem}",
            name.inspect()
        )),
    )
}

/// Why no history can produce a row, in the store's column names.
const fn problem(error: CheckpointError) -> &'static str {
    match error {
        CheckpointError::MissingObserved => "observed_ns is nil",
        CheckpointError::PartialLease => {
            "a lease record needs lease_owner, lease_token and lease_expires_at_ns, all or none"
        }
        CheckpointError::ZeroLeaseToken => "lease_token is 0",
        CheckpointError::ZeroLastIssued => "last_issued is 0",
        CheckpointError::UnissuedLease => {
            "the lease's token was never issued (lease_token > last_issued, or no last_issued)"
        }
    }
}

/// One column: `nil`, or canonical decimal text of a `u64`.
fn column(ruby: &Ruby, name: Value, label: &str, value: Value) -> Result<Option<u64>, Error> {
    if value.is_nil() {
        return Ok(None);
    }
    let invalid = || bad_row(ruby, name, &format!("{label} is {}", value.inspect()));
    let text = RString::from_value(value).ok_or_else(invalid)?;
    let digits = text.to_string().map_err(|_| invalid())?;
    let canonical = !digits.is_empty()
        && digits.bytes().all(|b| b.is_ascii_digit())
        && (digits == "0" || !digits.starts_with('0'));
    if !canonical {
        return Err(invalid());
    }
    digits.parse::<u64>().map(Some).map_err(|_| invalid())
}

/// The flat checkpoint of a row as read (`None`: a resource with no row),
/// not yet checked for consistency.
pub fn decode(ruby: &Ruby, name: Value, columns: Value) -> Result<Option<FlatCheckpoint>, Error> {
    if columns.is_nil() {
        return Ok(None);
    }
    let array = RArray::from_value(columns)
        .filter(|array| array.len() == NAMES.len())
        .ok_or_else(|| bad_row(ruby, name, &format!("got {}", columns.inspect())))?;
    let mut row = [None; 5];
    for ((slot, label), value) in row.iter_mut().zip(NAMES).zip(array) {
        *slot = column(ruby, name, label, value)?;
    }
    let [last_issued, lease_owner, lease_token, lease_expires_at, observed] = row;
    Ok(Some(FlatCheckpoint {
        last_issued,
        lease_owner,
        lease_token,
        lease_expires_at: lease_expires_at.map(Duration::from_nanos),
        observed: observed.map(Duration::from_nanos),
    }))
}

/// The checkpoint of a row as read, or a `StoreError` when no history can
/// produce it. A resource with no row has the empty checkpoint.
pub fn restore(ruby: &Ruby, name: Value, row: Option<FlatCheckpoint>) -> Result<Checkpoint, Error> {
    row.map_or(Ok(Checkpoint::default()), |flat| {
        Checkpoint::from_flat(flat).map_err(|error| bad_row(ruby, name, problem(error)))
    })
}

/// A column's text: exact decimal (every instant of a row the core decided
/// fits `u64` nanoseconds; a checkpoint made in memory may not, and is written
/// as it is, as `Stores.columns` always did).
fn text(ruby: &Ruby, number: Option<u128>) -> Value {
    number.map_or_else(
        || ruby.qnil().as_value(),
        |number| ruby.str_new(&number.to_string()).as_value(),
    )
}

/// A flat checkpoint's five columns.
pub fn encode(ruby: &Ruby, flat: FlatCheckpoint) -> RArray {
    let nanos = |duration: Option<Duration>| duration.map(|d| d.as_nanos());
    ruby.ary_new_from_values(&[
        text(ruby, flat.last_issued.map(u128::from)),
        text(ruby, flat.lease_owner.map(u128::from)),
        text(ruby, flat.lease_token.map(u128::from)),
        text(ruby, nanos(flat.lease_expires_at)),
        text(ruby, nanos(flat.observed)),
    ])
}

/// `Native.row_checkpoint(name, columns)`: the row (`nil`: a resource with no
/// row) as a frozen `Checkpoint`, or a `StoreError` naming the resource.
fn row_checkpoint(ruby: &Ruby, name: Value, columns: Value) -> Result<Value, Error> {
    let start = restore(ruby, name, decode(ruby, name, columns)?)?;
    checkpoint::value(ruby, start)
}

/// `Native.row_columns(checkpoint)`: a `Checkpoint`'s five columns.
fn row_columns(ruby: &Ruby, checkpoint: Value) -> Result<RArray, Error> {
    let checkpoint = checkpoint::from_value(ruby, checkpoint, "checkpoint")?;
    Ok(encode(ruby, checkpoint.flat()))
}

/// `Native.row_reconciled(name, columns, mark, mark_owner)`: the row raised
/// to a fence's mark (an issued token) and the owner recorded with it
/// (`nil`: none), by the core's rule: `[before, after, voided]`, the
/// checkpoints before and after (the same value when nothing changes) and
/// the lease record it cleared, or `nil`.
fn row_reconciled(
    ruby: &Ruby,
    name: Value,
    columns: Value,
    mark: Value,
    mark_owner: Value,
) -> Result<RArray, Error> {
    let mark = convert::issued_token(ruby, mark, "mark")?;
    let mark_owner = convert::or_nil(mark_owner, |value| {
        convert::u64_arg(ruby, value, "mark_owner").map(OwnerId::new)
    })?;
    let before = restore(ruby, name, decode(ruby, name, columns)?)?;
    let done = before.reconciled(mark, mark_owner);
    let voided = match done.voided {
        Some(voided) => lease::value(ruby, voided)?,
        None => ruby.qnil().as_value(),
    };
    Ok(ruby.ary_new_from_values(&[
        checkpoint::value(ruby, before)?,
        checkpoint::value(ruby, done.checkpoint)?,
        voided,
    ]))
}

/// Defines `Native.row_checkpoint`, `Native.row_columns` and `Native.row_reconciled`.
pub fn define(native: RModule) -> Result<(), Error> {
    native.define_module_function("row_checkpoint", function!(row_checkpoint, 2))?;
    native.define_module_function("row_columns", function!(row_columns, 1))?;
    native.define_module_function("row_reconciled", function!(row_reconciled, 4))?;
    Ok(())
}
