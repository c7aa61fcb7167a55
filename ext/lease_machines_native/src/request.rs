//! `LeaseMachines::Native::Request`: one decision a store is asked to make.
//! Its arguments are checked once, when it is made, exactly as the in-memory
//! `Authority` checks them; it is then decided on the resource's stored row as
//! often as the store needs (the PostgreSQL fast path decides again after a
//! lost compare-and-set). Frozen and immutable; only the four constructors
//! make one.
//!
//! ```ruby
//! request = Native::Request.acquire(owner, now, ttl)     # now: nil (the store's clock) or seconds
//! request = Native::Request.reacquire(owner, now, ttl)
//! request = Native::Request.renew(owner, token, now, ttl)
//! request = Native::Request.release(owner, token, now)
//! decision, columns = request.decide(name, columns, clock_ns, tokens) # tokens: :sequence or :clock_floor
//! request.grant?                                         # acquire or reacquire
//! request.on_contention                                  # Decision (refuse at once) or nil (wait)
//! ```
//!
//! A store's timeline is whole nanoseconds since the Unix epoch: `now` and
//! `ttl` must fit `u64` nanoseconds, and the authority that decides has that
//! as its horizon, so every deadline it grants fits the row.
//!
//! `tokens` is the store's token policy: `:sequence` (`last_issued + 1`) or
//! `:clock_floor` (the core's `TokenFloor::ClockMicros`: at least the instant
//! the request is evaluated at, in whole microseconds), so that tokens stay
//! monotonic across a failover that lost the last grants.

use core::time::Duration;

use lease_machines::{
    must_store, ClockPolicy, Contention, Decision, FencingToken, LeaseAuthority, OwnerId,
    RequestKind,
};
use magnus::{function, method, prelude::*, Error, RArray, RModule, Ruby, Value};

use crate::{
    classes::ClassSlot,
    convert, decision,
    errors::{self, Failure},
    row,
};

/// The last instant of a store's timeline: `2**64-1` nanoseconds.
const HORIZON: Duration = Duration::from_nanos(u64::MAX);

/// What is asked, with the arguments only that request takes.
#[derive(Clone, Copy)]
enum Operation {
    /// `acquire`, for a TTL.
    Acquire(Duration),
    /// `reacquire`, for a TTL.
    Reacquire(Duration),
    /// `renew` with a presented token (`None`: 0, always stale), for a TTL.
    Renew(Option<FencingToken>, Duration),
    /// `release` with a presented token.
    Release(Option<FencingToken>),
}

/// One checked request.
#[magnus::wrap(class = "LeaseMachines::Native::Request", free_immediately, size)]
struct Request {
    owner: OwnerId,
    /// `None`: decide at the store's clock.
    now: Option<Duration>,
    operation: Operation,
}

static CLASS: ClassSlot = ClassSlot::new();

/// A time argument (seconds) that must fit the store's timeline.
fn store_time(ruby: &Ruby, value: Value, name: &str) -> Result<Duration, Error> {
    let time = convert::time_arg(ruby, value, name)?;
    if time > HORIZON {
        return Err(errors::raise(
            ruby,
            Failure::Argument(format!(
                "{name} is too large for a store (its timeline is whole nanoseconds in \
                 0..18446744073.709551615 seconds since the Unix epoch), got {}",
                value.inspect()
            )),
        ));
    }
    Ok(time)
}

/// `now`: `nil` for the store's clock, or seconds.
fn store_now(ruby: &Ruby, value: Value) -> Result<Option<Duration>, Error> {
    convert::or_nil(value, |now| store_time(ruby, now, "now"))
}

fn owner_arg(ruby: &Ruby, value: Value) -> Result<OwnerId, Error> {
    convert::u64_arg(ruby, value, "owner").map(OwnerId::new)
}

impl Request {
    fn frozen(
        ruby: &Ruby,
        owner: OwnerId,
        now: Option<Duration>,
        operation: Operation,
    ) -> Result<Value, Error> {
        CLASS.frozen(
            ruby,
            Self {
                owner,
                now,
                operation,
            },
        )
    }

    /// `acquire` and `reacquire`: the same arguments, checked in the same
    /// order (owner, now, ttl).
    fn grant(
        ruby: &Ruby,
        [owner, now, ttl]: [Value; 3],
        operation: fn(Duration) -> Operation,
    ) -> Result<Value, Error> {
        let owner = owner_arg(ruby, owner)?;
        let now = store_now(ruby, now)?;
        let ttl = store_time(ruby, ttl, "ttl")?;
        Self::frozen(ruby, owner, now, operation(ttl))
    }

    /// `Request.acquire(owner, now, ttl)`.
    fn acquire(ruby: &Ruby, owner: Value, now: Value, ttl: Value) -> Result<Value, Error> {
        Self::grant(ruby, [owner, now, ttl], Operation::Acquire)
    }

    /// `Request.reacquire(owner, now, ttl)`.
    fn reacquire(ruby: &Ruby, owner: Value, now: Value, ttl: Value) -> Result<Value, Error> {
        Self::grant(ruby, [owner, now, ttl], Operation::Reacquire)
    }

    /// `renew` and `release`: a holder's owner, presented token and `now`,
    /// checked in that order (then `renew`'s ttl).
    fn held(
        ruby: &Ruby,
        [owner, token, now]: [Value; 3],
    ) -> Result<(OwnerId, Option<FencingToken>, Option<Duration>), Error> {
        let owner = owner_arg(ruby, owner)?;
        let token = convert::presented_token(ruby, token, "token")?;
        Ok((owner, token, store_now(ruby, now)?))
    }

