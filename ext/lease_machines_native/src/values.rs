//! The value objects `Decision`, `Lease` and `Checkpoint`: frozen TypedData
//! objects holding core values. Building one is a single allocation with no
//! Ruby call that could raise (no `initialize`, no instance variables), which
//! is most of what a granted decision costs. `lib/` adds value semantics
//! (`==`, `hash`, `to_h`, `deconstruct_keys`, `inspect`) on top of the readers
//! defined here.
//!
//! Releases and rejections are nine shared frozen decisions made once at load
//! time (`Decision::RELEASED`, `Decision::REJECTIONS`): answering them
//! allocates nothing.

use std::sync::OnceLock;

use lease_machines::{Checkpoint, Decision, FencingToken, Lease, OwnerId, Rejection};
use magnus::{
    gc::Marker,
    prelude::*,
    typed_data::{DataTypeFunctions, Obj},
    value::Opaque,
    Error, RArray, RClass, RModule, Ruby, StaticSymbol, Symbol, Value,
};

use crate::convert;

/// `LeaseMachines::Lease`.
#[magnus::wrap(class = "LeaseMachines::Lease", free_immediately, size)]
pub struct LeaseObj(Lease);

/// `LeaseMachines::Decision`: the status, the reason of a rejection, and the
/// `Lease` object of a grant or renewal (kept alive by `mark`).
#[derive(magnus::TypedData)]
#[magnus(class = "LeaseMachines::Decision", free_immediately, size, mark)]
pub struct DecisionObj {
    decision: Decision,
    lease: Option<Opaque<Value>>,
}

/// `LeaseMachines::Checkpoint`: the core checkpoint and its `Lease` object.
#[derive(magnus::TypedData)]
#[magnus(class = "LeaseMachines::Checkpoint", free_immediately, size, mark)]
pub struct CheckpointObj {
    checkpoint: Checkpoint,
    lease: Option<Opaque<Value>>,
}

impl DataTypeFunctions for DecisionObj {
    fn mark(&self, marker: &Marker) {
        if let Some(lease) = self.lease {
            marker.mark(lease);
        }
    }
}

impl DataTypeFunctions for CheckpointObj {
    fn mark(&self, marker: &Marker) {
        if let Some(lease) = self.lease {
            marker.mark(lease);
        }
    }
}

/// The shared decisions, made once by `define`.
struct Shared {
    released: Opaque<Value>,
    rejections: [Opaque<Value>; 8],
}

static SHARED: OnceLock<Shared> = OnceLock::new();

fn frozen<T: magnus::TypedData>(ruby: &Ruby, data: T) -> Value {
    let object = ruby.obj_wrap(data).as_value();
    object.freeze();
    object
}

fn frozen_as<T: magnus::TypedData>(ruby: &Ruby, data: T, class: RClass) -> Result<Value, Error> {
    if !class.is_inherited(T::class(ruby)) {
        return Err(Error::new(
            ruby.exception_type_error(),
            format!(
                "{} is not a subclass of {}",
                class.inspect(),
                T::class(ruby).inspect()
            ),
        ));
    }
    let object = ruby.obj_wrap_as(data, class).as_value();
    object.freeze();
    Ok(object)
}

/// A new frozen `Lease` object.
pub fn lease_value(ruby: &Ruby, lease: Lease) -> Value {
    frozen(ruby, LeaseObj(lease))
}

/// The core lease of a `Lease` object.
pub fn lease_from(ruby: &Ruby, value: Value, name: &str) -> Result<Lease, Error> {
    Obj::<LeaseObj>::try_convert(value)
        .map(|lease| lease.0)
        .map_err(|_| {
            Error::new(
                ruby.exception_type_error(),
                format!(
                    "{name} must be a LeaseMachines::Lease, got {}",
                    value.inspect()
                ),
            )
        })
}

fn optional_lease(ruby: &Ruby, value: Value, name: &str) -> Result<Option<Lease>, Error> {
    if value.is_nil() {
        Ok(None)
    } else {
        lease_from(ruby, value, name).map(Some)
    }
}

