//! One Bloom filter "link": a fixed-size bit array sized for a capacity and an error rate,
//! exactly as RedisBloom sizes and addresses it (COMPAT §5.1–5.3).

pub(crate) use super::shape::{fields_are_consistent, options_are_loadable};
pub use super::shape::{
    LinkError, LinkShape, LN2, LN2_SQUARED, MAX_HASHES, OPT_ALL, OPT_ALL_REDBLOOM, OPT_BLOCKED,
    OPT_ENTS_IS_BITS, OPT_FORCE64, OPT_NOROUND, OPT_NO_SCALING,
};
use crate::bloom::blocked::{BlockedItem, BLOCK_BITS};
use crate::hash::HashPair;
use crate::memory::prefetch;
use strength_reduce::StrengthReducedU64;

/// The modulus bit positions are reduced by, with the division strength-reduced to
/// multiplications (computed once per link; positions are the hot path of every command).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Modulus(StrengthReducedU64);

impl Modulus {
    /// `2^n2` for power-of-two (legacy) links, else the bit count. Never panics: values a
    /// consistency check would reject get a harmless modulus of 1.
    pub fn of(bits: u64, n2: u8) -> Modulus {
        let m = match n2 {
            0 => bits,
            1..=63 => 1u64 << n2,
            _ => 1,
        };
        Modulus(StrengthReducedU64::new(m.max(1)))
    }

    #[inline]
    pub fn reduce(self, x: u64) -> u64 {
        x % self.0
    }

    pub fn get(self) -> u64 {
        self.0.get()
    }
}

impl PartialEq for Modulus {
    fn eq(&self, other: &Self) -> bool {
        self.get() == other.get()
    }
}

/// Bit arrays up to this size are taken to stay in the CPU caches (a per-core L2 holds
/// 1 – 4 MiB), so checking them gains nothing from requesting cache lines early.
pub(crate) const CACHE_RESIDENT_BYTES: usize = 1 << 20;

/// Up to this many hash functions, an add computes an item's positions once into a stack
/// buffer (every real error rate down to ~1e-19 needs fewer); beyond, it recomputes them.
pub(crate) const POSITION_BUFFER: usize = 64;

/// One sub-filter of a Bloom chain.
#[derive(Clone, Debug, PartialEq)]
pub struct Link {
    /// Capacity in items.
    pub(super) entries: u64,
    pub(super) error: f64,
    /// Bits per entry: −ln(error)/ln²2.
    pub(super) bpe: f64,
    pub(super) hashes: u32,
    /// Bit count; always `data.len() * 8` for a valid link.
    pub(super) bits: u64,
    /// log2 of the bit count for power-of-two (legacy) links, else 0.
    pub(super) n2: u8,
    /// Items added to this link.
    pub(super) items: u64,
    pub(super) data: Vec<u8>,
    /// Set bits of `data`, kept in step with every write (health: O(1) per link).
    pub(super) ones: u64,
    /// The cache-local layout (from the chain's options; not stored per link).
    pub(super) blocked: bool,
    /// Derived from `bits` and `n2`; not stored anywhere.
    modulus: Modulus,
    /// Blocks of a blocked link (derived from `bits`).
    blocks: u64,
}

impl Link {
    /// A new, empty link; refuses a bit array larger than `max_bytes`.
    pub(crate) fn new(shape: LinkShape, max_bytes: u64) -> Result<Self, LinkError> {
        if shape.bytes > max_bytes {
            return Err(LinkError::TooLarge);
        }
        let data = crate::zeroed_bytes(shape.bytes).map_err(|_| LinkError::OutOfMemory)?;
        Ok(Link::from_parts(shape, 0, data))
    }

    /// A link from stored fields (RDB file, dump header) and its bit array. Check the result
    /// with [`Link::is_consistent`] before use.
    pub(crate) fn from_parts(shape: LinkShape, items: u64, data: Vec<u8>) -> Link {
        Link {
            entries: shape.entries,
            error: shape.error,
            bpe: shape.bpe,
            hashes: shape.hashes,
            bits: shape.bits,
            n2: shape.n2,
            items,
            ones: crate::health::set_bits(&data),
            data,
            blocked: shape.blocked,
            modulus: Modulus::of(shape.bits, shape.n2),
            blocks: shape.bits / BLOCK_BITS,
        }
    }

