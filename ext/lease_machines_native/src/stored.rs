//! Stored rows: one durable decision in one native call, the stores' hot path
//! (`LeaseMachines::Native.decide_row`), and a row read as a `Checkpoint`
//! (`Native.stored_checkpoint`). Both validate a row the same way.
//!
//! A row is five columns as the stores keep them, canonical decimal text or
//! `nil`: `last_issued`, `lease_owner`, `lease_token`, `lease_expires_at_ns`,
//! `observed_ns`. Instants are whole nanoseconds since the Unix epoch, all of
//! `0..2**64-1`. The core decides on a timeline whose "seconds" are those
//! nanoseconds (it only adds and compares them), so nothing is ever rounded,
//! and the returned lease is put back on the real timeline.

use core::time::Duration;

use lease_machines::{
    Checkpoint, ClockPolicy, Decision, FencingToken, Lease, LeaseAuthority, OwnerId,
};
use magnus::{prelude::*, Error, ExceptionClass, RArray, RModule, RString, Ruby, Value};

use crate::{convert, values};

/// The five columns, decoded.
type Columns = [Option<u64>; 5];

const NAMES: [&str; 5] = [
    "last_issued",
    "lease_owner",
    "lease_token",
    "lease_expires_at_ns",
    "observed_ns",
];

/// `LeaseMachines::StoreError`, naming the resource whose row is bad.
fn bad_row(ruby: &Ruby, name: Value, problem: &str) -> Error {
    let class = ruby
        .class_object()
        .const_get::<_, RModule>("LeaseMachines")
        .and_then(|root| root.const_get::<_, ExceptionClass>("StoreError"))
        .unwrap_or_else(|_| ruby.exception_runtime_error());
    Error::new(
        class,
        format!(
            "the stored row for resource {} is not a valid checkpoint: {problem}",
            name.inspect()
        ),
    )
}

