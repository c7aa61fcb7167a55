//! Owner ids from names: a stable 64-bit hash of a name's bytes.
//!
//! The hash is FNV-1a, 64-bit (Fowler, Noll, Vo): start from the offset basis
//! `0xcbf29ce484222325`; for each byte, XOR it into the state, then multiply
//! by the prime `0x100000001b3` modulo 2**64. It depends on nothing but the
//! bytes, so every process, host, architecture and language that implements
//! it gets the same owner for the same name. It is not a keyed hash: owner ids
//! are not secrets, and the authority compares them only for equality.

use crate::OwnerId;

/// The FNV-1a 64-bit offset basis.
pub const FNV1A_64_OFFSET_BASIS: u64 = 0xcbf2_9ce4_8422_2325;
/// The FNV-1a 64-bit prime.
pub const FNV1A_64_PRIME: u64 = 0x0000_0100_0000_01b3;

/// FNV-1a, 64-bit, of `bytes`.
///
/// ```
/// use lease_machines::fnv1a_64;
///
/// assert_eq!(fnv1a_64(b""), 0xcbf2_9ce4_8422_2325);
/// assert_eq!(fnv1a_64(b"a"), 0xaf63_dc4c_8601_ec8c);
/// assert_eq!(fnv1a_64(b"foobar"), 0x8594_4171_f739_67e8);
/// ```
#[must_use]
pub const fn fnv1a_64(bytes: &[u8]) -> u64 {
    let mut state = FNV1A_64_OFFSET_BASIS;
    let mut rest = bytes;
    while let [byte, tail @ ..] = rest {
        state ^= *byte as u64;
        state = state.wrapping_mul(FNV1A_64_PRIME);
        rest = tail;
    }
    state
}

impl OwnerId {
    /// The owner id of a name (a host name, a pid, a job id): [`fnv1a_64`] of
    /// its bytes.
    ///
    /// ```
    /// use lease_machines::OwnerId;
    ///
    /// assert_eq!(OwnerId::of_name(b"a").value(), 0xaf63_dc4c_8601_ec8c);
    /// ```
    #[must_use]
    pub const fn of_name(bytes: &[u8]) -> Self {
        Self::new(fnv1a_64(bytes))
    }
}
