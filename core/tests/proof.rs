//! Signed tokens: the proof's known answers, computed outside this crate,
//! and the properties a fence relies on.
#![allow(
    clippy::unwrap_used,
    clippy::indexing_slicing,
    clippy::arithmetic_side_effects
)]

use lease_machines::{any_verifies, FencingToken, KeyTooShort, ProofKey, TokenProof, PROOF_DOMAIN};

fn hex(proof: &TokenProof) -> [u8; 64] {
    let digits = b"0123456789abcdef";
    let mut out = [0u8; 64];
    for (i, byte) in proof.as_bytes().iter().enumerate() {
        out[2 * i] = digits[usize::from(byte >> 4)];
        out[2 * i + 1] = digits[usize::from(byte & 15)];
    }
    out
}

fn key(bytes: &[u8]) -> ProofKey {
    ProofKey::new(bytes).unwrap()
}

fn token(value: u64) -> FencingToken {
    FencingToken::new(value).unwrap()
}

/// The key 0x00, 0x01, ..., 0x1f.
fn counting_key() -> ProofKey {
    let mut bytes = [0u8; 32];
    for (i, byte) in bytes.iter_mut().enumerate() {
        *byte = u8::try_from(i).unwrap();
    }
    key(&bytes)
}

// Known answers, computed independently of this crate with Python's hmac
// module (docs/FENCES.md, "Signed tokens", shows the script) and with
// `openssl dgst -sha256 -mac HMAC -macopt hexkey:...`.
#[test]
fn known_answers() {
    let counting = counting_key();
    let cases: [(&ProofKey, &[u8], u64, &str); 4] = [
        (
            &counting,
            b"reports/nightly",
            1,
            "5bad28f307748b19858ad0a34f39c7a7f6157096b6b7c640c7adea989d697794",
        ),
        (
            &counting,
            b"reports/nightly",
            u64::MAX,
            "1cb565790631ee05925bf89530ddeb196e1aabb8de2ceca69d3216e9dcd23da0",
        ),
        (
            &counting,
            "caf\u{e9}/\u{1f4c8}".as_bytes(),
            9_223_372_036_854_775_808,
            "9daf351f97cdb3a1dd443a00692bb0cf29600cbd053b67c4bcd9406857a79364",
        ),
        (
            &key(b"a signing key of exactly 32 byte"),
            b"r",
            42,
            "832de48d5ffa8ce7b6d4cb4bdedc59a913846d331ac9af314056b7bed6ba3a29",
        ),
    ];
    for (key, resource, value, expected) in cases {
        let proof = key.prove(resource, token(value));
        assert_eq!(core::str::from_utf8(&hex(&proof)).unwrap(), expected);
        assert!(key.verifies(resource, token(value), &proof));
    }
}

#[test]
fn short_keys_are_refused() {
    assert_eq!(
        ProofKey::new(&[1; 31]).unwrap_err(),
        KeyTooShort { len: 31 }
    );
    assert_eq!(ProofKey::new(b"").unwrap_err(), KeyTooShort { len: 0 });
    assert!(ProofKey::new(&[1; 32]).is_ok());
    assert!(ProofKey::new(&[1; 200]).is_ok());
}

#[test]
fn the_length_prefix_keeps_names_apart() {
    // Without the prefix, ("ab", token) and ("a", token') could share
    // bytes; with it, every change of the name changes the proof.
    let key = counting_key();
    let proof = key.prove(b"ab", token(1));
    assert!(!key.verifies(b"a", token(1), &proof));
    assert!(!key.verifies(b"ab\0", token(1), &proof));
    assert!(!key.verifies(b"", token(1), &proof));
}

#[test]
fn a_changed_byte_is_refused() {
    let key = counting_key();
    let proof = key.prove(b"reports/nightly", token(5));
    for i in 0..TokenProof::LEN {
        let mut bytes = *proof.as_bytes();
        bytes[i] ^= 1;
        assert!(!key.verifies(b"reports/nightly", token(5), &TokenProof::from_bytes(bytes)));
    }
}

#[test]
fn rotation_accepts_any_key() {
    let old = key(&[1; 32]);
    let new = key(&[2; 32]);
    let stranger = key(&[3; 32]);
    let proof = old.prove(b"r", token(3));
    assert!(any_verifies(
        &[new.clone(), old.clone()],
        b"r",
        token(3),
        &proof
    ));
    assert!(!any_verifies(&[new, stranger], b"r", token(3), &proof));
    assert!(!any_verifies(&[], b"r", token(3), &proof));
}

#[test]
fn debug_hides_the_key() {
    assert_eq!(format!("{:?}", counting_key()), "ProofKey(..)");
}

#[test]
fn the_domain_prefix_is_fixed() {
    assert_eq!(PROOF_DOMAIN, b"lease-machines token proof v1\0");
}
