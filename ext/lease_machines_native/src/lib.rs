//! `lease_machines_native`: the Ruby extension over the `lease-machines` core.
//!
//! Every decision is made by the core. This crate only converts arguments
//! (strictly: no coercion, errors that name the argument and the value) and
//! shapes results into the Ruby value objects defined in `lib/`.
//!
//! No method can panic: state lives in a `Cell` of a `Copy` core type, read,
//! changed and written back with no Ruby call in between, so there is no
//! borrow to double and no re-entrancy while the state is out.

// `#[magnus::init]` generates the undocumented `Init_lease_machines_native`.
#![allow(missing_docs)]

use std::cell::Cell;
use std::time::Duration;

use lease_machines::{
    Cadence as CoreCadence, Decision, Fence as CoreFence, Holder as CoreHolder, HolderState,
    LeaseAuthority, OwnerId,
};
use magnus::{
    function, method, prelude::*, typed_data::Obj, Error, RModule, Ruby, StaticSymbol, Value,
};

mod convert;
mod stored;
mod values;

/// `LeaseMachines::Authority`: one resource's decision engine.
#[derive(Default)]
#[magnus::wrap(class = "LeaseMachines::Authority", free_immediately, size)]
struct Authority {
    state: Cell<LeaseAuthority>,
    ready: Cell<bool>,
}

/// Refuses a second `initialize` (or `initialize_copy`) on a live object:
/// re-initializing an authority would start its history over and reissue
/// tokens; a fence would forget its mark.
fn first_init(ruby: &Ruby, ready: &Cell<bool>, class: &str) -> Result<(), Error> {
    if ready.get() {
        return Err(Error::new(
            ruby.exception_runtime_error(),
            format!("LeaseMachines::{class} is already initialized; it cannot start over"),
        ));
    }
    Ok(())
}

impl Authority {
    fn init(ruby: &Ruby, rb_self: Obj<Self>, policy: Value) -> Result<(), Error> {
        rb_self.check_frozen()?;
        first_init(ruby, &rb_self.ready, "Authority")?;
        let policy = convert::clock_policy_arg(ruby, policy)?;
        rb_self
            .state
            .set(LeaseAuthority::new().with_clock_policy(policy));
        rb_self.ready.set(true);
        Ok(())
    }

    fn restore(
        ruby: &Ruby,
        rb_self: Obj<Self>,
        checkpoint: Value,
        policy: Value,
    ) -> Result<(), Error> {
        rb_self.check_frozen()?;
        first_init(ruby, &rb_self.ready, "Authority")?;
        let checkpoint = values::checkpoint_from(ruby, checkpoint, "checkpoint")?;
        let policy = convert::clock_policy_arg(ruby, policy)?;
        rb_self
            .state
            .set(LeaseAuthority::restore(checkpoint).with_clock_policy(policy));
        rb_self.ready.set(true);
        Ok(())
    }

    fn initialize_copy(ruby: &Ruby, rb_self: Obj<Self>, other: Obj<Self>) -> Result<(), Error> {
        rb_self.check_frozen()?;
        first_init(ruby, &rb_self.ready, "Authority")?;
        rb_self.state.set(other.state.get());
        rb_self.ready.set(true);
        Ok(())
    }

    /// Runs one decision on a copy of the state and stores it back.
    fn decide(
        ruby: &Ruby,
        rb_self: Obj<Self>,
        decide: impl FnOnce(&mut LeaseAuthority) -> Decision,
    ) -> Result<Value, Error> {
        rb_self.check_frozen()?;
        let mut authority = rb_self.state.get();
        let decision = decide(&mut authority);
        rb_self.state.set(authority);
        values::decision_value(ruby, decision)
    }

