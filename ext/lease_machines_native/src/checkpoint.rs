//! `LeaseMachines::Checkpoint`: a frozen TypedData holding the core's
//! checkpoint and its `Lease` object (kept alive by `mark`). Consistent by
//! construction: every way to make one goes through the core's check.
//! `lib/lease_machines/checkpoint.rb` adds value semantics on top of the
//! readers defined here.

use lease_machines::{Checkpoint, CheckpointError, FencingToken, FlatCheckpoint};
use magnus::{
    gc::Marker,
    method,
    prelude::*,
    typed_data::{DataTypeFunctions, Obj},
    Error, RClass, RModule, Ruby, Value,
};

use crate::{
    classes::ClassSlot,
    convert::{self, TimeArg},
    errors::{self, Failure},
    lease::{self, LeaseRef},
};

/// A `Checkpoint` object.
#[derive(magnus::TypedData)]
#[magnus(class = "LeaseMachines::Checkpoint", free_immediately, size, mark)]
struct CheckpointObj {
    checkpoint: Checkpoint,
    lease: LeaseRef,
}

impl DataTypeFunctions for CheckpointObj {
    fn mark(&self, marker: &Marker) {
        self.lease.mark(marker);
    }
}

static CLASS: ClassSlot = ClassSlot::new();

/// A new frozen `Checkpoint` object (and its `Lease` object).
pub fn value(ruby: &Ruby, checkpoint: Checkpoint) -> Result<Value, Error> {
    let lease = LeaseRef::made(ruby, checkpoint.lease())?;
    CLASS.frozen(ruby, CheckpointObj { checkpoint, lease })
}

/// The core checkpoint of a `Checkpoint` object.
pub fn from_value(ruby: &Ruby, value: Value, name: &str) -> Result<Checkpoint, Error> {
    Obj::<CheckpointObj>::try_convert(value)
        .map(|checkpoint| checkpoint.checkpoint)
        .map_err(|_| {
            convert::refusing(ruby, value, |shown| {
                Failure::Type(format!(
                    "{name} must be a LeaseMachines::Checkpoint, got {shown}"
                ))
            })
        })
}

/// The error for a lease whose token the history never issued.
fn unissued(ruby: &Ruby, last_issued: Option<u64>, token: Option<u64>) -> Error {
    let token = token.unwrap_or(0);
    let mark = last_issued.map_or_else(|| "nil".to_owned(), |mark| mark.to_string());
    errors::raise(
        ruby,
        Failure::Argument(format!(
            "inconsistent checkpoint: lease token {token} was never issued (last_issued is {mark})"
        )),
    )
}

/// The error for a flat checkpoint that cannot come from one history.
fn inconsistent(ruby: &Ruby, error: CheckpointError, flat: FlatCheckpoint) -> Error {
    match error {
        CheckpointError::UnissuedLease => unissued(ruby, flat.last_issued, flat.lease_token),
        other => errors::raise(
            ruby,
            Failure::Argument(format!("inconsistent checkpoint: {other}")),
        ),
    }
}

impl CheckpointObj {
    /// A new frozen `Checkpoint` of `class` from a `Lease` object (or `nil`).
    fn make(
        ruby: &Ruby,
        class: RClass,
        [last_issued, lease, observed]: [Value; 3],
        (time, name): (TimeArg, &str),
    ) -> Result<Value, Error> {
        let observed = time(ruby, observed, name)?;
        let mark = convert::optional_token(ruby, last_issued, "last_issued")?;
        let core_lease = lease::optional(ruby, lease, "lease")?;
        let checkpoint = Checkpoint::from_parts(mark, core_lease, observed).ok_or_else(|| {
            let token = core_lease.map(|lease| lease.token().value());
            unissued(ruby, mark.map(FencingToken::value), token)
        })?;
        let lease = LeaseRef::given(lease);
        CLASS.frozen_in(ruby, Self { checkpoint, lease }, class)
    }

