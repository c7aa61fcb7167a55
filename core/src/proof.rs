//! Signed tokens: the proof that a store granted a token for a resource to
//! an owner.
//!
//! A fence in the same database as its store can read the store's
//! `last_issued` and refuse a token the store never issued. A fence anywhere
//! else cannot, and admits any token at or above its mark: one forged token
//! (`u64::MAX`, say) closes it for good. A store that holds a secret key
//! therefore attaches a [`TokenProof`] to every lease it grants, and a fence
//! that holds the same key refuses a token whose proof does not verify.
//!
//! The proof is HMAC-SHA256 (RFC 2104, FIPS 180-4) keyed with the secret,
//! over this message, and nothing else:
//!
//! | bytes | what |
//! |---|---|
//! | 30 | the domain-separation prefix [`DOMAIN`], `b"lease-machines grant proof v2\0"` |
//! | 8 | the resource name's length in bytes, an unsigned 64-bit big-endian integer |
//! | n | the resource name's bytes (for the gem: its UTF-8, as the stores compare it) |
//! | 8 | the token, an unsigned 64-bit big-endian integer |
//! | 8 | the owner the token was granted to, an unsigned 64-bit big-endian integer |
//!
//! The length prefix makes the encoding injective: no two (resource, token,
//! owner) triples share a message, whatever bytes the name holds. The prefix
//! keeps a proof from meaning anything to another use of the same key, and
//! names the version of this encoding. Signing the owner makes the proof the
//! grant's, not only the token's: a token issued twice (a failover that lost
//! the first grant) to two owners has two proofs, and neither holder can
//! show the other's owner. The first version (`v1`, no owner) is gone: its
//! proofs verify under no key.
//!
//! ```
//! use lease_machines::{FencingToken, OwnerId, ProofKey, TokenProof};
//!
//! let key = ProofKey::new(&[7; 32]).unwrap();
//! let token = FencingToken::new(12).unwrap();
//! let seven = OwnerId::new(7);
//! let proof = key.prove(b"reports/nightly", token, seven);
//! assert!(key.verifies(b"reports/nightly", token, seven, &proof));
//! assert!(!key.verifies(b"reports/weekly", token, seven, &proof));
//! assert!(!key.verifies(b"reports/nightly", FencingToken::new(13).unwrap(), seven, &proof));
//! // The same token granted again, to another owner: another proof.
//! assert!(!key.verifies(b"reports/nightly", token, OwnerId::new(12), &proof));
//! let other = ProofKey::new(&[8; 32]).unwrap();
//! assert!(!other.verifies(b"reports/nightly", token, seven, &proof));
//! assert_eq!(TokenProof::from_bytes(*proof.as_bytes()), proof);
//! ```

use core::fmt;

use hmac::{Hmac, Mac};
use sha2::Sha256;

use crate::{FencingToken, OwnerId};

/// The first bytes of every signed message: what the message is, and the
/// version of its encoding.
pub const DOMAIN: &[u8; 30] = b"lease-machines grant proof v2\0";

/// A secret key, ready to sign and verify. Its `Debug` shows nothing of the
/// key.
#[derive(Clone)]
pub struct ProofKey {
    mac: Hmac<Sha256>,
}

/// A key shorter than [`ProofKey::MIN_LEN`] bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KeyTooShort {
    /// The key's length in bytes.
    pub len: usize,
}

impl fmt::Display for KeyTooShort {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "a signing key must have at least {} bytes, got {}",
            ProofKey::MIN_LEN,
            self.len
        )
    }
}

impl ProofKey {
    /// The shortest key accepted: the hash's output size, 32 bytes (RFC 2104
    /// advises no less; a shorter key is easier to guess than the proof).
    pub const MIN_LEN: usize = 32;

    /// A key from its secret bytes (any length from [`Self::MIN_LEN`]; HMAC
    /// hashes a key longer than SHA-256's 64-byte block first).
    ///
    /// # Errors
    ///
    /// [`KeyTooShort`] for fewer than [`Self::MIN_LEN`] bytes.
    pub fn new(secret: &[u8]) -> Result<Self, KeyTooShort> {
        let too_short = KeyTooShort { len: secret.len() };
        if secret.len() < Self::MIN_LEN {
            return Err(too_short);
        }
        // HMAC takes keys of every length; the error cannot happen.
        Hmac::<Sha256>::new_from_slice(secret)
            .map(|mac| Self { mac })
            .map_err(|_| too_short)
    }

    /// The proof that `token` was granted for `resource` to `owner`.
    #[must_use]
    pub fn prove(&self, resource: &[u8], token: FencingToken, owner: OwnerId) -> TokenProof {
        let bytes: [u8; TokenProof::LEN] = self
            .keyed(resource, token, owner)
            .finalize()
            .into_bytes()
            .into();
        TokenProof(bytes)
    }

    /// Whether `proof` is this key's proof for `resource`, `token` and
    /// `owner`, compared in constant time.
    #[must_use]
    pub fn verifies(
        &self,
        resource: &[u8],
        token: FencingToken,
        owner: OwnerId,
        proof: &TokenProof,
    ) -> bool {
        self.keyed(resource, token, owner)
            .verify_slice(&proof.0)
            .is_ok()
    }

    /// The MAC fed with the message (see the module's table).
    fn keyed(&self, resource: &[u8], token: FencingToken, owner: OwnerId) -> Hmac<Sha256> {
        let mut mac = self.mac.clone();
        mac.update(DOMAIN);
        // usize is at most 64 bits on every target Rust supports.
        mac.update(&(resource.len() as u64).to_be_bytes());
        mac.update(resource);
        mac.update(&token.value().to_be_bytes());
        mac.update(&owner.value().to_be_bytes());
        mac
    }
}

impl fmt::Debug for ProofKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ProofKey(..)")
    }
}

/// Whether any of `keys` verifies `proof` (key rotation: a fence accepts
/// the proofs of every key it holds). Every key is tried, so the time taken
/// does not tell which one matched.
#[must_use]
pub fn any_verifies(
    keys: &[ProofKey],
    resource: &[u8],
    token: FencingToken,
    owner: OwnerId,
    proof: &TokenProof,
) -> bool {
    keys.iter().fold(false, |found, key| {
        key.verifies(resource, token, owner, proof) | found
    })
}

/// An HMAC-SHA256 proof: 32 bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct TokenProof([u8; TokenProof::LEN]);

impl TokenProof {
    /// Its length in bytes.
    pub const LEN: usize = 32;

    /// A proof from its bytes (as shown to a fence).
    #[must_use]
    pub const fn from_bytes(bytes: [u8; Self::LEN]) -> Self {
        Self(bytes)
    }

    /// Its bytes.
    #[must_use]
    pub const fn as_bytes(&self) -> &[u8; Self::LEN] {
        &self.0
    }
}