/// One column: `nil`, or canonical decimal text of a `u64`.
fn column(ruby: &Ruby, name: Value, index: usize, value: Value) -> Result<Option<u64>, Error> {
    let label = NAMES.get(index).copied().unwrap_or("column");
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

fn decode(ruby: &Ruby, name: Value, columns: Value) -> Result<Option<Columns>, Error> {
    if columns.is_nil() {
        return Ok(None);
    }
    let array = RArray::from_value(columns)
        .filter(|array| array.len() == NAMES.len())
        .ok_or_else(|| bad_row(ruby, name, &format!("got {}", columns.inspect())))?;
    let mut row: Columns = [None; 5];
    for (index, (slot, value)) in row.iter_mut().zip(array).enumerate() {
        *slot = column(ruby, name, index, value)?;
    }
    Ok(Some(row))
}

/// The core checkpoint of a row (on the nanosecond timeline).
fn checkpoint(ruby: &Ruby, name: Value, row: Columns) -> Result<Checkpoint, Error> {
    let [last_issued, owner, token, expires_at, observed] = row;
    let Some(observed) = observed else {
        return Err(bad_row(ruby, name, "observed_ns is nil"));
    };
    let lease = match (owner, token, expires_at) {
        (None, None, None) => None,
        (Some(owner), Some(token), Some(expires_at)) => {
            let token =
                FencingToken::new(token).ok_or_else(|| bad_row(ruby, name, "lease_token is 0"))?;
            Some(Lease::new(
                OwnerId::new(owner),
                token,
                Duration::from_secs(expires_at),
            ))
        }
        _ => return Err(bad_row(
            ruby,
            name,
            "a lease record needs lease_owner, lease_token and lease_expires_at_ns, all or none",
        )),
    };
    let last_issued = match last_issued {
        None => None,
        Some(raw) => {
            Some(FencingToken::new(raw).ok_or_else(|| bad_row(ruby, name, "last_issued is 0"))?)
        }
    };
    Checkpoint::from_parts(last_issued, lease, Duration::from_secs(observed)).ok_or_else(|| {
        bad_row(
            ruby,
            name,
            "the lease's token was never issued (lease_token > last_issued, or no last_issued)",
        )
    })
}

/// The row of a core checkpoint (on the nanosecond timeline).
fn encode(checkpoint: Checkpoint) -> Columns {
    let lease = checkpoint.lease();
    [
        checkpoint.last_issued().map(FencingToken::value),
        lease.map(|lease| lease.owner().value()),
        lease.map(|lease| lease.token().value()),
        lease.map(|lease| lease.expires_at().as_secs()),
        Some(checkpoint.observed().as_secs()),
    ]
}

/// A lease of the nanosecond timeline put back on the real one.
fn real(lease: Lease) -> Lease {
    Lease::new(
        lease.owner(),
        lease.token(),
        Duration::from_nanos(lease.expires_at().as_secs()),
    )
}

fn real_decision(decision: Decision) -> Decision {
    match decision {
        Decision::Granted(lease) => Decision::Granted(real(lease)),
        Decision::Renewed(lease) => Decision::Renewed(real(lease)),
        other => other,
    }
}

fn columns_value(ruby: &Ruby, row: Columns) -> Result<RArray, Error> {
    let array = ruby.ary_new_capa(row.len());
    for value in row {
        match value {
            Some(number) => array.push(ruby.str_new(&number.to_string()))?,
            None => array.push(ruby.qnil())?,
        }
    }
    Ok(array)
}

/// The checkpoint of a row (`nil`: a resource with no row) on the nanosecond
/// timeline, validated.
fn stored(
    ruby: &Ruby,
    name: Value,
    columns: Value,
) -> Result<(Option<Columns>, Checkpoint), Error> {
    let row = decode(ruby, name, columns)?;
    let start = match row {
        Some(row) => checkpoint(ruby, name, row)?,
        None => Checkpoint::default(),
    };
    Ok((row, start))
}

/// `Native.stored_checkpoint(name, columns)`: the row (`nil`: a resource
/// with no row) as a frozen `Checkpoint` on the real timeline, or a
/// `StoreError` naming the resource when no history can produce it.
pub fn stored_checkpoint(ruby: &Ruby, name: Value, columns: Value) -> Result<Value, Error> {
    let (_, start) = stored(ruby, name, columns)?;
    let observed = Duration::from_nanos(start.observed().as_secs());
    // The same tokens as a checkpoint the core accepted: always consistent.
    Checkpoint::from_parts(start.last_issued(), start.lease().map(real), observed)
        .map(|checkpoint| values::checkpoint_value(ruby, checkpoint))
        .ok_or_else(|| bad_row(ruby, name, "inconsistent"))
}

/// `Native.decide_row(name, columns, kind, owner, token, now_ns, ttl_ns)`:
/// rebuilds the authority from `columns` (`nil`: a resource with no row) with
/// the `:clamp` clock policy, decides (`kind` 0 acquire, 1 reacquire, 2
/// renew, 3 release; `token` for renew and release, `ttl_ns` for all but
/// release) at `now_ns`, and returns `[decision, columns to write]`, the
/// second `nil` when the decision changed nothing. `name` only names the
/// resource in a `StoreError` about a bad row.
#[allow(clippy::too_many_arguments)]
pub fn decide_row(
    ruby: &Ruby,
    name: Value,
    columns: Value,
    kind: u8,
    owner: Value,
    token: Value,
    now_ns: Value,
    ttl_ns: Value,
) -> Result<RArray, Error> {
    let owner = OwnerId::new(convert::u64_arg(ruby, owner, "owner")?);
    let now = Duration::from_secs(convert::u64_arg(ruby, now_ns, "now_ns")?);
    let (before, start) = stored(ruby, name, columns)?;
    let mut authority = LeaseAuthority::restore(start).with_clock_policy(ClockPolicy::Clamp);
    let ttl = || -> Result<Duration, Error> {
        convert::u64_arg(ruby, ttl_ns, "ttl_ns").map(Duration::from_secs)
    };
    let presented = || convert::presented_token(ruby, token, "token");
    let decision = match kind {
        0 => authority.acquire(owner, now, ttl()?),
        1 => authority.reacquire(owner, now, ttl()?),
        2 => authority.renew(owner, presented()?, now, ttl()?),
        3 => authority.release(owner, presented()?, now),
        _ => {
            return Err(Error::new(
                ruby.exception_arg_error(),
                format!("kind must be 0, 1, 2 or 3, got {kind}"),
            ))
        }
    };
    let after = encode(authority.checkpoint());
    let unchanged = after == before.unwrap_or_else(|| encode(Checkpoint::default()));
    let result = ruby.ary_new_capa(2);
    result.push(values::decision_value(ruby, real_decision(decision))?)?;
    if unchanged {
        result.push(ruby.qnil())?;
    } else {
        result.push(columns_value(ruby, after)?)?;
    }
    Ok(result)
}
