//! `LeaseMachines::Cadence`: how a `Holder` paces itself. Immutable once
//! initialized.

use std::cell::Cell;

use lease_machines::Cadence as CoreCadence;
use magnus::{method, prelude::*, typed_data::Obj, Error, RModule, Ruby, Value};

use crate::{
    convert,
    errors::{self, Failure},
};

/// A `Cadence` object: allocated empty (`None`), set once by `_init`.
#[derive(Default)]
#[magnus::wrap(class = "LeaseMachines::Cadence", free_immediately, size)]
pub struct Cadence(Cell<Option<CoreCadence>>);

impl Cadence {
    fn init(
        ruby: &Ruby,
        rb_self: Obj<Self>,
        ttl: Value,
        renew_after: Value,
        warn_before: Value,
        max_hold: Value,
    ) -> Result<(), Error> {
        rb_self.check_frozen()?;
        if rb_self.0.get().is_some() {
            return Err(errors::raise(
                ruby,
                Failure::Frozen("a Cadence is immutable".to_owned()),
            ));
        }
        let ttl_d = convert::time_arg(ruby, ttl, "ttl")?;
        let renew_d = convert::time_arg(ruby, renew_after, "renew_after")?;
        let warn_d = convert::time_arg(ruby, warn_before, "warn_before")?;
        let cadence = CoreCadence::new(ttl_d, renew_d, warn_d).ok_or_else(|| {
            errors::raise(
                ruby,
                Failure::Argument(format!(
                    "invalid cadence (ttl: {}, renew_after: {}, warn_before: {}): need ttl > 0, renew_after > 0, warn_before < ttl and renew_after <= ttl - warn_before",
                    ttl.inspect(),
                    renew_after.inspect(),
                    warn_before.inspect()
                )),
            )
        })?;
        let cadence = if max_hold.is_nil() {
            cadence
        } else {
            let max_hold_d = convert::time_arg(ruby, max_hold, "max_hold")?;
            cadence.with_max_hold(max_hold_d).ok_or_else(|| {
                errors::raise(
                    ruby,
                    Failure::Argument(format!(
                        "max_hold must be at least ttl ({}), got {}",
                        ttl.inspect(),
                        max_hold.inspect()
                    )),
                )
            })?
        };
        rb_self.0.set(Some(cadence));
        Ok(())
    }

    /// The core cadence, or `TypeError` for one never initialized.
    pub fn get(ruby: &Ruby, rb_self: &Self) -> Result<CoreCadence, Error> {
        rb_self
            .0
            .get()
            .ok_or_else(|| errors::uninitialized(ruby, "Cadence"))
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

    fn max_hold(ruby: &Ruby, rb_self: Obj<Self>) -> Result<Option<f64>, Error> {
        Ok(Self::get(ruby, &rb_self)?
            .max_hold()
            .map(convert::secs_value))
    }
}

/// Defines `LeaseMachines::Cadence`'s native methods.
pub fn define(ruby: &Ruby, root: RModule) -> Result<(), Error> {
    let class = root.define_class("Cadence", ruby.class_object())?;
    class.define_alloc_func::<Cadence>();
    class.define_private_method("_init", method!(Cadence::init, 4))?;
    class.define_method("ttl", method!(Cadence::ttl, 0))?;
    class.define_method("renew_after", method!(Cadence::renew_after, 0))?;
    class.define_method("warn_before", method!(Cadence::warn_before, 0))?;
    class.define_method("max_hold", method!(Cadence::max_hold, 0))?;
    Ok(())
}