    /// `acquire` and `reacquire`: the same arguments, a different rule.
    fn grant(
        ruby: &Ruby,
        rb_self: Obj<Self>,
        [owner, now, ttl]: [Value; 3],
        rule: fn(&mut LeaseAuthority, OwnerId, Duration, Duration) -> Decision,
    ) -> Result<Value, Error> {
        let owner = OwnerId::new(convert::u64_arg(ruby, owner, "owner")?);
        let now = convert::time_arg(ruby, now, "now")?;
        let ttl = convert::time_arg(ruby, ttl, "ttl")?;
        Self::decide(ruby, rb_self, |a| rule(a, owner, now, ttl))
    }

    fn acquire(
        ruby: &Ruby,
        rb_self: Obj<Self>,
        owner: Value,
        now: Value,
        ttl: Value,
    ) -> Result<Value, Error> {
        Self::grant(ruby, rb_self, [owner, now, ttl], LeaseAuthority::acquire)
    }

    fn reacquire(
        ruby: &Ruby,
        rb_self: Obj<Self>,
        owner: Value,
        now: Value,
        ttl: Value,
    ) -> Result<Value, Error> {
        Self::grant(ruby, rb_self, [owner, now, ttl], LeaseAuthority::reacquire)
    }

    fn renew(
        ruby: &Ruby,
        rb_self: Obj<Self>,
        owner: Value,
        token: Value,
        now: Value,
        ttl: Value,
    ) -> Result<Value, Error> {
        let owner = OwnerId::new(convert::u64_arg(ruby, owner, "owner")?);
        let token = convert::presented_token(ruby, token, "token")?;
        let now = convert::time_arg(ruby, now, "now")?;
        let ttl = convert::time_arg(ruby, ttl, "ttl")?;
        Self::decide(ruby, rb_self, |a| a.renew(owner, token, now, ttl))
    }

    fn release(
        ruby: &Ruby,
        rb_self: Obj<Self>,
        owner: Value,
        token: Value,
        now: Value,
    ) -> Result<Value, Error> {
        let owner = OwnerId::new(convert::u64_arg(ruby, owner, "owner")?);
        let token = convert::presented_token(ruby, token, "token")?;
        let now = convert::time_arg(ruby, now, "now")?;
        Self::decide(ruby, rb_self, |a| a.release(owner, token, now))
    }

    fn checkpoint(ruby: &Ruby, rb_self: Obj<Self>) -> Value {
        values::checkpoint_value(ruby, rb_self.state.get().checkpoint())
    }

    fn clock_policy(ruby: &Ruby, rb_self: Obj<Self>) -> StaticSymbol {
        convert::clock_policy_value(ruby, rb_self.state.get().clock_policy())
    }
}

/// `LeaseMachines::Fence`: the high-water mark at the protected resource.
#[derive(Default)]
#[magnus::wrap(class = "LeaseMachines::Fence", free_immediately, size)]
struct Fence {
    state: Cell<CoreFence>,
    ready: Cell<bool>,
}

impl Fence {
    fn init(ruby: &Ruby, rb_self: Obj<Self>, highest: Value) -> Result<(), Error> {
        rb_self.check_frozen()?;
        first_init(ruby, &rb_self.ready, "Fence")?;
        let highest = convert::optional_token(ruby, highest, "highest")?;
        rb_self.state.set(CoreFence::new(highest));
        rb_self.ready.set(true);
        Ok(())
    }

    fn initialize_copy(ruby: &Ruby, rb_self: Obj<Self>, other: Obj<Self>) -> Result<(), Error> {
        rb_self.check_frozen()?;
        first_init(ruby, &rb_self.ready, "Fence")?;
        rb_self.state.set(other.state.get());
        rb_self.ready.set(true);
        Ok(())
    }

    fn accept(ruby: &Ruby, rb_self: Obj<Self>, token: Value) -> Result<bool, Error> {
        let token = convert::presented_token(ruby, token, "token")?;
        rb_self.check_frozen()?;
        let mut fence = rb_self.state.get();
        let accepted = fence.accept(token);
        rb_self.state.set(fence);
        Ok(accepted)
    }

