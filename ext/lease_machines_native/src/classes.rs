//! The classes whose instances the extension makes itself (`Lease`,
//! `Decision`, `Checkpoint`, `Native::Request`), resolved once at load.
//!
//! magnus's `#[magnus::wrap]` finds a type's class lazily, by name and with an
//! `unwrap`, the first time it needs it. Here every class is stored when it is
//! defined and instances are made with `obj_wrap_as` on the stored class, and
//! the lazy lookup is forced during `define` too (magnus still uses it in the
//! message of a failed conversion): removing a constant later can neither
//! panic nor change what is made.

use std::sync::OnceLock;

use magnus::{prelude::*, value::Opaque, Error, RClass, Ruby, TypedData, Value};

use crate::errors::{self, Failure};

/// One class, set once by `define`.
pub struct ClassSlot(OnceLock<Opaque<RClass>>);

impl ClassSlot {
    /// An empty slot, for a `static`.
    pub const fn new() -> Self {
        Self(OnceLock::new())
    }

    /// Stores `class` as `T`'s class. It is kept alive even if its constant is
    /// removed, and magnus's own lookup of `T`'s class is done now, while the
    /// constant is certainly there.
    pub fn define<T: TypedData>(&self, ruby: &Ruby, class: RClass) -> Result<(), Error> {
        class.undef_default_alloc_func();
        if !T::class(ruby).equal(class)? {
            return Err(errors::raise(
                ruby,
                Failure::Runtime(format!(
                    "{} is not the class lease_machines_native defined",
                    class.inspect()
                )),
            ));
        }
        ruby.gc_register_mark_object(class);
        // A second load of the library keeps the first class.
        let _ = self.0.set(class.into());
        Ok(())
    }

    /// The stored class.
    pub fn get(&self, ruby: &Ruby) -> Result<RClass, Error> {
        self.0
            .get()
            .map(|class| ruby.get_inner(*class))
            .ok_or_else(|| errors::not_loaded(ruby))
    }

    /// A new frozen instance of the stored class holding `data`.
    pub fn frozen<T: TypedData>(&self, ruby: &Ruby, data: T) -> Result<Value, Error> {
        match self.0.get() {
            Some(class) => Ok(frozen_as(ruby, data, ruby.get_inner(*class))),
            None => Err(errors::not_loaded(ruby)),
        }
    }

    /// A new frozen instance of `class` (a Ruby caller's receiver) holding
    /// `data`: the stored class or a subclass of it, else `TypeError`.
    pub fn frozen_in<T: TypedData>(
        &self,
        ruby: &Ruby,
        data: T,
        class: RClass,
    ) -> Result<Value, Error> {
        let base = self.get(ruby)?;
        if !class.is_inherited(base) {
            return Err(errors::raise(
                ruby,
                Failure::Type(format!(
                    "{} is not a subclass of {}",
                    class.inspect(),
                    base.inspect()
                )),
            ));
        }
        Ok(frozen_as(ruby, data, class))
    }
}

fn frozen_as<T: TypedData>(ruby: &Ruby, data: T, class: RClass) -> Value {
    let object = ruby.obj_wrap_as(data, class).as_value();
    object.freeze();
    object
}