/// The answer to a decision: a new frozen `Decision` for grants and renewals
/// (with its `Lease`: two allocations), a shared one otherwise (none).
pub fn decision_value(ruby: &Ruby, decision: Decision) -> Result<Value, Error> {
    match decision {
        Decision::Granted(lease) | Decision::Renewed(lease) => {
            let lease = lease_value(ruby, lease);
            Ok(frozen(
                ruby,
                DecisionObj {
                    decision,
                    lease: Some(lease.into()),
                },
            ))
        }
        Decision::Released => shared(ruby).map(|shared| ruby.get_inner(shared.released)),
        Decision::Rejected(rejection) => shared(ruby).and_then(|shared| {
            shared
                .rejections
                .get(rejection as usize)
                .map(|value| ruby.get_inner(*value))
                .ok_or_else(|| Error::new(ruby.exception_runtime_error(), "unknown rejection"))
        }),
    }
}

fn shared(ruby: &Ruby) -> Result<&'static Shared, Error> {
    SHARED.get().ok_or_else(|| {
        Error::new(
            ruby.exception_runtime_error(),
            "lease_machines_native is not initialized",
        )
    })
}

/// A new frozen `Checkpoint` object.
pub fn checkpoint_value(ruby: &Ruby, checkpoint: Checkpoint) -> Value {
    let lease = checkpoint
        .lease()
        .map(|lease| lease_value(ruby, lease).into());
    frozen(ruby, CheckpointObj { checkpoint, lease })
}

/// The core checkpoint of a `Checkpoint` object (consistent by construction).
pub fn checkpoint_from(ruby: &Ruby, value: Value, name: &str) -> Result<Checkpoint, Error> {
    Obj::<CheckpointObj>::try_convert(value)
        .map(|checkpoint| checkpoint.checkpoint)
        .map_err(|_| {
            Error::new(
                ruby.exception_type_error(),
                format!(
                    "{name} must be a LeaseMachines::Checkpoint, got {}",
                    value.inspect()
                ),
            )
        })
}

/// The error for parts that cannot come from one history.
fn inconsistent(ruby: &Ruby, last_issued: Option<FencingToken>, lease: Option<Lease>) -> Error {
    let token = lease.map_or(0, |lease| lease.token().value());
    let mark = last_issued.map_or_else(|| "nil".to_owned(), |t| t.value().to_string());
    Error::new(
        ruby.exception_arg_error(),
        format!(
            "inconsistent checkpoint: lease token {token} was never issued (last_issued is {mark})"
        ),
    )
}

fn build_checkpoint(
    ruby: &Ruby,
    class: RClass,
    last_issued: Value,
    lease: Value,
    observed: core::time::Duration,
) -> Result<Value, Error> {
    let mark = convert::optional_token(ruby, last_issued, "last_issued")?;
    let core_lease = optional_lease(ruby, lease, "lease")?;
    let checkpoint = Checkpoint::from_parts(mark, core_lease, observed)
        .ok_or_else(|| inconsistent(ruby, mark, core_lease))?;
    let lease = (!lease.is_nil()).then(|| Opaque::from(lease));
    frozen_as(ruby, CheckpointObj { checkpoint, lease }, class)
}

impl LeaseObj {
    /// `Lease._new(owner, token, expires_at)` (`build`): `expires_at` in seconds.
    fn build(
        ruby: &Ruby,
        class: RClass,
        owner: Value,
        token: Value,
        expires_at: Value,
    ) -> Result<Value, Error> {
        let owner = OwnerId::new(convert::u64_arg(ruby, owner, "owner")?);
        let token = convert::issued_token(ruby, token, "token")?;
        let expires_at = convert::time_arg(ruby, expires_at, "expires_at")?;
        frozen_as(ruby, Self(Lease::new(owner, token, expires_at)), class)
    }

