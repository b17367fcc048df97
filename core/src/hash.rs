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

/// MurmurHash2's multiplier and shift.
const M2: u32 = 0x5bd1_e995;
const R2: u32 = 24;

/// How long an item [`Murmur2Item`] prepares may be (longer ones are hashed per seed).
const PREPARED_BLOCKS: usize = 16;

/// An item hashed with 32-bit MurmurHash2 under several seeds (a Top-K's or a Count-Min
/// sketch's rows): each 4-byte block's mixing (`k *= m; k ^= k >> 24; k *= m`) and the
/// tail do not depend on the seed, so they are done once, and each seed costs a
/// multiply and a xor per block — a third of a full hash for a 10-byte item.
pub struct Murmur2Item<'a> {
    bytes: &'a [u8],
    /// The mixed blocks, when the item has at most [`PREPARED_BLOCKS`] of them.
    mixed: Option<[u32; PREPARED_BLOCKS]>,
    blocks: usize,
    /// The last `len % 4` bytes, little-endian, as the hash xors them in.
    tail: u32,
}

impl<'a> Murmur2Item<'a> {
    pub fn new(bytes: &'a [u8]) -> Self {
        let blocks = bytes.len() / 4;
        let rest = &bytes[blocks * 4..];
        let tail = rest
            .iter()
            .enumerate()
            .fold(0u32, |t, (i, &b)| t | u32::from(b) << (8 * i));
        let mixed = (blocks <= PREPARED_BLOCKS).then(|| {
            let mut mixed = [0u32; PREPARED_BLOCKS];
            for (m, chunk) in mixed.iter_mut().zip(bytes.chunks_exact(4)) {
                let mut k = u32::from_le_bytes([chunk[0], chunk[1], chunk[2], chunk[3]]);
                k = k.wrapping_mul(M2);
                k ^= k >> R2;
                *m = k.wrapping_mul(M2);
            }
            mixed
        });
        Murmur2Item {
            bytes,
            mixed,
            blocks,
            tail,
        }
    }

    /// [`murmur2_32`] of the item with `seed`.
    #[inline]
    pub fn hash(&self, seed: u32) -> u32 {
        let Some(mixed) = &self.mixed else {
            return murmur2_32(self.bytes, seed);
        };
        let mut h = seed ^ self.bytes.len() as u32;
        for &k in &mixed[..self.blocks] {
            h = h.wrapping_mul(M2) ^ k;
        }
        if !self.bytes.len().is_multiple_of(4) {
            h = (h ^ self.tail).wrapping_mul(M2);
        }
        h ^= h >> 13;
        h = h.wrapping_mul(M2);
        h ^ (h >> 15)
    }
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
    fn a_prepared_item_hashes_as_murmur2_under_every_seed() {
        let bytes: Vec<u8> = (0..90u32)
            .map(|i| (i * 37 + 11) as u8 | (0x80 * (i as u8 & 1)))
            .collect();
        for len in 0..bytes.len() {
            let item = &bytes[..len];
            let prepared = Murmur2Item::new(item);
            for seed in (0..12).chain([0x9747_b28c, u32::MAX, 1919]) {
                assert_eq!(
                    prepared.hash(seed),
                    murmur2_32(item, seed),
                    "len {len} seed {seed}"
                );
            }
        }
    }

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
