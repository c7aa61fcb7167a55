//! `LeaseMachines::Fence`: the high-water mark at the protected resource.

use lease_machines::Fence as CoreFence;
use magnus::{method, prelude::*, typed_data::Obj, Error, RModule, Ruby, Value};

use crate::{convert, init_once::InitOnce};

/// A `Fence` object: allocated empty, set once by `_init` (or
/// `initialize_copy`).
#[derive(Default)]
#[magnus::wrap(class = "LeaseMachines::Fence", free_immediately, size)]
struct Fence(InitOnce<CoreFence>);

impl Fence {
    fn init(ruby: &Ruby, rb_self: Obj<Self>, highest: Value) -> Result<(), Error> {
        rb_self.0.start(ruby, rb_self, "Fence", || {
            convert::optional_token(ruby, highest, "highest").map(CoreFence::new)
        })
    }

    fn initialize_copy(ruby: &Ruby, rb_self: Obj<Self>, other: Obj<Self>) -> Result<(), Error> {
        rb_self
            .0
            .start(ruby, rb_self, "Fence", || Ok(other.0.get()))
    }

    fn accept(ruby: &Ruby, rb_self: Obj<Self>, token: Value) -> Result<bool, Error> {
        let token = convert::presented_token(ruby, token, "token")?;
        rb_self.check_frozen()?;
        let mut fence = rb_self.0.get();
        let accepted = fence.accept(token);
        rb_self.0.set(fence);
        Ok(accepted)
    }

    fn highest(rb_self: Obj<Self>) -> Option<u64> {
        rb_self.0.get().highest().map(|token| token.value())
    }
}

/// Defines `LeaseMachines::Fence`'s native methods.
pub fn define(ruby: &Ruby, root: RModule) -> Result<(), Error> {
    let class = root.define_class("Fence", ruby.class_object())?;
    class.define_alloc_func::<Fence>();
    class.define_private_method("_init", method!(Fence::init, 1))?;
    class.define_private_method("initialize_copy", method!(Fence::initialize_copy, 1))?;
    class.define_method("accept", method!(Fence::accept, 1))?;
    class.define_method("highest", method!(Fence::highest, 0))?;
    Ok(())
}