    /// `Lease._exact(owner, token, expires_at_ns)`: exact nanoseconds.
    fn exact(
        ruby: &Ruby,
        class: RClass,
        owner: Value,
        token: Value,
        expires_at_ns: Value,
    ) -> Result<Value, Error> {
        let owner = OwnerId::new(convert::u64_arg(ruby, owner, "owner")?);
        let token = convert::issued_token(ruby, token, "token")?;
        let expires_at = convert::nanos_arg(ruby, expires_at_ns, "expires_at_ns")?;
        frozen_as(ruby, Self(Lease::new(owner, token, expires_at)), class)
    }

    fn owner(&self) -> u64 {
        self.0.owner().value()
    }

    fn token(&self) -> u64 {
        self.0.token().value()
    }

    fn expires_at_ns(ruby: &Ruby, rb_self: &Self) -> magnus::Integer {
        convert::nanos_value(ruby, rb_self.0.expires_at())
    }

    fn expires_at(&self) -> f64 {
        convert::secs_value(self.0.expires_at())
    }

    fn is_expired(ruby: &Ruby, rb_self: &Self, now: Value) -> Result<bool, Error> {
        Ok(rb_self.0.is_expired(convert::time_arg(ruby, now, "now")?))
    }
}

impl DecisionObj {
    /// `Decision._new(status, lease, reason)`, after `lib/` checked the shape.
    fn build(
        ruby: &Ruby,
        class: RClass,
        status: Symbol,
        lease: Value,
        reason: Value,
    ) -> Result<Value, Error> {
        let name = status.name()?;
        let decision = match name.as_ref() {
            "granted" => Decision::Granted(lease_from(ruby, lease, "lease")?),
            "renewed" => Decision::Renewed(lease_from(ruby, lease, "lease")?),
            "released" => Decision::Released,
            "rejected" => {
                let reason = Symbol::from_value(reason).and_then(|symbol| symbol.name().ok());
                let rejection = Rejection::ALL
                    .into_iter()
                    .find(|rejection| reason.as_deref() == Some(rejection.as_str()))
                    .ok_or_else(|| {
                        Error::new(ruby.exception_arg_error(), "unknown rejection reason")
                    })?;
                Decision::Rejected(rejection)
            }
            _ => {
                return Err(Error::new(
                    ruby.exception_arg_error(),
                    "unknown decision status",
                ))
            }
        };
        let lease = decision.lease().map(|_| Opaque::from(lease));
        frozen_as(ruby, Self { decision, lease }, class)
    }

    fn status(ruby: &Ruby, rb_self: &Self) -> StaticSymbol {
        ruby.sym_new(match rb_self.decision {
            Decision::Granted(_) => "granted",
            Decision::Renewed(_) => "renewed",
            Decision::Released => "released",
            Decision::Rejected(_) => "rejected",
        })
    }

    fn lease(ruby: &Ruby, rb_self: &Self) -> Option<Value> {
        rb_self.lease.map(|lease| ruby.get_inner(lease))
    }

    fn reason(ruby: &Ruby, rb_self: &Self) -> Option<StaticSymbol> {
        rb_self
            .decision
            .rejection()
            .map(|rejection| ruby.sym_new(rejection.as_str()))
    }

    fn is_granted(&self) -> bool {
        self.decision.is_granted()
    }

    fn is_renewed(&self) -> bool {
        self.decision.is_renewed()
    }

    fn is_released(&self) -> bool {
        self.decision.is_released()
    }

    fn is_rejected(&self) -> bool {
        self.decision.is_rejected()
    }
}

impl CheckpointObj {
    /// `Checkpoint._new(last_issued, lease, observed)`: `observed` in seconds.
    fn build(
        ruby: &Ruby,
        class: RClass,
        last_issued: Value,
        lease: Value,
        observed: Value,
    ) -> Result<Value, Error> {
        let observed = convert::time_arg(ruby, observed, "observed")?;
        build_checkpoint(ruby, class, last_issued, lease, observed)
    }

