//! Strict conversion of Ruby arguments: no coercion, and every error names the
//! argument and the value it got.

use core::time::Duration;

use lease_machines::{ClockPolicy, FencingToken, TokenFloor};
use magnus::{
    value::ReprValue, Error, Float, Integer, RBignum, RClass, Ruby, StaticSymbol, Symbol,
    TryConvert, Value,
};

use crate::errors::{raise, Failure};

/// The largest owner or token, as Ruby users see it.
// Whole descriptions, so that a call that converts fine builds no text.
const AN_OWNER: &str = "an Integer in 0..18446744073709551615";
const A_TOKEN: &str = "an Integer in 1..18446744073709551615";
const A_MARK: &str = "nil or an Integer in 1..18446744073709551615";
const NANOS_PER_SEC: u128 = 1_000_000_000;

/// `value.inspect` for a message. This runs the caller's own code: a
/// StandardError from it falls back to Ruby's plain `#<Class:0x...>` form, but
/// anything else (`exit`, `throw`, `Thread#kill`, an interrupt, Ruby 3.1's
/// `Timeout`) is not swallowed: it is returned, to go on where it was headed.
pub fn inspected(ruby: &Ruby, value: Value) -> Result<String, Error> {
    match value.funcall::<_, _, String>("inspect", ()) {
        Ok(text) => Ok(text),
        // The plain form (rb_any_to_s); no code of the caller's runs again
        // unless its inspect raised, in which case it raises again, caught.
        Err(error) if error.is_kind_of(ruby.exception_standard_error()) => Ok(value.inspect()),
        Err(error) => Err(error),
    }
}

/// The error `wording` makes of `value`'s inspect, or whatever interrupted
/// the inspect (see [`inspected`]).
pub fn refusing(ruby: &Ruby, value: Value, wording: impl FnOnce(String) -> Failure) -> Error {
    match inspected(ruby, value) {
        Ok(text) => raise(ruby, wording(text)),
        Err(error) => error,
    }
}

/// [`refusing`] with the value shown as `"2.9 (Float)"`: its inspect and its
/// real class.
fn refusing_shown(ruby: &Ruby, value: Value, wording: impl FnOnce(String) -> Failure) -> Error {
    // Kernel#class bound to the value: the object's real class, never a
    // singleton class, and no method the object itself defines is called. A
    // BasicObject is no Kernel: its class pointer is its class.
    let name = ruby
        .module_kernel()
        .funcall::<_, _, Value>("instance_method", ("class",))
        .and_then(|method| method.funcall::<_, _, RClass>("bind_call", (value,)))
        .unwrap_or_else(|_| value.class())
        .inspect();
    refusing(ruby, value, |text| wording(format!("{text} ({name})")))
}

/// An Integer that fits in a `u64`, refusing every non-Integer (no `to_int`
/// coercion): `TypeError` for another class, `RangeError` outside the range.
/// `expected` is how the argument is described in the message.
fn bounded_u64(ruby: &Ruby, value: Value, name: &str, expected: &str) -> Result<u64, Error> {
    let Some(integer) = Integer::from_value(value) else {
        return Err(refusing_shown(ruby, value, |shown| {
            Failure::Type(format!("{name} must be {expected}, got {shown}"))
        }));
    };
    integer.to_u64().map_err(|_| {
        raise(
            ruby,
            Failure::Range(format!(
                "{name} must be {expected}, got {}",
                value.inspect()
            )),
        )
    })
}

/// `nil`, or the argument as `convert` reads it.
pub fn or_nil<T>(
    value: Value,
    convert: impl FnOnce(Value) -> Result<T, Error>,
) -> Result<Option<T>, Error> {
    if value.is_nil() {
        Ok(None)
    } else {
        convert(value).map(Some)
    }
}

/// An Integer in `0..2**64-1`.
pub fn u64_arg(ruby: &Ruby, value: Value, name: &str) -> Result<u64, Error> {
    bounded_u64(ruby, value, name, AN_OWNER)
}

/// A token presented for checking: 0 is allowed and is simply stale (`None`).
pub fn presented_token(
    ruby: &Ruby,
    value: Value,
    name: &str,
) -> Result<Option<FencingToken>, Error> {
    u64_arg(ruby, value, name).map(FencingToken::new)
}

/// A token that must have been issued: `1..2**64-1`.
pub fn issued_token(ruby: &Ruby, value: Value, name: &str) -> Result<FencingToken, Error> {
    let raw = bounded_u64(ruby, value, name, A_TOKEN)?;
    FencingToken::new(raw).ok_or_else(|| {
        raise(
            ruby,
            Failure::Range(format!(
                "{name} must be {A_TOKEN} (tokens start at 1), got 0"
            )),
        )
    })
}

/// `nil` or an issued token (a high-water mark).
pub fn optional_token(
    ruby: &Ruby,
    value: Value,
    name: &str,
) -> Result<Option<FencingToken>, Error> {
    if value.is_nil() {
        return Ok(None);
    }
    let raw = bounded_u64(ruby, value, name, A_MARK)?;
    FencingToken::new(raw).map(Some).ok_or_else(|| {
        raise(
            ruby,
            Failure::Range(format!("{name} must be {A_MARK}, got 0")),
        )
    })
}

