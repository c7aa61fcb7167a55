//! `LeaseMachines::Decision`: a frozen TypedData holding the core's decision
//! and, for a grant or renewal, its `Lease` object (kept alive by `mark`).
//! `lib/lease_machines/decision.rb` adds value semantics on top of the
//! readers defined here.
//!
//! Releases and rejections are nine shared frozen decisions made once at load
//! (`Decision::RELEASED`, `Decision::REJECTIONS`): answering them allocates
//! nothing. `Decision::STATUSES` and `Decision::REASONS` (in the order of the
//! core's `Rejection::ALL`) are defined here too, so Ruby never keeps a copy.

use std::sync::OnceLock;

use lease_machines::{Decision, Rejection};
use magnus::{
    gc::Marker, method, prelude::*, typed_data::DataTypeFunctions, value::Opaque, Error, RArray,
    RClass, RModule, Ruby, StaticSymbol, Symbol, Value,
};

use crate::{
    classes::ClassSlot,
    errors::{self, Failure},
    lease::{self, LeaseRef},
};

/// The statuses, in the order of `Decision::STATUSES`.
const STATUSES: [&str; 4] = ["granted", "renewed", "released", "rejected"];

/// A `Decision` object.
#[derive(magnus::TypedData)]
#[magnus(class = "LeaseMachines::Decision", free_immediately, size, mark)]
struct DecisionObj {
    decision: Decision,
    lease: LeaseRef,
}

impl DataTypeFunctions for DecisionObj {
    fn mark(&self, marker: &Marker) {
        self.lease.mark(marker);
    }
}

static CLASS: ClassSlot = ClassSlot::new();

/// The shared decisions, made once by `define`.
struct Shared {
    released: Opaque<Value>,
    rejections: [Opaque<Value>; Rejection::ALL.len()],
}

static SHARED: OnceLock<Shared> = OnceLock::new();

/// The name of a decision's status.
const fn status(decision: &Decision) -> &'static str {
    match decision {
        Decision::Granted(_) => "granted",
        Decision::Renewed(_) => "renewed",
        Decision::Released => "released",
        Decision::Rejected(_) => "rejected",
    }
}

/// The answer to a decision: a new frozen `Decision` for grants and renewals
/// (with its `Lease`: two allocations), a shared one otherwise (none).
pub fn value(ruby: &Ruby, decision: Decision) -> Result<Value, Error> {
    match decision {
        Decision::Granted(granted) | Decision::Renewed(granted) => {
            let lease = LeaseRef::made(ruby, Some(granted))?;
            CLASS.frozen(ruby, DecisionObj { decision, lease })
        }
        Decision::Released => shared(ruby).map(|shared| ruby.get_inner(shared.released)),
        Decision::Rejected(rejection) => shared(ruby).and_then(|shared| {
            shared
                .rejections
                .get(rejection as usize)
                .map(|value| ruby.get_inner(*value))
                .ok_or_else(|| {
                    errors::raise(ruby, Failure::Runtime("unknown rejection".to_owned()))
                })
        }),
    }
}

fn shared(ruby: &Ruby) -> Result<&'static Shared, Error> {
    SHARED.get().ok_or_else(|| errors::not_loaded(ruby))
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
            "granted" => Decision::Granted(lease::from_value(ruby, lease, "lease")?),
            "renewed" => Decision::Renewed(lease::from_value(ruby, lease, "lease")?),
            "released" => Decision::Released,
            "rejected" => {
                let reason = Symbol::from_value(reason).and_then(|symbol| symbol.name().ok());
                let rejection = Rejection::ALL
                    .into_iter()
                    .find(|rejection| reason.as_deref() == Some(rejection.as_str()))
                    .ok_or_else(|| {
                        errors::raise(
                            ruby,
                            Failure::Argument("unknown rejection reason".to_owned()),
                        )
                    })?;
                Decision::Rejected(rejection)
            }
            _ => {
                return Err(errors::raise(
                    ruby,
                    Failure::Argument("unknown decision status".to_owned()),
                ))
            }
        };
        let lease = match decision.lease() {
            Some(_) => LeaseRef::given(lease),
            None => LeaseRef::NONE,
        };
        CLASS.frozen_in(ruby, Self { decision, lease }, class)
    }

    fn status(ruby: &Ruby, rb_self: &Self) -> StaticSymbol {
        ruby.sym_new(status(&rb_self.decision))
    }

    fn lease(ruby: &Ruby, rb_self: &Self) -> Option<Value> {
        rb_self.lease.get(ruby)
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

/// A frozen Array of Symbols.
fn symbols(ruby: &Ruby, names: impl IntoIterator<Item = &'static str>) -> RArray {
    let list = RArray::from_iter(names.into_iter().map(|name| ruby.sym_new(name)));
    list.freeze();
    list
}

/// Defines `LeaseMachines::Decision`'s native methods, its shared decisions
/// and its lists of statuses and reasons.
pub fn define(ruby: &Ruby, root: RModule) -> Result<(), Error> {
    let class = root.define_class("Decision", ruby.class_object())?;
    CLASS.define::<DecisionObj>(ruby, class)?;
    class.define_singleton_method("_new", method!(DecisionObj::build, 3))?;
    class.define_method("status", method!(DecisionObj::status, 0))?;
    class.define_method("lease", method!(DecisionObj::lease, 0))?;
    class.define_method("reason", method!(DecisionObj::reason, 0))?;
    class.define_method("granted?", method!(DecisionObj::is_granted, 0))?;
    class.define_method("renewed?", method!(DecisionObj::is_renewed, 0))?;
    class.define_method("released?", method!(DecisionObj::is_released, 0))?;
    class.define_method("rejected?", method!(DecisionObj::is_rejected, 0))?;

    class.const_set("STATUSES", symbols(ruby, STATUSES))?;
    class.const_set(
        "REASONS",
        symbols(ruby, Rejection::ALL.map(Rejection::as_str)),
    )?;

    let shared = |decision| {
        let lease = LeaseRef::NONE;
        CLASS.frozen(ruby, DecisionObj { decision, lease })
    };
    let released = shared(Decision::Released)?;
    let mut rejections = [released; Rejection::ALL.len()];
    for (slot, rejection) in rejections.iter_mut().zip(Rejection::ALL) {
        *slot = shared(Decision::Rejected(rejection))?;
    }
    let list = RArray::from_iter(rejections);
    list.freeze();
    class.const_set("RELEASED", released)?;
    class.const_set("REJECTIONS", list)?;
    ruby.gc_register_mark_object(released);
    for value in rejections {
        ruby.gc_register_mark_object(value);
    }
    // A second load of the library keeps the first set (the constants warn).
    let _ = SHARED.set(Shared {
        released: released.into(),
        rejections: rejections.map(Opaque::from),
    });
    Ok(())
}
