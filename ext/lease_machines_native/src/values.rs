//! The Ruby value objects (`Decision`, `Lease`, `Checkpoint`) are plain Ruby
//! classes defined in `lib/`; this module builds them without running
//! `initialize` (the values come from the core and are valid by construction),
//! and reads them back.

use std::sync::OnceLock;

use lease_machines::{Checkpoint, Decision, Lease, OwnerId, Rejection};
use magnus::{
    value::{LazyId, Opaque, ReprValue},
    Class, Error, IntoValue, Object, RArray, RClass, Ruby, StaticSymbol, Symbol, Value,
};

use crate::convert;

/// What `lib/lease_machines.rb` hands over once at load time.
struct Registry {
    lease: Opaque<RClass>,
    decision: Opaque<RClass>,
    checkpoint: Opaque<RClass>,
    /// Frozen shared decisions, one per `Rejection`, in `Rejection::ALL` order.
    rejections: [Opaque<Value>; 8],
    released: Opaque<Value>,
    /// `:granted` and `:renewed`, interned once (static symbols are never
    /// collected): interning the name on every grant was an eighth of its cost.
    granted: Opaque<StaticSymbol>,
    renewed: Opaque<StaticSymbol>,
}

static REGISTRY: OnceLock<Registry> = OnceLock::new();

/// `LeaseMachines::Native.register(lease, decision, checkpoint, rejections, released)`.
pub fn register(
    ruby: &Ruby,
    lease: RClass,
    decision: RClass,
    checkpoint: RClass,
    rejections: RArray,
    released: Value,
) -> Result<(), Error> {
    let mut shared = [Opaque::from(ruby.qnil().as_value()); 8];
    if rejections.len() != shared.len() {
        return Err(Error::new(
            ruby.exception_arg_error(),
            format!(
                "expected {} rejection decisions, got {}",
                shared.len(),
                rejections.len()
            ),
        ));
    }
    for ((index, slot), rejection) in shared.iter_mut().enumerate().zip(Rejection::ALL) {
        let value: Value = rejections.entry(isize::try_from(index).unwrap_or(isize::MAX))?;
        let reason: Value = value.funcall("reason", ())?;
        let name = Symbol::from_value(reason).and_then(|symbol| symbol.name().ok());
        if name.as_deref() != Some(rejection.as_str()) {
            return Err(Error::new(
                ruby.exception_arg_error(),
                format!(
                    "rejection decision {index} must have reason :{}, got {}",
                    rejection.as_str(),
                    reason.inspect()
                ),
            ));
        }
        ruby.gc_register_mark_object(value);
        *slot = Opaque::from(value);
    }
    ruby.gc_register_mark_object(released);
    for class in [lease, decision, checkpoint] {
        ruby.gc_register_mark_object(class);
    }
    REGISTRY
        .set(Registry {
            lease: lease.into(),
            decision: decision.into(),
            checkpoint: checkpoint.into(),
            rejections: shared,
            released: released.into(),
            granted: ruby.sym_new("granted").into(),
            renewed: ruby.sym_new("renewed").into(),
        })
        .map_err(|_| {
            Error::new(
                ruby.exception_runtime_error(),
                "lease_machines is already registered",
            )
        })
}

fn registry(ruby: &Ruby) -> Result<&'static Registry, Error> {
    REGISTRY.get().ok_or_else(|| {
        Error::new(
            ruby.exception_runtime_error(),
            "lease_machines_native was loaded without lib/lease_machines.rb; require \"lease_machines\"",
        )
    })
}

static ID_OWNER: LazyId = LazyId::new("@owner");
static ID_TOKEN: LazyId = LazyId::new("@token");
static ID_EXPIRES_AT_NS: LazyId = LazyId::new("@expires_at_ns");
static ID_STATUS: LazyId = LazyId::new("@status");
static ID_LEASE: LazyId = LazyId::new("@lease");
static ID_REASON: LazyId = LazyId::new("@reason");
static ID_LAST_ISSUED: LazyId = LazyId::new("@last_issued");
static ID_OBSERVED_NS: LazyId = LazyId::new("@observed_ns");

/// Sets the ivars of a (fresh) `Lease` object from a core lease.
pub fn fill_lease(ruby: &Ruby, object: Value, lease: Lease) -> Result<(), Error> {
    let object = magnus::RObject::from_value(object).ok_or_else(|| {
        Error::new(
            ruby.exception_type_error(),
            "a Lease must be a plain Ruby object",
        )
    })?;
    object.ivar_set(
        LazyId::get_inner_with(&ID_OWNER, ruby),
        lease.owner().value(),
    )?;
    object.ivar_set(
        LazyId::get_inner_with(&ID_TOKEN, ruby),
        lease.token().value(),
    )?;
    object.ivar_set(
        LazyId::get_inner_with(&ID_EXPIRES_AT_NS, ruby),
        convert::nanos_value(ruby, lease.expires_at()),
    )?;
    Ok(())
}

/// A new frozen `LeaseMachines::Lease`.
pub fn lease_value(ruby: &Ruby, lease: Lease) -> Result<Value, Error> {
    let class = ruby.get_inner(registry(ruby)?.lease);
    let object = class.obj_alloc()?;
    fill_lease(ruby, object, lease)?;
    object.freeze();
    Ok(object)
}

