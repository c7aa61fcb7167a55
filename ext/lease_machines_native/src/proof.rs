//! `LeaseMachines::Native::ProofKeys`: the secret keys of signed tokens, held
//! in native memory (Ruby never sees the bytes again, nor can `inspect` show
//! them), and the proofs' text form. The core decides (`lease_machines::proof`);
//! this file converts.
//!
//! ```ruby
//! keys = Native::ProofKeys.build(["...32 bytes or more...", "...an older key..."], "signing_keys")
//! keys.sign("reports/nightly", 12, 7)          # => "9d0f5339..." (64 lowercase hex digits), the first key's
//! keys.verify("reports/nightly", 12, 7, proof) # => :valid, :forged (no key's proof) or :malformed (not 64 hex digits)
//! ```

use lease_machines::{any_verifies, OwnerId, ProofKey, TokenProof};
use magnus::{
    function, method, prelude::*, Error, RArray, RModule, RString, Ruby, StaticSymbol, Value,
};

use crate::{
    classes::ClassSlot,
    convert,
    errors::{raise, Failure},
};

/// The lowercase hex digits of a proof's text.
const DIGITS: &[u8; 16] = b"0123456789abcdef";

/// A frozen, non-empty list of keys: the first signs, every one verifies.
#[magnus::wrap(class = "LeaseMachines::Native::ProofKeys", free_immediately, size)]
struct ProofKeys(Vec<ProofKey>);

static CLASS: ClassSlot = ClassSlot::new();

/// A proof's text: 64 lowercase hex digits.
pub fn text(proof: &TokenProof) -> String {
    let mut out = String::with_capacity(2 * TokenProof::LEN);
    for byte in proof.as_bytes() {
        for nibble in [byte >> 4, byte & 0x0f] {
            out.push(char::from(
                *DIGITS.get(usize::from(nibble)).unwrap_or(&b'0'),
            ));
        }
    }
    out
}

/// The proof a text spells, or `None` when it is not 64 lowercase hex digits.
fn parse(text: &[u8]) -> Option<TokenProof> {
    if text.len() != 2 * TokenProof::LEN {
        return None;
    }
    let mut bytes = [0u8; TokenProof::LEN];
    for (byte, pair) in bytes.iter_mut().zip(text.chunks_exact(2)) {
        let [high, low] = pair else { return None };
        *byte = (digit(*high)? << 4) | digit(*low)?;
    }
    Some(TokenProof::from_bytes(bytes))
}

fn digit(byte: u8) -> Option<u8> {
    match byte {
        b'0'..=b'9' => byte.checked_sub(b'0'),
        b'a'..=b'f' => byte.checked_sub(b'a' - 10),
        _ => None,
    }
}

/// A String's bytes, or `TypeError` naming the argument.
fn string_bytes(ruby: &Ruby, value: Value, name: &str) -> Result<Vec<u8>, Error> {
    RString::from_value(value)
        .map(|text| text.to_bytes().to_vec())
        .ok_or_else(|| {
            convert::refusing(ruby, value, |shown| {
                Failure::Type(format!("{name} must be a String, got {shown}"))
            })
        })
}

/// `nil`, or a proof in its text form: `TypeError` for a non-String,
/// `ArgumentError` for a String that is not 64 lowercase hex digits.
pub fn optional_arg(ruby: &Ruby, value: Value, name: &str) -> Result<Option<TokenProof>, Error> {
    convert::or_nil(value, |value| {
        let text = string_bytes(ruby, value, name)?;
        parse(&text).ok_or_else(|| {
            convert::refusing(ruby, value, |shown| {
                Failure::Argument(format!(
                    "{name} must be 64 lowercase hexadecimal digits (an HMAC-SHA256), got {shown}"
                ))
            })
        })
    })
}

impl ProofKeys {
    /// `ProofKeys.build(keys, name)`: `keys` a non-empty Array of Strings of
    /// at least 32 bytes each. The messages name `name` and an element's
    /// index, class and length, never its content.
    fn build(ruby: &Ruby, keys: Value, name: String) -> Result<Value, Error> {
        let Some(list) = RArray::from_value(keys) else {
            let what = if RString::from_value(keys).is_some() {
                "a String (put one key in an Array: [key])".to_owned()
            } else {
                keys.class().inspect()
            };
            return Err(raise(
                ruby,
                Failure::Type(format!(
                    "{name} must be an Array of secret keys (Strings), got {what}"
                )),
            ));
        };
        if list.is_empty() {
            return Err(raise(
                ruby,
                Failure::Argument(format!(
                    "{name} must hold at least one key, got an empty Array"
                )),
            ));
        }
        let mut made = Vec::with_capacity(list.len());
        for (index, element) in list.into_iter().enumerate() {
            let Some(secret) = RString::from_value(element) else {
                return Err(raise(
                    ruby,
                    Failure::Type(format!(
                        "{name}[{index}] must be a String (the key's bytes), got {}",
                        element.class().inspect()
                    )),
                ));
            };
            let key = ProofKey::new(&secret.to_bytes()).map_err(|short| {
                raise(
                    ruby,
                    Failure::Argument(format!(
                        "{name}[{index}] must have at least {} bytes, got a String of {} bytes",
                        ProofKey::MIN_LEN,
                        short.len
                    )),
                )
            })?;
            made.push(key);
        }
        CLASS.frozen(ruby, Self(made))
    }

    /// `sign(resource, token, owner)`: the first key's proof of the grant, as text.
    fn sign(
        ruby: &Ruby,
        rb_self: &Self,
        resource: Value,
        token: Value,
        owner: Value,
    ) -> Result<String, Error> {
        let resource = string_bytes(ruby, resource, "resource")?;
        let token = convert::issued_token(ruby, token, "token")?;
        let owner = OwnerId::new(convert::u64_arg(ruby, owner, "owner")?);
        let first = rb_self
            .0
            .first()
            .ok_or_else(|| raise(ruby, Failure::Runtime("no signing key".to_owned())))?;
        Ok(text(&first.prove(&resource, token, owner)))
    }

    /// `verify(resource, token, owner, proof)`: `:valid` when one of the
    /// keys made `proof` for `resource`, `token` and `owner`, `:forged` when
    /// none did, `:malformed` when `proof` is not 64 lowercase hex digits.
    fn verify(
        ruby: &Ruby,
        rb_self: &Self,
        resource: Value,
        token: Value,
        owner: Value,
        proof: Value,
    ) -> Result<StaticSymbol, Error> {
        let resource = string_bytes(ruby, resource, "resource")?;
        let token = convert::issued_token(ruby, token, "token")?;
        let owner = OwnerId::new(convert::u64_arg(ruby, owner, "owner")?);
        let proof = string_bytes(ruby, proof, "proof")?;
        let answer = match parse(&proof) {
            None => "malformed",
            Some(proof) if any_verifies(&rb_self.0, &resource, token, owner, &proof) => "valid",
            Some(_) => "forged",
        };
        Ok(ruby.sym_new(answer))
    }

    fn size(&self) -> usize {
        self.0.len()
    }
}

/// Defines `LeaseMachines::Native::ProofKeys`.
pub fn define(ruby: &Ruby, native: RModule) -> Result<(), Error> {
    let class = native.define_class("ProofKeys", ruby.class_object())?;
    CLASS.define::<ProofKeys>(ruby, class)?;
    class.define_singleton_method("build", function!(ProofKeys::build, 2))?;
    class.define_method("sign", method!(ProofKeys::sign, 3))?;
    class.define_method("verify", method!(ProofKeys::verify, 4))?;
    class.define_method("size", method!(ProofKeys::size, 0))?;
    Ok(())
}
