//! RedisBloom's hashes: MurmurHash64A for current filters, 32-bit MurmurHash2 for
//! legacy (non-FORCE64) Bloom filters found in old RDB files and dumps and for the rows
//! of a Top-K or a Count-Min sketch.

use strength_reduce::StrengthReducedU32;

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

/// How many seeds [`murmur2_lanes`] hashes side by side.
pub const HASH_LANES: usize = 8;

/// [`murmur2_32`] of `bytes` under each of `seeds`, in one pass: each 4-byte block is
/// read and mixed (`k *= m; k ^= k >> 24; k *= m`) once, as is the tail, since neither
/// depends on the seed; each seed then costs a multiply and a xor per block, done for
/// every seed before the next block (a Top-K's fingerprint and seven rows, or a
/// Count-Min sketch's first eight rows).
#[inline]
pub fn murmur2_lanes(bytes: &[u8], seeds: [u32; HASH_LANES]) -> [u32; HASH_LANES] {
    let len = bytes.len() as u32;
    let mut h = seeds.map(|seed| seed ^ len);
    let mut blocks = bytes.chunks_exact(4);
    for block in &mut blocks {
        let mut k = u32::from_le_bytes([block[0], block[1], block[2], block[3]]);
        k = k.wrapping_mul(M2);
        k ^= k >> R2;
        k = k.wrapping_mul(M2);
        for x in &mut h {
            *x = x.wrapping_mul(M2) ^ k;
        }
    }
    let rest = blocks.remainder();
    if !rest.is_empty() {
        let tail = rest
            .iter()
            .enumerate()
            .fold(0u32, |t, (i, &b)| t | u32::from(b) << (8 * i));
        for x in &mut h {
            *x = (*x ^ tail).wrapping_mul(M2);
        }
    }
    for x in &mut h {
        *x ^= *x >> 13;
        *x = x.wrapping_mul(M2);
        *x ^= *x >> 15;
    }
    h
}

/// An item's hashes for a sketch's rows (RedisBloom seeds row `i`'s hash with `i`), and
/// optionally one more seed's first (a Top-K's fingerprint): the first [`HASH_LANES`]
/// are computed together ([`murmur2_lanes`]), any further row on its own.
pub struct RowHashes<'a> {
    bytes: &'a [u8],
    lanes: [u32; HASH_LANES],
    /// The lane of row 0: 1 with a leading seed, else 0.
    first_row: usize,
}

impl<'a> RowHashes<'a> {
    #[inline]
    pub fn new(bytes: &'a [u8], lead: Option<u32>) -> Self {
        let first_row = usize::from(lead.is_some());
        let mut seeds = [0u32; HASH_LANES];
        for (lane, seed) in seeds.iter_mut().enumerate() {
            *seed = lane.wrapping_sub(first_row) as u32;
        }
        if let Some(lead) = lead {
            seeds[0] = lead;
        }
        RowHashes {
            bytes,
            lanes: murmur2_lanes(bytes, seeds),
            first_row,
        }
    }

    /// The hash under the leading seed (row 0's without one).
    #[inline]
    pub fn lead(&self) -> u32 {
        self.lanes[0]
    }

    /// The hash for `row`.
    #[inline]
    pub fn row(&self, row: u32) -> u32 {
        match self.lanes.get(row as usize + self.first_row) {
            Some(&hash) => hash,
            None => murmur2_32(self.bytes, row),
        }
    }
}

/// A Top-K's width as its row hashes are reduced by it: `hash % width` strength-reduced
/// to multiplications (set up once per sketch; TOPK.ADD reduces one hash per row, and a
/// division is several times the latency: TOPK.ADD ×100 takes 8 % less server CPU).
#[derive(Clone, Copy, Debug)]
pub struct Columns(StrengthReducedU32);

impl Columns {
    /// Never panics: a width of 0, which no sketch has, is taken as 1.
    pub fn new(width: u32) -> Columns {
        Columns(StrengthReducedU32::new(width.max(1)))
    }

    /// `hash % width`.
    #[inline]
    pub fn of(self, hash: u32) -> u32 {
        hash % self.0
    }
}

impl PartialEq for Columns {
    fn eq(&self, other: &Self) -> bool {
        self.0.get() == other.0.get()
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
    fn lanes_hash_as_murmur2_under_each_seed() {
        let bytes: Vec<u8> = (0..90u32)
            .map(|i| (i * 37 + 11) as u8 | (0x80 * (i as u8 & 1)))
            .collect();
        let seeds = [1919, 0, 1, 2, 0x9747_b28c, 11, u32::MAX, 6];
        for len in 0..bytes.len() {
            let item = &bytes[..len];
            let lanes = murmur2_lanes(item, seeds);
            assert_eq!(lanes, seeds.map(|seed| murmur2_32(item, seed)), "len {len}");
        }
    }

    #[test]
    fn row_hashes_are_each_row_s_murmur2() {
        for item in [&b""[..], b"a", b"topk:12345", &[7u8; 70]] {
            for lead in [None, Some(1919)] {
                let hashes = RowHashes::new(item, lead);
                for row in 0..20 {
                    assert_eq!(hashes.row(row), murmur2_32(item, row), "{item:?} {lead:?}");
                }
                let lead_seed = lead.unwrap_or(0);
                assert_eq!(hashes.lead(), murmur2_32(item, lead_seed));
            }
        }
    }

    #[test]
    fn columns_reduce_as_the_remainder() {
        let hashes = [0, 1, 2, 1999, 2000, 0x8000_0000, u32::MAX - 1, u32::MAX];
        for width in [1, 2, 3, 7, 1000, 2000, 2048, 65_537, u32::MAX - 1, u32::MAX] {
            let columns = Columns::new(width);
            for hash in hashes
                .into_iter()
                .chain((0..2000).map(|i| i * 2_147_483 + 17))
            {
                assert_eq!(columns.of(hash), hash % width, "{hash} % {width}");
            }
        }
        assert_eq!(Columns::new(0).of(5), 0);
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
