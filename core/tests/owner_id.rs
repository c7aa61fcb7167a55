//! `fnv1a_64` and `OwnerId::of_name` against the FNV-1a 64-bit reference
//! vectors published with the algorithm (Landon Curt Noll's `test_fnv.c`,
//! `fnv1a_64_vector`).

use lease_machines::{fnv1a_64, OwnerId, FNV1A_64_OFFSET_BASIS, FNV1A_64_PRIME};

const REFERENCE: &[(&[u8], u64)] = &[
    (b"", 0xcbf2_9ce4_8422_2325),
    (b"a", 0xaf63_dc4c_8601_ec8c),
    (b"b", 0xaf63_df4c_8601_f1a5),
    (b"c", 0xaf63_de4c_8601_eff2),
    (b"d", 0xaf63_d94c_8601_e773),
    (b"e", 0xaf63_d84c_8601_e5c0),
    (b"f", 0xaf63_db4c_8601_ead9),
    (b"fo", 0x0898_5907_b541_d342),
    (b"foo", 0xdcb2_7518_fed9_d577),
    (b"foob", 0xdd12_0e79_0c25_12af),
    (b"fooba", 0xcac1_65af_a2fe_f40a),
    (b"foobar", 0x8594_4171_f739_67e8),
];

#[test]
fn matches_the_published_reference_vectors() {
    for (bytes, expected) in REFERENCE {
        assert_eq!(fnv1a_64(bytes), *expected, "{bytes:?}");
        assert_eq!(OwnerId::of_name(bytes).value(), *expected, "{bytes:?}");
    }
}

#[test]
fn the_constants_are_the_published_ones() {
    assert_eq!(FNV1A_64_OFFSET_BASIS, 14_695_981_039_346_656_037);
    assert_eq!(FNV1A_64_PRIME, 1_099_511_628_211);
}

#[test]
fn every_byte_counts_and_order_matters() {
    assert_ne!(fnv1a_64(b"ab"), fnv1a_64(b"ba"));
    assert_ne!(fnv1a_64(b"a\0"), fnv1a_64(b"a"));
    assert_ne!(fnv1a_64(&[0xff]), fnv1a_64(&[0xfe]));
}

#[test]
fn is_usable_in_const_context() {
    const HOST: OwnerId = OwnerId::of_name(b"foobar");
    assert_eq!(HOST.value(), 0x8594_4171_f739_67e8);
}