/// How a time argument is read: [`time_arg`] (seconds) or [`nanos_arg`].
pub type TimeArg = fn(&Ruby, Value, &str) -> Result<Duration, Error>;

/// Seconds as an Integer or Float: finite, non-negative and representable as a
/// `Duration` (nanosecond resolution; a Float rounds to the nearest nanosecond).
pub fn time_arg(ruby: &Ruby, value: Value, name: &str) -> Result<Duration, Error> {
    if let Some(float) = Float::from_value(value) {
        let secs = float.to_f64();
        if !secs.is_finite() || secs < 0.0 {
            return Err(raise(
                ruby,
                Failure::Argument(format!(
                    "{name} must be a finite, non-negative number of seconds, got {}",
                    value.inspect()
                )),
            ));
        }
        return Duration::try_from_secs_f64(secs).map_err(|_| too_large(ruby, value, name));
    }
    if let Some(integer) = Integer::from_value(value) {
        let negative = is_negative(value, integer);
        if negative {
            return Err(raise(
                ruby,
                Failure::Argument(format!(
                    "{name} must be a finite, non-negative number of seconds, got {}",
                    value.inspect()
                )),
            ));
        }
        return integer
            .to_u64()
            .map(Duration::from_secs)
            .map_err(|_| too_large(ruby, value, name));
    }
    Err(refusing_shown(ruby, value, |shown| {
        Failure::Type(format!(
            "{name} must be an Integer or Float (seconds), got {shown}"
        ))
    }))
}

fn too_large(ruby: &Ruby, value: Value, name: &str) -> Error {
    raise(ruby, Failure::Argument(format!(
            "{name} is too large to represent (at most 18446744073709551615.999999999 seconds), got {}",
            value.inspect()
        )))
}

/// A time in exact nanoseconds, as stored in `@expires_at_ns`/`@observed_ns`.
pub fn nanos_arg(ruby: &Ruby, value: Value, name: &str) -> Result<Duration, Error> {
    let Some(integer) = Integer::from_value(value) else {
        return Err(refusing_shown(ruby, value, |shown| {
            Failure::Type(format!(
                "{name} must be a non-negative Integer (nanoseconds), got {shown}"
            ))
        }));
    };
    if is_negative(value, integer) {
        return Err(raise(
            ruby,
            Failure::Argument(format!(
                "{name} must be a non-negative Integer (nanoseconds), got {}",
                value.inspect()
            )),
        ));
    }
    let nanos = u128::try_convert(value).map_err(|_| too_large(ruby, value, name))?;
    let secs = u64::try_from(nanos / NANOS_PER_SEC).map_err(|_| too_large(ruby, value, name))?;
    let subsec = u32::try_from(nanos % NANOS_PER_SEC).map_err(|_| too_large(ruby, value, name))?;
    Ok(Duration::new(secs, subsec))
}

/// The sign of an Integer, without raising: a Bignum's sign is a flag.
fn is_negative(value: Value, integer: Integer) -> bool {
    match RBignum::from_value(value) {
        Some(bignum) => bignum.is_negative(),
        None => integer.to_i64().is_ok_and(|v| v < 0),
    }
}

/// A `Duration` as exact Integer nanoseconds.
pub fn nanos_value(ruby: &Ruby, duration: Duration) -> Integer {
    ruby.integer_from_u128(duration.as_nanos())
}

/// A `Duration` as Float seconds, rounded once from the exact nanoseconds.
#[allow(clippy::cast_precision_loss)]
pub fn secs_value(duration: Duration) -> f64 {
    duration.as_nanos() as f64 / 1e9
}

/// `:reject` or `:clamp`.
pub fn clock_policy_arg(ruby: &Ruby, value: Value) -> Result<ClockPolicy, Error> {
    // The Symbols themselves, not their names: a name is read only up to a
    // NUL, so `:"clamp\0anything"` would otherwise pass as `:clamp`.
    if let Some(symbol) = Symbol::from_value(value) {
        if symbol == ruby.sym_new("reject") {
            return Ok(ClockPolicy::Reject);
        }
        if symbol == ruby.sym_new("clamp") {
            return Ok(ClockPolicy::Clamp);
        }
    }
    Err(refusing(ruby, value, |shown| {
        Failure::Argument(format!(
            "clock_policy must be :reject or :clamp, got {shown}"
        ))
    }))
}

/// The Symbol of a clock policy.
pub fn clock_policy_value(ruby: &Ruby, policy: ClockPolicy) -> StaticSymbol {
    match policy {
        ClockPolicy::Reject => ruby.sym_new("reject"),
        ClockPolicy::Clamp => ruby.sym_new("clamp"),
    }
}

/// A store's `tokens:` policy: `:sequence` (the default) or `:clock_floor`
/// (the core's `TokenFloor::ClockMicros`).
pub fn token_floor_arg(ruby: &Ruby, value: Value) -> Result<TokenFloor, Error> {
    // The Symbols themselves, as for the clock policy.
    if let Some(symbol) = Symbol::from_value(value) {
        if symbol == ruby.sym_new("sequence") {
            return Ok(TokenFloor::Sequence);
        }
        if symbol == ruby.sym_new("clock_floor") {
            return Ok(TokenFloor::ClockMicros);
        }
    }
    Err(refusing(ruby, value, |shown| {
        Failure::Argument(format!(
            "tokens must be :sequence or :clock_floor, got {shown}"
        ))
    }))
}
