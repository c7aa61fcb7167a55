//! `LeaseMachines::Authority`: one resource's decision engine, in memory.
//! `lib/lease_machines/authority.rb` adds the keyword arguments.

use std::time::Duration;

use lease_machines::{Decision, LeaseAuthority, OwnerId};
use magnus::{method, prelude::*, typed_data::Obj, Error, RModule, Ruby, StaticSymbol, Value};

use crate::{checkpoint, convert, decision, init_once::InitOnce};

/// An `Authority` object: allocated empty, set once by `_init` or
/// `_restore` (or `initialize_copy`).
#[derive(Default)]
#[magnus::wrap(class = "LeaseMachines::Authority", free_immediately, size)]
struct Authority(InitOnce<LeaseAuthority>);

impl Authority {
    fn init(ruby: &Ruby, rb_self: Obj<Self>, policy: Value) -> Result<(), Error> {
        rb_self.0.start(ruby, rb_self, "Authority", || {
            let policy = convert::clock_policy_arg(ruby, policy)?;
            Ok(LeaseAuthority::new().with_clock_policy(policy))
        })
    }

    fn restore(
        ruby: &Ruby,
        rb_self: Obj<Self>,
        checkpoint: Value,
        policy: Value,
    ) -> Result<(), Error> {
        rb_self.0.start(ruby, rb_self, "Authority", || {
            let checkpoint = checkpoint::from_value(ruby, checkpoint, "checkpoint")?;
            let policy = convert::clock_policy_arg(ruby, policy)?;
            Ok(LeaseAuthority::restore(checkpoint).with_clock_policy(policy))
        })
    }

    fn initialize_copy(ruby: &Ruby, rb_self: Obj<Self>, other: Obj<Self>) -> Result<(), Error> {
        rb_self
            .0
            .start(ruby, rb_self, "Authority", || Ok(other.0.get()))
    }

    /// Runs one decision on a copy of the state and stores it back.
    fn decide(
        ruby: &Ruby,
        rb_self: Obj<Self>,
        decide: impl FnOnce(&mut LeaseAuthority) -> Decision,
    ) -> Result<Value, Error> {
        rb_self.check_frozen()?;
        let mut authority = rb_self.0.get();
        let answer = decide(&mut authority);
        rb_self.0.set(authority);
        decision::value(ruby, answer)
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

    fn checkpoint(ruby: &Ruby, rb_self: Obj<Self>) -> Result<Value, Error> {
        checkpoint::value(ruby, rb_self.0.get().checkpoint())
    }

    fn clock_policy(ruby: &Ruby, rb_self: Obj<Self>) -> StaticSymbol {
        convert::clock_policy_value(ruby, rb_self.0.get().clock_policy())
    }
}

/// Defines `LeaseMachines::Authority`'s native methods.
pub fn define(ruby: &Ruby, root: RModule) -> Result<(), Error> {
    let class = root.define_class("Authority", ruby.class_object())?;
    class.define_alloc_func::<Authority>();
    class.define_private_method("_init", method!(Authority::init, 1))?;
    class.define_private_method("_restore", method!(Authority::restore, 2))?;
    class.define_private_method("initialize_copy", method!(Authority::initialize_copy, 1))?;
    class.define_private_method("_acquire", method!(Authority::acquire, 3))?;
    class.define_private_method("_reacquire", method!(Authority::reacquire, 3))?;
    class.define_private_method("_renew", method!(Authority::renew, 4))?;
    class.define_private_method("_release", method!(Authority::release, 3))?;
    class.define_method("checkpoint", method!(Authority::checkpoint, 0))?;
    class.define_method("clock_policy", method!(Authority::clock_policy, 0))?;
    Ok(())
}
