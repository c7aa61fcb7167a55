//! Signed tokens: the proof's known answers, computed outside this crate,
//! and the properties a fence relies on.
#![allow(
    clippy::unwrap_used,
    clippy::indexing_slicing,
    clippy::arithmetic_side_effects
)]

use lease_machines::{
    any_verifies, FencingToken, KeyTooShort, OwnerId, ProofKey, TokenProof, PROOF_DOMAIN,
};

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
    let cases: [(&ProofKey, &[u8], u64, u64, &str); 5] = [
        (
            &counting,
            b"reports/nightly",
            1,
            7,
            "9d0f53392b0398953b2a9248c0f6b43ff899899323b1bb27ed598877fc8a1edf",
        ),
        (
            &counting,
            b"reports/nightly",
            1,
            12,
            "1e2a5423fdbbfd56e967fc13ce0dfdd0cb0a2f41fc20d0be05b5078c07e3b77c",
        ),
        (
            &counting,
            b"reports/nightly",
            u64::MAX,
            u64::MAX,
            "90ed9c03d5b1ed64dca38a24ee1d38f7455777b5d36d48a601413a1089cba457",
        ),
        (
            &counting,
            "caf\u{e9}/\u{1f4c8}".as_bytes(),
            9_223_372_036_854_775_808,
            0,
            "8595dccfd87035d78ac4c6d10889b207ebd8d495408bb760724ae1d863e29c34",
        ),
        (
            &key(b"a signing key of exactly 32 byte"),
            b"r",
            42,
            9_223_372_036_854_775_808,
            "beb109ef9aee7a1b0bbd154560ab124c5344fa14974273d08752f97c1799d33f",
        ),
    ];
    for (key, resource, value, owner, expected) in cases {
        let proof = key.prove(resource, token(value), OwnerId::new(owner));
        assert_eq!(core::str::from_utf8(&hex(&proof)).unwrap(), expected);
        assert!(key.verifies(resource, token(value), OwnerId::new(owner), &proof));
    }
}

#[test]
fn a_token_granted_twice_to_two_owners_has_two_proofs() {
    let key = counting_key();
    let first = key.prove(b"reports/nightly", token(1), OwnerId::new(7));
    let again = key.prove(b"reports/nightly", token(1), OwnerId::new(12));
    assert_ne!(first, again);
    assert!(!key.verifies(b"reports/nightly", token(1), OwnerId::new(12), &first));
    assert!(!key.verifies(b"reports/nightly", token(1), OwnerId::new(7), &again));
}

// A proof of the first form (v1: no owner, its own prefix; the gem's 0.3)
// verifies under no owner: the vector is v1's known answer for
// (0x00..0x1f, "reports/nightly", 1).
#[test]
fn a_proof_of_the_first_form_is_refused() {
    let v1 = "5bad28f307748b19858ad0a34f39c7a7f6157096b6b7c640c7adea989d697794";
    let mut bytes = [0u8; 32];
    for (i, byte) in bytes.iter_mut().enumerate() {
        *byte = u8::from_str_radix(&v1[2 * i..2 * i + 2], 16).unwrap();
    }
    let proof = TokenProof::from_bytes(bytes);
    for owner in [0, 1, 7, u64::MAX] {
        assert!(!counting_key().verifies(
            b"reports/nightly",
            token(1),
            OwnerId::new(owner),
            &proof
        ));
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
    let owner = OwnerId::new(1);
    let proof = key.prove(b"ab", token(1), owner);
    assert!(!key.verifies(b"a", token(1), owner, &proof));
    assert!(!key.verifies(b"ab\0", token(1), owner, &proof));
    assert!(!key.verifies(b"", token(1), owner, &proof));
}

#[test]
fn a_changed_byte_is_refused() {
    let key = counting_key();
    let owner = OwnerId::new(1);
    let proof = key.prove(b"reports/nightly", token(5), owner);
    for i in 0..TokenProof::LEN {
        let mut bytes = *proof.as_bytes();
        bytes[i] ^= 1;
        assert!(!key.verifies(
            b"reports/nightly",
            token(5),
            owner,
            &TokenProof::from_bytes(bytes)
        ));
    }
}

#[test]
fn rotation_accepts_any_key() {
    let old = key(&[1; 32]);
    let new = key(&[2; 32]);
    let stranger = key(&[3; 32]);
    let owner = OwnerId::new(4);
    let proof = old.prove(b"r", token(3), owner);
    assert!(any_verifies(
        &[new.clone(), old.clone()],
        b"r",
        token(3),
        owner,
        &proof
    ));
    assert!(!any_verifies(
        &[new, stranger],
        b"r",
        token(3),
        owner,
        &proof
    ));
    assert!(!any_verifies(&[], b"r", token(3), owner, &proof));
}

#[test]
fn debug_hides_the_key() {
    assert_eq!(format!("{:?}", counting_key()), "ProofKey(..)");
}

#[test]
fn the_domain_prefix_is_fixed() {
    assert_eq!(PROOF_DOMAIN, b"lease-machines grant proof v2\0");
}