    fn highest(rb_self: Obj<Self>) -> Option<u64> {
        rb_self.state.get().highest().map(|token| token.value())
    }
}

/// `LeaseMachines::Cadence`: immutable once initialized.
#[derive(Default)]
#[magnus::wrap(class = "LeaseMachines::Cadence", free_immediately, size)]
struct Cadence(Cell<Option<CoreCadence>>);

fn uninitialized(ruby: &Ruby, class: &str) -> Error {
    Error::new(
        ruby.exception_type_error(),
        format!("uninitialized LeaseMachines::{class}"),
    )
}

impl Cadence {
    fn init(
        ruby: &Ruby,
        rb_self: Obj<Self>,
        ttl: Value,
        renew_after: Value,
        warn_before: Value,
    ) -> Result<(), Error> {
        rb_self.check_frozen()?;
        if rb_self.0.get().is_some() {
            return Err(Error::new(
                ruby.exception_frozen_error(),
                "a Cadence is immutable",
            ));
        }
        let ttl_d = convert::time_arg(ruby, ttl, "ttl")?;
        let renew_d = convert::time_arg(ruby, renew_after, "renew_after")?;
        let warn_d = convert::time_arg(ruby, warn_before, "warn_before")?;
        let cadence = CoreCadence::new(ttl_d, renew_d, warn_d).ok_or_else(|| {
            Error::new(
                ruby.exception_arg_error(),
                format!(
                    "invalid cadence (ttl: {}, renew_after: {}, warn_before: {}): need ttl > 0, renew_after > 0, warn_before < ttl and renew_after <= ttl - warn_before",
                    ttl.inspect(),
                    renew_after.inspect(),
                    warn_before.inspect()
                ),
            )
        })?;
        rb_self.0.set(Some(cadence));
        Ok(())
    }

    fn get(ruby: &Ruby, rb_self: &Self) -> Result<CoreCadence, Error> {
        rb_self
            .0
            .get()
            .ok_or_else(|| uninitialized(ruby, "Cadence"))
    }

    fn ttl(ruby: &Ruby, rb_self: Obj<Self>) -> Result<f64, Error> {
        Ok(convert::secs_value(Self::get(ruby, &rb_self)?.ttl()))
    }

    fn renew_after(ruby: &Ruby, rb_self: Obj<Self>) -> Result<f64, Error> {
        Ok(convert::secs_value(
            Self::get(ruby, &rb_self)?.renew_after(),
        ))
    }

    fn warn_before(ruby: &Ruby, rb_self: Obj<Self>) -> Result<f64, Error> {
        Ok(convert::secs_value(
            Self::get(ruby, &rb_self)?.warn_before(),
        ))
    }
}

/// `LeaseMachines::Holder`: the worker's side of one lease.
#[derive(Default)]
#[magnus::wrap(class = "LeaseMachines::Holder", free_immediately, size)]
struct Holder(Cell<Option<CoreHolder>>);

impl Holder {
    fn init(
        ruby: &Ruby,
        rb_self: Obj<Self>,
        token: Value,
        at: Value,
        cadence: Value,
    ) -> Result<(), Error> {
        rb_self.check_frozen()?;
        let token = convert::issued_token(ruby, token, "token")?;
        let at = convert::time_arg(ruby, at, "at")?;
        let cadence = Obj::<Cadence>::try_convert(cadence).map_err(|_| {
            Error::new(
                ruby.exception_type_error(),
                format!(
                    "cadence must be a LeaseMachines::Cadence, got {}",
                    cadence.inspect()
                ),
            )
        })?;
        let cadence = Cadence::get(ruby, &cadence)?;
        if rb_self.0.get().is_some() {
            return Err(Error::new(
                ruby.exception_runtime_error(),
                "LeaseMachines::Holder is already initialized; it cannot start over",
            ));
        }
        rb_self.0.set(Some(CoreHolder::new(token, at, cadence)));
        Ok(())
    }