    /// `Checkpoint._exact(last_issued, lease, observed_ns)`: exact nanoseconds.
    fn exact(
        ruby: &Ruby,
        class: RClass,
        last_issued: Value,
        lease: Value,
        observed_ns: Value,
    ) -> Result<Value, Error> {
        let observed = convert::nanos_arg(ruby, observed_ns, "observed_ns")?;
        build_checkpoint(ruby, class, last_issued, lease, observed)
    }

    fn last_issued(&self) -> Option<u64> {
        self.checkpoint.last_issued().map(FencingToken::value)
    }

    fn lease(ruby: &Ruby, rb_self: &Self) -> Option<Value> {
        rb_self.lease.map(|lease| ruby.get_inner(lease))
    }

    fn observed_ns(ruby: &Ruby, rb_self: &Self) -> magnus::Integer {
        convert::nanos_value(ruby, rb_self.checkpoint.observed())
    }

    fn observed(&self) -> f64 {
        convert::secs_value(self.checkpoint.observed())
    }
}

/// Defines the three value classes and the shared decisions.
pub fn define(ruby: &Ruby, root: RModule) -> Result<(), Error> {
    use magnus::{method, Class};

    let lease = root.define_class("Lease", ruby.class_object())?;
    lease.undef_default_alloc_func();
    lease.define_singleton_method("_new", method!(LeaseObj::build, 3))?;
    lease.define_singleton_method("_exact", method!(LeaseObj::exact, 3))?;
    lease.define_method("owner", method!(LeaseObj::owner, 0))?;
    lease.define_method("token", method!(LeaseObj::token, 0))?;
    lease.define_method("expires_at_ns", method!(LeaseObj::expires_at_ns, 0))?;
    lease.define_method("expires_at", method!(LeaseObj::expires_at, 0))?;
    lease.define_method("expired?", method!(LeaseObj::is_expired, 1))?;

    let decision = root.define_class("Decision", ruby.class_object())?;
    decision.undef_default_alloc_func();
    decision.define_singleton_method("_new", method!(DecisionObj::build, 3))?;
    decision.define_method("status", method!(DecisionObj::status, 0))?;
    decision.define_method("lease", method!(DecisionObj::lease, 0))?;
    decision.define_method("reason", method!(DecisionObj::reason, 0))?;
    decision.define_method("granted?", method!(DecisionObj::is_granted, 0))?;
    decision.define_method("renewed?", method!(DecisionObj::is_renewed, 0))?;
    decision.define_method("released?", method!(DecisionObj::is_released, 0))?;
    decision.define_method("rejected?", method!(DecisionObj::is_rejected, 0))?;

    let checkpoint = root.define_class("Checkpoint", ruby.class_object())?;
    checkpoint.undef_default_alloc_func();
    checkpoint.define_singleton_method("_new", method!(CheckpointObj::build, 3))?;
    checkpoint.define_singleton_method("_exact", method!(CheckpointObj::exact, 3))?;
    checkpoint.define_method("last_issued", method!(CheckpointObj::last_issued, 0))?;
    checkpoint.define_method("lease", method!(CheckpointObj::lease, 0))?;
    checkpoint.define_method("observed_ns", method!(CheckpointObj::observed_ns, 0))?;
    checkpoint.define_method("observed", method!(CheckpointObj::observed, 0))?;

    let released = frozen(
        ruby,
        DecisionObj {
            decision: Decision::Released,
            lease: None,
        },
    );
    let rejections = Rejection::ALL.map(|rejection| {
        frozen(
            ruby,
            DecisionObj {
                decision: Decision::Rejected(rejection),
                lease: None,
            },
        )
    });
    let list = RArray::from_iter(rejections);
    list.freeze();
    decision.const_set("RELEASED", released)?;
    decision.const_set("REJECTIONS", list)?;
    ruby.gc_register_mark_object(released);
    for value in rejections {
        ruby.gc_register_mark_object(value);
    }
    // A second load of the extension keeps the first set (the constants warn).
    let _ = SHARED.set(Shared {
        released: released.into(),
        rejections: rejections.map(Opaque::from),
    });
    Ok(())
}
