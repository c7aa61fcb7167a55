//! `LeaseMachines::Lease`: a frozen TypedData holding the core's lease and,
//! for a lease a signing store granted, its token's proof. One allocation
//! with no Ruby call that could raise (no `initialize`, no instance
//! variables). `lib/lease_machines/lease.rb` adds value semantics on top of
//! the readers defined here.

use lease_machines::{Lease, OwnerId, TokenProof};
use magnus::{
    gc::Marker, method, prelude::*, typed_data::Obj, value::Opaque, Error, RClass, RModule, Ruby,
    Value,
};

use crate::{
    classes::ClassSlot,
    convert::{self, TimeArg},
    errors::Failure,
    proof,
};

/// A `Lease` object.
#[magnus::wrap(class = "LeaseMachines::Lease", free_immediately, size)]
struct LeaseObj(Lease, Option<TokenProof>);

static CLASS: ClassSlot = ClassSlot::new();

/// A new frozen `Lease` object.
pub fn value(ruby: &Ruby, lease: Lease) -> Result<Value, Error> {
    CLASS.frozen(ruby, LeaseObj(lease, None))
}

/// The core lease of a `Lease` object.
pub fn from_value(ruby: &Ruby, value: Value, name: &str) -> Result<Lease, Error> {
    Obj::<LeaseObj>::try_convert(value)
        .map(|lease| lease.0)
        .map_err(|_| {
            convert::refusing(ruby, value, |shown| {
                Failure::Type(format!(
                    "{name} must be a LeaseMachines::Lease, got {shown}"
                ))
            })
        })
}

/// A `Lease` object held by another object (a `Decision`, a `Checkpoint`),
/// kept alive by that object's `mark`.
#[derive(Clone, Copy)]
pub struct LeaseRef(Option<Opaque<Value>>);

impl LeaseRef {
    /// No lease.
    pub const NONE: Self = Self(None);

    /// A new `Lease` object for `lease`, if there is one.
    pub fn made(ruby: &Ruby, lease: Option<Lease>) -> Result<Self, Error> {
        match lease {
            Some(lease) => value(ruby, lease).map(|object| Self(Some(object.into()))),
            None => Ok(Self::NONE),
        }
    }

    /// A `Lease` object already checked by `from_value`, or `nil`.
    pub fn given(object: Value) -> Self {
        Self((!object.is_nil()).then(|| object.into()))
    }

    /// Marks the object for the holder's `mark`.
    pub fn mark(self, marker: &Marker) {
        if let Some(object) = self.0 {
            marker.mark(object);
        }
    }

    /// The object, for the holder's `lease` reader.
    pub fn get(self, ruby: &Ruby) -> Option<Value> {
        self.0.map(|object| ruby.get_inner(object))
    }
}

/// `nil`, or the core lease of a `Lease` object.
pub fn optional(ruby: &Ruby, value: Value, name: &str) -> Result<Option<Lease>, Error> {
    convert::or_nil(value, |value| from_value(ruby, value, name))
}

impl LeaseObj {
    /// A new frozen `Lease` of `class`, its arguments checked in order.
    fn make(
        ruby: &Ruby,
        class: RClass,
        [owner, token, expires_at]: [Value; 3],
        (time, name): (TimeArg, &str),
    ) -> Result<Value, Error> {
        let owner = OwnerId::new(convert::u64_arg(ruby, owner, "owner")?);
        let token = convert::issued_token(ruby, token, "token")?;
        let expires_at = time(ruby, expires_at, name)?;
        CLASS.frozen_in(
            ruby,
            Self(Lease::new(owner, token, expires_at), None),
            class,
        )
    }

    /// `Lease._new(owner, token, expires_at)` (`build`): `expires_at` in seconds.
    fn build(
        ruby: &Ruby,
        class: RClass,
        owner: Value,
        token: Value,
        expires_at: Value,
    ) -> Result<Value, Error> {
        let time: TimeArg = convert::time_arg;
        Self::make(
            ruby,
            class,
            [owner, token, expires_at],
            (time, "expires_at"),
        )
    }

    /// `Lease._exact(owner, token, expires_at_ns)`: exact nanoseconds.
    fn exact(
        ruby: &Ruby,
        class: RClass,
        owner: Value,
        token: Value,
        expires_at_ns: Value,
    ) -> Result<Value, Error> {
        let time: TimeArg = convert::nanos_arg;
        Self::make(
            ruby,
            class,
            [owner, token, expires_at_ns],
            (time, "expires_at_ns"),
        )
    }

    /// `_signed(proof)`: the same lease, of the same class, carrying `proof`
    /// (nil: none), given as its text (64 lowercase hex digits).
    fn signed(ruby: &Ruby, rb_self: Obj<Self>, given: Value) -> Result<Value, Error> {
        let proof = proof::optional_arg(ruby, given, "proof")?;
        CLASS.frozen_in(ruby, Self(rb_self.0, proof), rb_self.class())
    }

    /// The proof's text, or nil.
    fn proof(&self) -> Option<String> {
        self.1.as_ref().map(proof::text)
    }

    fn owner(&self) -> u64 {
        self.0.owner().value()
    }

    fn token(&self) -> u64 {
        self.0.token().value()
    }

    fn expires_at_ns(ruby: &Ruby, rb_self: &Self) -> magnus::Integer {
        convert::nanos_value(ruby, rb_self.0.expires_at())
    }

    fn expires_at(&self) -> f64 {
        convert::secs_value(self.0.expires_at())
    }

    fn is_expired(ruby: &Ruby, rb_self: &Self, now: Value) -> Result<bool, Error> {
        Ok(rb_self.0.is_expired(convert::time_arg(ruby, now, "now")?))
    }
}

/// Defines `LeaseMachines::Lease`'s native methods.
pub fn define(ruby: &Ruby, root: RModule) -> Result<(), Error> {
    let class = root.define_class("Lease", ruby.class_object())?;
    CLASS.define::<LeaseObj>(ruby, class)?;
    class.define_singleton_method("_new", method!(LeaseObj::build, 3))?;
    class.define_singleton_method("_exact", method!(LeaseObj::exact, 3))?;
    class.define_private_method("_signed", method!(LeaseObj::signed, 1))?;
    class.define_method("proof", method!(LeaseObj::proof, 0))?;
    class.define_method("owner", method!(LeaseObj::owner, 0))?;
    class.define_method("token", method!(LeaseObj::token, 0))?;
    class.define_method("expires_at_ns", method!(LeaseObj::expires_at_ns, 0))?;
    class.define_method("expires_at", method!(LeaseObj::expires_at, 0))?;
    class.define_method("expired?", method!(LeaseObj::is_expired, 1))?;
    Ok(())
}