    fn initialize_copy(ruby: &Ruby, rb_self: Obj<Self>, other: Obj<Self>) -> Result<(), Error> {
        rb_self.check_frozen()?;
        if rb_self.0.get().is_some() {
            return Err(Error::new(
                ruby.exception_runtime_error(),
                "LeaseMachines::Holder is already initialized; it cannot start over",
            ));
        }
        rb_self.0.set(other.0.get());
        Ok(())
    }

    fn get(ruby: &Ruby, rb_self: &Self) -> Result<CoreHolder, Error> {
        rb_self.0.get().ok_or_else(|| uninitialized(ruby, "Holder"))
    }

    /// Runs one transition on a copy of the state and stores it back.
    fn change(
        ruby: &Ruby,
        rb_self: Obj<Self>,
        change: impl FnOnce(&mut CoreHolder) -> bool,
    ) -> Result<bool, Error> {
        rb_self.check_frozen()?;
        let mut holder = Self::get(ruby, &rb_self)?;
        let changed = change(&mut holder);
        rb_self.0.set(Some(holder));
        Ok(changed)
    }

    fn state(ruby: &Ruby, rb_self: Obj<Self>) -> Result<StaticSymbol, Error> {
        let name = match Self::get(ruby, &rb_self)?.state() {
            HolderState::Confirmed => "confirmed",
            HolderState::Unconfirmed => "unconfirmed",
            HolderState::AtRisk => "at_risk",
            HolderState::Expired => "expired",
            HolderState::Fenced => "fenced",
        };
        Ok(ruby.sym_new(name))
    }

    fn token(ruby: &Ruby, rb_self: Obj<Self>) -> Result<u64, Error> {
        Ok(Self::get(ruby, &rb_self)?.token().value())
    }

    fn confirmed_at(ruby: &Ruby, rb_self: Obj<Self>) -> Result<f64, Error> {
        Ok(convert::secs_value(
            Self::get(ruby, &rb_self)?.confirmed_at(),
        ))
    }

    fn warning_deadline(ruby: &Ruby, rb_self: Obj<Self>) -> Result<Option<f64>, Error> {
        Ok(Self::get(ruby, &rb_self)?
            .warning_deadline()
            .map(convert::secs_value))
    }

    fn renewal_due(ruby: &Ruby, rb_self: Obj<Self>, at: Value) -> Result<bool, Error> {
        let at = convert::time_arg(ruby, at, "at")?;
        Ok(Self::get(ruby, &rb_self)?.renewal_due(at))
    }

    fn at_risk(ruby: &Ruby, rb_self: Obj<Self>, at: Value) -> Result<bool, Error> {
        let at = convert::time_arg(ruby, at, "at")?;
        Ok(Self::get(ruby, &rb_self)?.at_risk(at))
    }

    fn refresh(ruby: &Ruby, rb_self: Obj<Self>, at: Value) -> Result<bool, Error> {
        let at = convert::time_arg(ruby, at, "at")?;
        Self::change(ruby, rb_self, |h| h.refresh(at))
    }

    fn confirm(ruby: &Ruby, rb_self: Obj<Self>, token: Value, at: Value) -> Result<bool, Error> {
        let token = convert::presented_token(ruby, token, "token")?;
        let at = convert::time_arg(ruby, at, "at")?;
        // Token 0 was never issued: older than any current token, a stale reply.
        Self::change(ruby, rb_self, |h| token.is_some_and(|t| h.confirm(t, at)))
    }

    fn reacquire(ruby: &Ruby, rb_self: Obj<Self>, token: Value, at: Value) -> Result<bool, Error> {
        let token = convert::presented_token(ruby, token, "token")?;
        let at = convert::time_arg(ruby, at, "at")?;
        Self::change(ruby, rb_self, |h| token.is_some_and(|t| h.reacquire(t, at)))
    }

    fn expire(ruby: &Ruby, rb_self: Obj<Self>) -> Result<bool, Error> {
        Self::change(ruby, rb_self, CoreHolder::expire)
    }