    /// `Request.renew(owner, token, now, ttl)`.
    fn renew(
        ruby: &Ruby,
        owner: Value,
        token: Value,
        now: Value,
        ttl: Value,
    ) -> Result<Value, Error> {
        let (owner, token, now) = Self::held(ruby, [owner, token, now])?;
        let ttl = store_time(ruby, ttl, "ttl")?;
        Self::frozen(ruby, owner, now, Operation::Renew(token, ttl))
    }

    /// `Request.release(owner, token, now)`.
    fn release(ruby: &Ruby, owner: Value, token: Value, now: Value) -> Result<Value, Error> {
        let (owner, token, now) = Self::held(ruby, [owner, token, now])?;
        Self::frozen(ruby, owner, now, Operation::Release(token))
    }

    /// `request.grant?`: whether it asks for a grant (`acquire`,
    /// `reacquire`), the request many callers make at once for one
    /// resource; `renew` and `release` come from the holder.
    fn is_grant(&self) -> bool {
        matches!(
            self.operation,
            Operation::Acquire(_) | Operation::Reacquire(_)
        )
    }

    /// `request.on_contention`: what to answer, decided as a grant on the row
    /// it read, when the row is locked by another decision's uncommitted
    /// write: the rejection to answer at once (a `Decision`), or `nil` to
    /// wait for that commit and decide again (the core's
    /// `RequestKind::on_contention`).
    fn on_contention(ruby: &Ruby, rb_self: &Self) -> Result<Value, Error> {
        let kind = match rb_self.operation {
            Operation::Acquire(_) => RequestKind::Acquire,
            Operation::Reacquire(_) => RequestKind::Reacquire,
            Operation::Renew(..) => RequestKind::Renew,
            Operation::Release(_) => RequestKind::Release,
        };
        match kind.on_contention() {
            Contention::Refuse(rejection) => decision::value(ruby, Decision::Rejected(rejection)),
            Contention::Wait => Ok(ruby.qnil().as_value()),
        }
    }

    /// `request.decide(name, columns, clock_ns, tokens)`: restores the
    /// authority from the row (`nil`: a resource with no row; `name` only
    /// names it in a `StoreError` about a bad row) with the `:clamp` clock
    /// policy, the store's horizon and the store's token policy (`tokens`,
    /// checked first: `:sequence` or `:clock_floor`), decides at the request's `now` or else at `clock_ns`
    /// (Integer nanoseconds, the store's clock, read only then), and answers
    /// `[decision, columns to write]`, the second `nil` when the core's
    /// `must_store` says the row need not be written (nothing changed but the
    /// observed clock, within the current lease's life or with no lease).
    fn decide(
        ruby: &Ruby,
        rb_self: &Self,
        name: Value,
        columns: Value,
        clock_ns: Value,
        tokens: Value,
    ) -> Result<RArray, Error> {
        let floor = convert::token_floor_arg(ruby, tokens)?;
        let now = match rb_self.now {
            Some(now) => now,
            None => Duration::from_nanos(convert::u64_arg(ruby, clock_ns, "clock_ns")?),
        };
        let stored = row::restore(ruby, name, row::decode(ruby, name, columns)?)?;
        let mut authority = LeaseAuthority::restore(stored)
            .with_clock_policy(ClockPolicy::Clamp)
            .with_horizon(HORIZON)
            .with_token_floor(floor);
        let owner = rb_self.owner;
        let decision: Decision = match rb_self.operation {
            Operation::Acquire(ttl) => authority.acquire(owner, now, ttl),
            Operation::Reacquire(ttl) => authority.reacquire(owner, now, ttl),
            Operation::Renew(token, ttl) => authority.renew(owner, token, now, ttl),
            Operation::Release(token) => authority.release(owner, token, now),
        };
        let decided = authority.checkpoint();
        let written = if must_store(&stored, &decided) {
            row::encode(ruby, decided.flat()).as_value()
        } else {
            ruby.qnil().as_value()
        };
        Ok(ruby.ary_new_from_values(&[decision::value(ruby, decision)?, written]))
    }
}

/// `Native.token_policy(tokens)`: a store's `tokens:` option, checked as
/// `decide` checks it (`:sequence` or `:clock_floor`, else `ArgumentError`),
/// and returned.
fn token_policy(ruby: &Ruby, tokens: Value) -> Result<Value, Error> {
    convert::token_floor_arg(ruby, tokens)?;
    Ok(tokens)
}

/// Defines `LeaseMachines::Native::Request` and `Native.token_policy`.
pub fn define(ruby: &Ruby, native: RModule) -> Result<(), Error> {
    let class = native.define_class("Request", ruby.class_object())?;
    CLASS.define::<Request>(ruby, class)?;
    class.define_singleton_method("acquire", function!(Request::acquire, 3))?;
    class.define_singleton_method("reacquire", function!(Request::reacquire, 3))?;
    class.define_singleton_method("renew", function!(Request::renew, 4))?;
    class.define_singleton_method("release", function!(Request::release, 3))?;
    class.define_method("decide", method!(Request::decide, 4))?;
    class.define_method("grant?", method!(Request::is_grant, 0))?;
    class.define_method("on_contention", method!(Request::on_contention, 0))?;
    native.define_module_function("token_policy", function!(token_policy, 1))?;
    Ok(())
}