    /// A deep copy, or `None` if memory cannot be had.
    pub fn try_clone(&self) -> Option<Link> {
        let data = crate::sparse_copy(&self.data).ok()?;
        Some(Link { data, ..*self })
    }

    /// A link of this one's shape holding `data` (of its length) and `items` (a merge).
    pub(crate) fn with_data(&self, items: u64, data: Vec<u8>) -> Link {
        Link {
            items,
            ones: crate::health::set_bits(&data),
            data,
            ..*self
        }
    }

    /// Bytes of the bit array.
    #[inline]
    pub fn bytes(&self) -> u64 {
        self.data.len() as u64
    }

    /// Capacity in items.
    #[inline]
    pub fn entries(&self) -> u64 {
        self.entries
    }

    /// Error rate of this link.
    #[inline]
    pub fn error(&self) -> f64 {
        self.error
    }

    /// Bits per entry: −ln(error)/ln²2.
    #[inline]
    pub fn bpe(&self) -> f64 {
        self.bpe
    }

    /// Number of hash functions (bits set per item).
    #[inline]
    pub fn hashes(&self) -> u32 {
        self.hashes
    }

    /// Bit count (`bytes() × 8`).
    #[inline]
    pub fn bits(&self) -> u64 {
        self.bits
    }

    /// log2 of the bit count for power-of-two (legacy) links, else 0.
    #[inline]
    pub fn n2(&self) -> u8 {
        self.n2
    }

    /// Items added to this link.
    #[inline]
    pub fn items(&self) -> u64 {
        self.items
    }

    /// Set bits of the bit array (kept on every write, not counted).
    #[inline]
    pub fn ones(&self) -> u64 {
        self.ones
    }

    /// Counts the set bits again (after the array was written other than bit by bit).
    pub(crate) fn recount(&mut self) {
        self.ones = crate::health::set_bits(&self.data);
    }

    /// The bit array: bit `p` in byte `p / 8`, mask `1 << p % 8`.
    #[inline]
    pub fn data(&self) -> &[u8] {
        &self.data
    }

    /// Whether the link has the cache-local layout of [`super::blocked`].
    #[inline]
    pub fn is_blocked(&self) -> bool {
        self.blocked
    }

    /// Whether a link read from a dump or an RDB file can be used safely.
    pub fn is_consistent(&self) -> bool {
        let check = if self.blocked {
            super::blocked::fields_are_consistent
        } else {
            fields_are_consistent
        };
        check(
            self.error,
            self.bpe,
            self.hashes,
            self.bits,
            self.bytes(),
            self.n2,
        )
    }

    /// The `i`-th bit position of an item: `(a + i·b) mod M` in wrapping 64-bit arithmetic.
    #[inline]
    pub(crate) fn position(&self, pair: HashPair, i: u32) -> u64 {
        self.modulus
            .reduce(pair.a.wrapping_add(u64::from(i).wrapping_mul(pair.b)))
    }

    /// Where a blocked link keeps the item.
    #[inline]
    fn blocked_item(&self, pair: HashPair) -> BlockedItem {
        BlockedItem::new(pair, self.blocks)
    }

    #[inline]
    fn bit(&self, pos: u64) -> bool {
        self.data[(pos >> 3) as usize] & (1 << (pos & 7)) != 0
    }

    /// Whether the bit array is small enough to stay in the CPU caches, where a check is
    /// cheapest bit by bit (see [`Link::check`]).
    #[inline]
    pub(crate) fn is_cache_resident(&self) -> bool {
        self.data.len() <= CACHE_RESIDENT_BYTES
    }

    /// Whether every bit of the item is set. In a cache-resident link the bits are tested
    /// one by one and the first clear one ends the check (most links of a grown chain do
    /// not hold a given item, and a clear bit is usually among the first two). In a larger
    /// one every position's cache line is requested before the first is tested, so the
    /// memory loads overlap instead of each waiting for the one before (the positions are
    /// computed again for the test: a multiply each, cheaper than keeping them).
    #[inline]
    pub fn check(&self, pair: HashPair) -> bool {
        // A blocked item's bits share one cache line: nothing to overlap.
        if !self.blocked && !self.is_cache_resident() {
            self.prefetch_positions(pair);
        }
        self.check_bit_by_bit(pair)
    }

    /// Requests the cache line of each of a classic link's positions of the item.
    #[inline]
    pub(crate) fn prefetch_positions(&self, pair: HashPair) {
        for i in 0..self.hashes {
            prefetch(&self.data, (self.position(pair, i) >> 3) as usize);
        }
    }

