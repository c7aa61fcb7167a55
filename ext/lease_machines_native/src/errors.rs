//! Every error the extension raises, and the one function that turns it into
//! a Ruby exception.
//!
//! The Ruby-defined exception classes (`LeaseMachines::StoreError`) are looked
//! up once, when the extension loads (`define`); a missing one fails the load.
//! Nothing is looked up when an error is raised, and nothing falls back to
//! another class.

use std::sync::OnceLock;

use magnus::{prelude::*, value::Opaque, Error, ExceptionClass, RModule, Ruby};

/// An error to raise: the Ruby exception class and its message.
pub enum Failure {
    /// `TypeError`: a value of the wrong class.
    Type(String),
    /// `RangeError`: an Integer out of range.
    Range(String),
    /// `ArgumentError`: a value of the right class that is not allowed.
    Argument(String),
    /// `FrozenError`: a change to an immutable object.
    Frozen(String),
    /// `RuntimeError`: a call the object's state does not allow.
    Runtime(String),
    /// `LeaseMachines::StoreError`: a stored row no history can produce.
    Store(String),
}

/// `LeaseMachines::StoreError`, resolved by `define`.
static STORE_ERROR: OnceLock<Opaque<ExceptionClass>> = OnceLock::new();

/// The Ruby exception for `failure`. Cold: raising is never the fast path.
#[cold]
pub fn raise(ruby: &Ruby, failure: Failure) -> Error {
    match failure {
        Failure::Type(message) => Error::new(ruby.exception_type_error(), message),
        Failure::Range(message) => Error::new(ruby.exception_range_error(), message),
        Failure::Argument(message) => Error::new(ruby.exception_arg_error(), message),
        Failure::Frozen(message) => Error::new(ruby.exception_frozen_error(), message),
        Failure::Runtime(message) => Error::new(ruby.exception_runtime_error(), message),
        Failure::Store(message) => match STORE_ERROR.get() {
            Some(class) => Error::new(ruby.get_inner(*class), message),
            // Unreachable once loaded: `define` resolved the class or failed
            // the load. Said as what it is, not dressed as another error.
            None => Error::new(
                ruby.exception_runtime_error(),
                format!("lease_machines_native is not initialized (LeaseMachines::StoreError: {message})"),
            ),
        },
    }
}

/// The error for a call made before `define` ran (only reachable if the
/// library's init function failed and something called in anyway).
#[cold]
pub fn not_loaded(ruby: &Ruby) -> Error {
    raise(
        ruby,
        Failure::Runtime("lease_machines_native is not initialized".to_owned()),
    )
}

/// Refuses a second `initialize` (or `initialize_copy`) on a live object:
/// re-initializing an authority would start its history over and reissue
/// tokens; a fence would forget its mark.
pub fn first_init(ruby: &Ruby, initialized: bool, class: &str) -> Result<(), Error> {
    if initialized {
        return Err(raise(
            ruby,
            Failure::Runtime(format!(
                "LeaseMachines::{class} is already initialized; it cannot start over"
            )),
        ));
    }
    Ok(())
}

/// A reader called on an object whose `initialize` never ran.
pub fn uninitialized(ruby: &Ruby, class: &str) -> Error {
    raise(
        ruby,
        Failure::Type(format!("uninitialized LeaseMachines::{class}")),
    )
}

/// Resolves the Ruby-defined exception classes (`lib/lease_machines.rb`
/// requires `lease_machines/errors` before the extension), or fails the
/// load.
pub fn define(ruby: &Ruby, root: RModule) -> Result<(), Error> {
    // `const_get(name, false)`: LeaseMachines' own constant, not a top-level one.
    let store_error: ExceptionClass = root
        .funcall("const_get", ("StoreError", false))
        .map_err(|_| {
            raise(
                ruby,
                Failure::Runtime(
                    "LeaseMachines::StoreError must be an exception class defined before the extension loads \
                     (require \"lease_machines/errors\" first)"
                        .to_owned(),
                ),
            )
        })?;
    // Kept alive (and unmoved) even if the constant is later removed.
    ruby.gc_register_mark_object(store_error);
    // A second load of the library keeps the first class.
    let _ = STORE_ERROR.set(store_error.into());
    Ok(())
}
