//! `LeaseMachines::Holder`: the worker's side of one lease, on the worker's
//! own clock. `lib/lease_machines/holder.rb` adds the keyword arguments.

use std::cell::Cell;

use lease_machines::{Holder as CoreHolder, HolderState};
use magnus::{method, prelude::*, typed_data::Obj, Error, RModule, Ruby, StaticSymbol, Value};

use crate::{
    cadence::Cadence,
    convert,
    errors::{self, Failure},
};

/// A `Holder` object: allocated empty (`None`), set once by `_init` (or
/// `initialize_copy`).
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
            convert::refusing(ruby, cadence, |shown| {
                Failure::Type(format!(
                    "cadence must be a LeaseMachines::Cadence, got {shown}"
                ))
            })
        })?;
        let cadence = Cadence::get(ruby, &cadence)?;
        errors::first_init(ruby, rb_self.0.get().is_some(), "Holder")?;
        rb_self.0.set(Some(CoreHolder::new(token, at, cadence)));
        Ok(())
    }

    fn initialize_copy(ruby: &Ruby, rb_self: Obj<Self>, other: Obj<Self>) -> Result<(), Error> {
        rb_self.check_frozen()?;
        errors::first_init(ruby, rb_self.0.get().is_some(), "Holder")?;
        rb_self.0.set(other.0.get());
        Ok(())
    }

    fn get(ruby: &Ruby, rb_self: &Self) -> Result<CoreHolder, Error> {
        rb_self
            .0
            .get()
            .ok_or_else(|| errors::uninitialized(ruby, "Holder"))
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

    fn renewals_end(ruby: &Ruby, rb_self: Obj<Self>) -> Result<Option<f64>, Error> {
        Ok(Self::get(ruby, &rb_self)?
            .renewals_end()
            .map(convert::secs_value))
    }

    fn renewal_allowed(ruby: &Ruby, rb_self: Obj<Self>, at: Value) -> Result<bool, Error> {
        let at = convert::time_arg(ruby, at, "at")?;
        Ok(Self::get(ruby, &rb_self)?.renewal_allowed(at))
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

/// Defines `LeaseMachines::Holder`'s native methods.
pub fn define(ruby: &Ruby, root: RModule) -> Result<(), Error> {
    let class = root.define_class("Holder", ruby.class_object())?;
    class.define_alloc_func::<Holder>();
    class.define_private_method("_init", method!(Holder::init, 3))?;
    class.define_private_method("initialize_copy", method!(Holder::initialize_copy, 1))?;
    class.define_private_method("_confirm", method!(Holder::confirm, 2))?;
    class.define_private_method("_reacquire", method!(Holder::reacquire, 2))?;
    class.define_method("state", method!(Holder::state, 0))?;
    class.define_method("token", method!(Holder::token, 0))?;
    class.define_method("confirmed_at", method!(Holder::confirmed_at, 0))?;
    class.define_method("warning_deadline", method!(Holder::warning_deadline, 0))?;
    class.define_method("renewals_end", method!(Holder::renewals_end, 0))?;
    class.define_method("renewal_allowed?", method!(Holder::renewal_allowed, 1))?;
    class.define_method("renewal_due?", method!(Holder::renewal_due, 1))?;
    class.define_method("at_risk?", method!(Holder::at_risk, 1))?;
    class.define_method("refresh", method!(Holder::refresh, 1))?;
    class.define_method("expire", method!(Holder::expire, 0))?;
    class.define_method("fence", method!(Holder::fence, 0))?;
    Ok(())
}