    /// `Checkpoint._new(last_issued, lease, observed)`: `observed` in seconds.
    fn build(
        ruby: &Ruby,
        class: RClass,
        last_issued: Value,
        lease: Value,
        observed: Value,
    ) -> Result<Value, Error> {
        let time: TimeArg = convert::time_arg;
        Self::make(
            ruby,
            class,
            [last_issued, lease, observed],
            (time, "observed"),
        )
    }

    /// `Checkpoint._exact(last_issued, lease, observed_ns)`: exact nanoseconds.
    fn exact(
        ruby: &Ruby,
        class: RClass,
        last_issued: Value,
        lease: Value,
        observed_ns: Value,
    ) -> Result<Value, Error> {
        let time: TimeArg = convert::nanos_arg;
        Self::make(
            ruby,
            class,
            [last_issued, lease, observed_ns],
            (time, "observed_ns"),
        )
    }

    /// `Checkpoint._flat(last_issued, owner, token, expires_at_ns,
    /// observed_ns)`: the flat form (Marshal's), each lease field `nil` or
    /// given, all or none. The fields are checked in the order
    /// `_exact(last_issued:, lease: Lease.exact(...), observed_ns:)` checks
    /// them.
    fn flat(
        ruby: &Ruby,
        class: RClass,
        last_issued: Value,
        owner: Value,
        token: Value,
        expires_at_ns: Value,
        observed_ns: Value,
    ) -> Result<Value, Error> {
        let owner = convert::or_nil(owner, |v| convert::u64_arg(ruby, v, "owner"))?;
        let token = convert::or_nil(token, |v| convert::issued_token(ruby, v, "token"))?;
        let expires_at = convert::or_nil(expires_at_ns, |v| {
            convert::nanos_arg(ruby, v, "expires_at_ns")
        })?;
        let observed = convert::nanos_arg(ruby, observed_ns, "observed_ns")?;
        let mark = convert::optional_token(ruby, last_issued, "last_issued")?;
        let flat = FlatCheckpoint {
            last_issued: mark.map(FencingToken::value),
            lease_owner: owner,
            lease_token: token.map(FencingToken::value),
            lease_expires_at: expires_at,
            observed: Some(observed),
        };
        let checkpoint =
            Checkpoint::from_flat(flat).map_err(|error| inconsistent(ruby, error, flat))?;
        let lease = LeaseRef::made(ruby, checkpoint.lease())?;
        CLASS.frozen_in(ruby, Self { checkpoint, lease }, class)
    }

    fn last_issued(&self) -> Option<u64> {
        self.checkpoint.last_issued().map(FencingToken::value)
    }

    fn lease(ruby: &Ruby, rb_self: &Self) -> Option<Value> {
        rb_self.lease.get(ruby)
    }

    fn observed_ns(ruby: &Ruby, rb_self: &Self) -> magnus::Integer {
        convert::nanos_value(ruby, rb_self.checkpoint.observed())
    }

    fn observed(&self) -> f64 {
        convert::secs_value(self.checkpoint.observed())
    }
}

/// Defines `LeaseMachines::Checkpoint`'s native methods.
pub fn define(ruby: &Ruby, root: RModule) -> Result<(), Error> {
    let class = root.define_class("Checkpoint", ruby.class_object())?;
    CLASS.define::<CheckpointObj>(ruby, class)?;
    class.define_singleton_method("_new", method!(CheckpointObj::build, 3))?;
    class.define_singleton_method("_exact", method!(CheckpointObj::exact, 3))?;
    class.define_singleton_method("_flat", method!(CheckpointObj::flat, 5))?;
    class.define_method("last_issued", method!(CheckpointObj::last_issued, 0))?;
    class.define_method("lease", method!(CheckpointObj::lease, 0))?;
    class.define_method("observed_ns", method!(CheckpointObj::observed_ns, 0))?;
    class.define_method("observed", method!(CheckpointObj::observed, 0))?;
    Ok(())
}
