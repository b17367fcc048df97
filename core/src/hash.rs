//! RedisBloom's hashes: MurmurHash64A for current filters, 32-bit MurmurHash2 for
//! legacy (non-FORCE64) Bloom filters found in old RDB files and dumps.

/// Seed of the first 64-bit Bloom hash (MurmurHash64A's own multiplier).
pub const BLOOM_SEED64: u64 = 0xc6a4a7935bd1e995;
/// Seed of the first 32-bit (legacy) Bloom hash.
pub const BLOOM_SEED32: u32 = 0x9747b28c;

/// MurmurHash64A as RedisBloom computes it on little-endian machines.
#[inline]
pub fn murmur64a(bytes: &[u8], seed: u64) -> u64 {
    murmur2::murmur64a(bytes, seed)
}

/// 32-bit MurmurHash2 as RedisBloom computes it on little-endian machines.
#[inline]
pub fn murmur2_32(bytes: &[u8], seed: u32) -> u32 {
    murmur2::murmur2(bytes, seed)
}

/// The pair (a, b) from which a Bloom filter derives every bit position of an item:
/// position i is `(a + i·b) mod M`. Computed once per item per command. A plain value:
/// public fields, any values are safe (every position is reduced modulo the bit count).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HashPair {
    pub a: u64,
    pub b: u64,
}

impl HashPair {
    /// The 64-bit pair used by every filter created with FORCE64 (all command-created ones).
    #[inline]
    pub fn wide(item: &[u8]) -> Self {
        let a = murmur64a(item, BLOOM_SEED64);
        HashPair {
            a,
            b: murmur64a(item, a),
        }
    }

    /// The legacy 32-bit pair, zero-extended.
    #[inline]
    pub fn narrow(item: &[u8]) -> Self {
        let a = murmur2_32(item, BLOOM_SEED32);
        HashPair {
            a: u64::from(a),
            b: u64::from(murmur2_32(item, a)),
        }
    }

    #[inline]
    pub fn of(item: &[u8], force64: bool) -> Self {
        if force64 {
            Self::wide(item)
        } else {
            Self::narrow(item)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// COMPAT §5.5: (input, bloom a, bloom b, cuckoo hash, m2 seed 0x9747b28c, m2 seed a32).
    #[allow(clippy::type_complexity)]
    const VECTORS: &[(&[u8], u64, u64, u64, u32, u32)] = &[
        (
            b"",
            0x1ab11ea5a7b2c56e,
            0xbbddcb5ab56dd547,
            0x0000000000000000,
            0x106e08d9,
            0x456d9087,
        ),
        (
            b"a",
            0x4292cee227b9150a,
            0x7e9b527031f50c11,
            0x071717d2d36b6b11,
            0xa2d0b27c,
            0x2e36e8b4,
        ),
        (
            b"hello",
            0x5ba5b8a59803e699,
            0xa7d451d588a0c2a4,
            0x1e68d17c457bf117,
            0x7f1ddbbd,
            0xed999d2d,
        ),
        (
            b"user:12345",
            0xd6ae6736a19559d0,
            0xc80c78776d37c2fd,
            0xc0214ccfd47f713f,
            0x4715e430,
            0xb040ea82,
        ),
        (
            b"item1",
            0xa053790e072b2e8b,
            0x707e5d60182eb075,
            0x7930a108c52a9032,
            0xfb5a68e6,
            0xd565ab38,
        ),
        (
            b"foo",
            0x822b4f99b121f10d,
            0x9d63d52a557f61c2,
            0xcdde38358fd25b01,
            0x23a256d0,
            0x9fbc0655,
        ),
        (
            b"abcdefgh",
            0xd435df7a565a8af1,
            0xbf3d673c0b1029cf,
            0xafdb0257ff41aa98,
            0xc70d55dd,
            0xd8fd56f3,
        ),
        (
            b"abcdefghi",
            0xa2c004e44bd0a465,
            0x28459a22cef68950,
            0xc9b9d84356146ac2,
            0xdb106fbe,
            0x9cc85bc8,
        ),
    ];

    #[test]
    fn murmur_vectors_match_redisbloom() {
        for &(input, a, b, cuckoo, m2, m2a) in VECTORS {
            assert_eq!(HashPair::wide(input), HashPair { a, b }, "{input:?}");
            assert_eq!(murmur64a(input, 0), cuckoo, "{input:?}");
            assert_eq!(murmur2_32(input, BLOOM_SEED32), m2, "{input:?}");
            assert_eq!(murmur2_32(input, m2), m2a, "{input:?}");
            assert_eq!(
                HashPair::narrow(input),
                HashPair {
                    a: u64::from(m2),
                    b: u64::from(m2a)
                }
            );
        }
    }
}
