//! `lease_machines_native`: the Ruby extension over the `lease-machines` core.
//!
//! Every decision is made by the core. This crate only converts arguments
//! (strictly: no coercion, errors that name the argument and the value) and
//! shapes results into the Ruby value objects defined in `lib/`. One file per
//! Ruby class, each registering its own methods; no method can panic.

// `#[magnus::init]` generates the undocumented `Init_lease_machines_native`.
#![allow(missing_docs)]

use magnus::{prelude::*, Error, Ruby};

mod authority;
mod cadence;
mod checkpoint;
mod classes;
mod convert;
mod decision;
mod errors;
mod fence;
mod holder;
mod init_once;
mod lease;
mod owner_id;
mod proof;
mod request;
mod row;

#[magnus::init]
fn init(ruby: &Ruby) -> Result<(), Error> {
    let root = ruby.define_module("LeaseMachines")?;
    errors::define(ruby, root)?;
    lease::define(ruby, root)?;
    decision::define(ruby, root)?;
    checkpoint::define(ruby, root)?;
    authority::define(ruby, root)?;
    fence::define(ruby, root)?;
    cadence::define(ruby, root)?;
    holder::define(ruby, root)?;
    let native = root.define_module("Native")?;
    row::define(native)?;
    request::define(ruby, native)?;
    proof::define(ruby, native)?;
    owner_id::define(native)?;
    Ok(())
}