    fn fence(ruby: &Ruby, rb_self: Obj<Self>) -> Result<bool, Error> {
        Self::change(ruby, rb_self, CoreHolder::fence)
    }
}

/// `LeaseMachines::Native.nanos(time, name)`: a time argument in exact
/// nanoseconds, with the same checks and messages as every other time argument.
fn nanos(ruby: &Ruby, time: Value, name: String) -> Result<magnus::Integer, Error> {
    Ok(convert::nanos_value(
        ruby,
        convert::time_arg(ruby, time, &name)?,
    ))
}

#[magnus::init]
fn init(ruby: &Ruby) -> Result<(), Error> {
    let root: RModule = ruby.define_module("LeaseMachines")?;
    let native = root.define_module("Native")?;
    native.define_module_function("nanos", function!(nanos, 2))?;
    native.define_module_function("decide_row", function!(stored::decide_row, 7))?;
    native.define_module_function("stored_checkpoint", function!(stored::stored_checkpoint, 2))?;

    values::define(ruby, root)?;

    let authority = root.define_class("Authority", ruby.class_object())?;
    authority.define_alloc_func::<Authority>();
    authority.define_private_method("_init", method!(Authority::init, 1))?;
    authority.define_private_method("_restore", method!(Authority::restore, 2))?;
    authority.define_private_method("initialize_copy", method!(Authority::initialize_copy, 1))?;
    authority.define_private_method("_acquire", method!(Authority::acquire, 3))?;
    authority.define_private_method("_reacquire", method!(Authority::reacquire, 3))?;
    authority.define_private_method("_renew", method!(Authority::renew, 4))?;
    authority.define_private_method("_release", method!(Authority::release, 3))?;
    authority.define_method("checkpoint", method!(Authority::checkpoint, 0))?;
    authority.define_method("clock_policy", method!(Authority::clock_policy, 0))?;

    let fence = root.define_class("Fence", ruby.class_object())?;
    fence.define_alloc_func::<Fence>();
    fence.define_private_method("_init", method!(Fence::init, 1))?;
    fence.define_private_method("initialize_copy", method!(Fence::initialize_copy, 1))?;
    fence.define_method("accept", method!(Fence::accept, 1))?;
    fence.define_method("highest", method!(Fence::highest, 0))?;

    let cadence = root.define_class("Cadence", ruby.class_object())?;
    cadence.define_alloc_func::<Cadence>();
    cadence.define_private_method("_init", method!(Cadence::init, 3))?;
    cadence.define_method("ttl", method!(Cadence::ttl, 0))?;
    cadence.define_method("renew_after", method!(Cadence::renew_after, 0))?;
    cadence.define_method("warn_before", method!(Cadence::warn_before, 0))?;

    let holder = root.define_class("Holder", ruby.class_object())?;
    holder.define_alloc_func::<Holder>();
    holder.define_private_method("_init", method!(Holder::init, 3))?;
    holder.define_private_method("initialize_copy", method!(Holder::initialize_copy, 1))?;
    holder.define_private_method("_confirm", method!(Holder::confirm, 2))?;
    holder.define_private_method("_reacquire", method!(Holder::reacquire, 2))?;
    holder.define_method("state", method!(Holder::state, 0))?;
    holder.define_method("token", method!(Holder::token, 0))?;
    holder.define_method("confirmed_at", method!(Holder::confirmed_at, 0))?;
    holder.define_method("warning_deadline", method!(Holder::warning_deadline, 0))?;
    holder.define_method("renewal_due?", method!(Holder::renewal_due, 1))?;
    holder.define_method("at_risk?", method!(Holder::at_risk, 1))?;
    holder.define_method("refresh", method!(Holder::refresh, 1))?;
    holder.define_method("expire", method!(Holder::expire, 0))?;
    holder.define_method("fence", method!(Holder::fence, 0))?;
    Ok(())
}