/// Reads a `LeaseMachines::Lease` back into a core lease.
pub fn lease_from(ruby: &Ruby, value: Value, name: &str) -> Result<Lease, Error> {
    let class = ruby.get_inner(registry(ruby)?.lease);
    let object = magnus::RObject::from_value(value)
        .filter(|object| object.is_kind_of(class))
        .ok_or_else(|| {
            Error::new(
                ruby.exception_type_error(),
                format!(
                    "{name} must be a LeaseMachines::Lease, got {}",
                    value.inspect()
                ),
            )
        })?;
    let owner = convert::u64_arg(
        ruby,
        object.ivar_get(LazyId::get_inner_with(&ID_OWNER, ruby))?,
        "lease.owner",
    )?;
    let token = convert::issued_token(
        ruby,
        object.ivar_get(LazyId::get_inner_with(&ID_TOKEN, ruby))?,
        "lease.token",
    )?;
    let expires_at = convert::nanos_arg(
        ruby,
        object.ivar_get(LazyId::get_inner_with(&ID_EXPIRES_AT_NS, ruby))?,
        "lease.expires_at_ns",
    )?;
    Ok(Lease::new(OwnerId::new(owner), token, expires_at))
}

/// A `Decision` object: a fresh frozen one for grants and renewals, a shared
/// frozen one for releases and rejections (which allocate nothing).
pub fn decision_value(ruby: &Ruby, decision: Decision) -> Result<Value, Error> {
    let registry = registry(ruby)?;
    let (status, lease) = match decision {
        Decision::Granted(lease) => (registry.granted, lease),
        Decision::Renewed(lease) => (registry.renewed, lease),
        Decision::Released => return Ok(ruby.get_inner(registry.released)),
        Decision::Rejected(rejection) => {
            let index = rejection as usize;
            return registry
                .rejections
                .get(index)
                .map(|value| ruby.get_inner(*value))
                .ok_or_else(|| Error::new(ruby.exception_runtime_error(), "unknown rejection"));
        }
    };
    let lease = lease_value(ruby, lease)?;
    let object = ruby.get_inner(registry.decision).obj_alloc()?;
    let robject = magnus::RObject::from_value(object).ok_or_else(|| {
        Error::new(
            ruby.exception_type_error(),
            "a Decision must be a plain Ruby object",
        )
    })?;
    robject.ivar_set(
        LazyId::get_inner_with(&ID_STATUS, ruby),
        ruby.get_inner(status),
    )?;
    robject.ivar_set(LazyId::get_inner_with(&ID_LEASE, ruby), lease)?;
    robject.ivar_set(LazyId::get_inner_with(&ID_REASON, ruby), ruby.qnil())?;
    object.freeze();
    Ok(object)
}

/// Sets the ivars of a (fresh) `Checkpoint` object.
pub fn fill_checkpoint(ruby: &Ruby, object: Value, checkpoint: Checkpoint) -> Result<(), Error> {
    let robject = magnus::RObject::from_value(object).ok_or_else(|| {
        Error::new(
            ruby.exception_type_error(),
            "a Checkpoint must be a plain Ruby object",
        )
    })?;
    let last_issued = checkpoint
        .last_issued()
        .map(|token| token.value())
        .into_value_with(ruby);
    let lease = match checkpoint.lease() {
        Some(lease) => lease_value(ruby, lease)?,
        None => ruby.qnil().as_value(),
    };
    robject.ivar_set(LazyId::get_inner_with(&ID_LAST_ISSUED, ruby), last_issued)?;
    robject.ivar_set(LazyId::get_inner_with(&ID_LEASE, ruby), lease)?;
    robject.ivar_set(
        LazyId::get_inner_with(&ID_OBSERVED_NS, ruby),
        convert::nanos_value(ruby, checkpoint.observed()),
    )?;
    Ok(())
}

/// A new frozen `LeaseMachines::Checkpoint`.
pub fn checkpoint_value(ruby: &Ruby, checkpoint: Checkpoint) -> Result<Value, Error> {
    let object = ruby.get_inner(registry(ruby)?.checkpoint).obj_alloc()?;
    fill_checkpoint(ruby, object, checkpoint)?;
    object.freeze();
    Ok(object)
}

/// Reads a `LeaseMachines::Checkpoint` back into a core checkpoint.
pub fn checkpoint_from(ruby: &Ruby, value: Value, name: &str) -> Result<Checkpoint, Error> {
    let class = ruby.get_inner(registry(ruby)?.checkpoint);
    let object = magnus::RObject::from_value(value)
        .filter(|object| object.is_kind_of(class))
        .ok_or_else(|| {
            Error::new(
                ruby.exception_type_error(),
                format!(
                    "{name} must be a LeaseMachines::Checkpoint, got {}",
                    value.inspect()
                ),
            )
        })?;
    let last_issued = convert::optional_token(
        ruby,
        object.ivar_get(LazyId::get_inner_with(&ID_LAST_ISSUED, ruby))?,
        "checkpoint.last_issued",
    )?;
    let lease_value: Value = object.ivar_get(LazyId::get_inner_with(&ID_LEASE, ruby))?;
    let lease = if lease_value.is_nil() {
        None
    } else {
        Some(lease_from(ruby, lease_value, "checkpoint.lease")?)
    };
    let observed = convert::nanos_arg(
        ruby,
        object.ivar_get(LazyId::get_inner_with(&ID_OBSERVED_NS, ruby))?,
        "checkpoint.observed_ns",
    )?;
    Checkpoint::from_parts(last_issued, lease, observed)
        .ok_or_else(|| inconsistent(ruby, last_issued.map(|t| t.value()), lease))
}

/// The error for parts that cannot come from one history.
pub fn inconsistent(ruby: &Ruby, last_issued: Option<u64>, lease: Option<Lease>) -> Error {
    let token = lease.map_or(0, |lease| lease.token().value());
    let mark = last_issued.map_or_else(|| "nil".to_owned(), |v| v.to_string());
    Error::new(
        ruby.exception_arg_error(),
        format!(
            "inconsistent checkpoint: lease token {token} was never issued (last_issued is {mark})"
        ),
    )
}