    /// Whether every bit of the item is set, stopping at the first clear one.
    #[inline]
    pub(crate) fn check_bit_by_bit(&self, pair: HashPair) -> bool {
        if self.blocked {
            let item = self.blocked_item(pair);
            return (0..self.hashes).all(|i| self.bit(item.position(i)));
        }
        (0..self.hashes).all(|i| self.bit(self.position(pair, i)))
    }

    /// Sets every bit of the item; true if at least one was clear (the item is new here).
    #[inline]
    pub(crate) fn set(&mut self, pair: HashPair) -> bool {
        let mut newly = false;
        if self.blocked {
            let item = self.blocked_item(pair);
            for i in 0..self.hashes {
                newly |= self.set_bit(item.position(i));
            }
            return newly;
        }
        for i in 0..self.hashes {
            let pos = self.position(pair, i);
            newly |= self.set_bit(pos);
        }
        newly
    }

    #[inline]
    fn set_bit(&mut self, pos: u64) -> bool {
        let byte = &mut self.data[(pos >> 3) as usize];
        let mask = 1u8 << (pos & 7);
        let was_clear = *byte & mask == 0;
        *byte |= mask;
        self.ones += u64::from(was_clear);
        was_clear
    }

    /// Writes the item's positions into `buf` when the hash count fits it, and requests
    /// their cache lines.
    #[inline]
    pub(crate) fn positions_prefetched_into<'b>(
        &self,
        pair: HashPair,
        buf: &'b mut [u64],
    ) -> Option<&'b [u64]> {
        let len = self.hashes as usize;
        let out = buf.get_mut(..len)?;
        if self.blocked {
            let item = self.blocked_item(pair);
            prefetch(&self.data, (item.base >> 3) as usize);
            for (i, slot) in out.iter_mut().enumerate() {
                *slot = item.position(i as u32);
            }
            return Some(out);
        }
        for (i, slot) in out.iter_mut().enumerate() {
            let pos = self.position(pair, i as u32);
            prefetch(&self.data, (pos >> 3) as usize);
            *slot = pos;
        }
        Some(out)
    }

    /// Requests the cache line of a blocked item's block.
    #[inline]
    pub fn prefetch_block(&self, pair: HashPair) {
        prefetch(&self.data, (self.blocked_item(pair).base >> 3) as usize);
    }

    /// Appends the item's positions to `out`, requesting their cache lines in a classic
    /// link. (A blocked item's line is requested by the batch, a group ahead, with
    /// [`Link::prefetch_block`].)
    #[inline]
    pub(crate) fn push_positions_prefetched(&self, pair: HashPair, out: &mut Vec<u64>) {
        if self.blocked {
            let item = self.blocked_item(pair);
            out.extend((0..self.hashes).map(|i| item.position(i)));
            return;
        }
        for i in 0..self.hashes {
            let pos = self.position(pair, i);
            prefetch(&self.data, (pos >> 3) as usize);
            out.push(pos);
        }
    }

    /// Whether all of the given positions are set.
    #[inline]
    pub(crate) fn check_positions(&self, positions: &[u64]) -> bool {
        positions.iter().all(|&pos| self.bit(pos))
    }

    /// Sets the given positions; true if at least one was clear.
    #[inline]
    pub(crate) fn set_positions(&mut self, positions: &[u64]) -> bool {
        // The clear bits counted here and added once (`ones` is not written per bit).
        let mut cleared = 0;
        for &pos in positions {
            let byte = &mut self.data[(pos >> 3) as usize];
            let mask = 1u8 << (pos & 7);
            cleared += u64::from(*byte & mask == 0);
            *byte |= mask;
        }
        self.ones += cleared;
        cleared != 0
    }

    /// Bit positions of an item, in hash order (for tests and tools).
    pub fn positions(&self, pair: HashPair) -> impl Iterator<Item = u64> + '_ {
        let item = self.blocked_item(pair);
        (0..self.hashes).map(move |i| {
            if self.blocked {
                item.position(i)
            } else {
                self.position(pair, i)
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bloom::shape::binary_exponent;

    const CMD_OPTIONS: u32 = OPT_NOROUND | OPT_FORCE64;

    fn shape(entries: u64, error: f64) -> LinkShape {
        LinkShape::new(entries, error, CMD_OPTIONS).unwrap()
    }

    #[test]
    fn sizing_examples_of_compat() {
        for (entries, error, bytes, bits, hashes) in [
            (10, 0.005, 16, 128, 8),
            (100, 0.005, 144, 1152, 8),
            (100, 0.0005, 200, 1600, 11),
            (10, 0.05, 8, 64, 5),
            (50000, 0.0005, 98880, 791040, 11),
            (3, 0.01, 8, 64, 7),
        ] {
            let s = shape(entries, error);
            assert_eq!(
                (s.bytes, s.bits, s.hashes, s.n2, s.entries),
                (bytes, bits, hashes, 0, entries),
                "{entries}/{error}"
            );
        }
    }

    #[test]
    fn invalid_parameters_are_refused() {
        for (entries, error) in [(0, 0.01), (10, 0.0), (10, 1.0), (10, -0.5), (10, f64::NAN)] {
            assert_eq!(
                LinkShape::new(entries, error, CMD_OPTIONS),
                Err(LinkError::Invalid)
            );
        }
    }

    #[test]
    fn huge_links_respect_the_ceiling() {
        let s = shape(1_000_000_000_000, 0.01);
        assert_eq!(Link::new(s, 1 << 30), Err(LinkError::TooLarge));
        // More bits than a u64 holds: too large for any ceiling, not "invalid".
        for entries in [i64::MAX as u64, u64::MAX, 1 << 61] {
            assert_eq!(
                LinkShape::new(entries, 0.01, CMD_OPTIONS),
                Err(LinkError::TooLarge)
            );
        }
    }

    #[test]
    fn legacy_power_of_two_sizing() {
        // 100 entries at 0.01: 958.5 bits wanted → 2^10 bits, extra capacity for the rest.
        let s = LinkShape::new(100, 0.01, 0).unwrap();
        assert_eq!((s.n2, s.bits, s.bytes), (10, 1024, 128));
        assert_eq!(
            s.entries,
            100 + ((1024.0 - 100.0 * s.bpe) as u64 as f64 / s.bpe) as u64
        );
        assert_eq!(binary_exponent(958.5), 9);
        assert_eq!(binary_exponent(1.0), 0);
        assert_eq!(binary_exponent(0.75), -1);
    }

    #[test]
    fn positions_of_default_filter_match_redisbloom() {
        let link = Link::new(shape(100, 0.005), u64::MAX).unwrap();
        let cases: [(&[u8], [u64; 8]); 4] = [
            (b"", [366, 1077, 764, 451, 138, 849, 536, 223]),
            (b"a", [1034, 539, 172, 829, 462, 1119, 752, 257]),
            (b"hello", [537, 957, 97, 517, 809, 77, 497, 789]),
            (b"user:12345", [720, 845, 970, 1095, 1092, 65, 190, 315]),
        ];
        for (item, want) in cases {
            let got: Vec<u64> = link.positions(HashPair::wide(item)).collect();
            assert_eq!(got, want, "{item:?}");
        }
    }

    #[test]
    fn item1_in_a_tiny_filter_sets_the_documented_bytes() {
        let mut link = Link::new(shape(10, 0.05), u64::MAX).unwrap();
        let pair = HashPair::wide(b"item1");
        assert_eq!(
            link.positions(pair).collect::<Vec<_>>(),
            vec![11, 0, 53, 42, 31]
        );
        assert!(!link.check(pair));
        assert!(link.set(pair));
        assert!(link.check(pair));
        assert!(!link.set(pair));
        assert_eq!(link.data, [0x01, 0x08, 0x00, 0x80, 0x00, 0x04, 0x20, 0x00]);
    }

    #[test]
    fn consistency_check_rejects_unsafe_links() {
        let good = Link::new(shape(100, 0.005), u64::MAX).unwrap();
        assert!(good.is_consistent());
        let mut bad = good.clone();
        bad.bits += 8;
        assert!(!bad.is_consistent());
        let mut bad = good.clone();
        bad.n2 = 20;
        assert!(!bad.is_consistent());
        let mut bad = good.clone();
        bad.hashes = 9;
        assert!(!bad.is_consistent());
        let mut bad = good.clone();
        bad.error = 1.0;
        assert!(!bad.is_consistent());
        let mut bad = good;
        bad.bpe = 1e12;
        bad.hashes = (LN2 * 1e12).ceil() as u32;
        assert!(!bad.is_consistent());
    }
}
