//! The static filter (SF.*) over a set known when it is built. It cannot take items later.
//! Two encodings: a standard ribbon filter ([`ribbon`], the default since encoding 2: under
//! 7.0 bits per item at 1 %) and the binary fuse filter below (Graf & Lemire, "Binary Fuse
//! Filters: Fast and Smaller Than Xor Filters", 2022; encoding 1, `ENCODING FUSE`), which
//! needs ~1.13 × ⌈log2(1/ε)⌉ bits per item (7.9 at 1 %, against 9.6 for the best Bloom
//! filter) and reads three fingerprints per lookup.
//!
//! **Items.** An item's key is the 64-bit XXH3 of its bytes ([`item_key`]), the same in
//! the server, the CLI and any program using this crate. The filter holds the distinct
//! keys: duplicates count once (two distinct items whose keys collide, a 2^-64 event per
//! pair, count once too, and the second is then found).
//!
//! **Layout.** `3` fingerprint slots per key, one in each of three consecutive segments of
//! `segment_length` slots (a power of two); the array has `segment_count + 2` segments.
//! A key is present when the XOR of its fingerprint and its three slots is zero, which an
//! absent key meets with probability 2^-bits. Fingerprints are `bits` wide, 1 to 32,
//! packed back to back into little-endian 64-bit words (slot `i` at bit `i · bits`).
//!
//! **Construction** ([`build`]) is deterministic: the sizing depends on the number of
//! distinct keys only, the hash on the key and a seed; the first seed is [`FIRST_SEED`]
//! and a failed peel retries with the next one. The seed that worked is stored, so the
//! same items always give the same bytes, on a master, its replicas and in the CLI.
//!
//! ```
//! use redbloom_core::static_filter::{build_with, item_key, Encoding};
//!
//! let keys: Vec<u64> = ["apple", "pear", "plum"].iter().map(|i| item_key(i.as_bytes())).collect();
//! let filter = build_with(keys, 0.01, u64::MAX, Encoding::Fuse).unwrap();
//! assert!(filter.contains(item_key(b"pear")));
//! assert_eq!((filter.items(), filter.bits()), (3, 7));
//! ```

mod banding;
#[cfg(test)]
mod banding_tests;
pub mod build;
pub mod bumped;
pub mod dump;
mod health;
pub mod rdb;
pub mod ribbon;
#[cfg(test)]
mod ribbon_measures;
#[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
mod ribbon_query;
#[cfg(test)]
mod ribbon_room_measures;
#[cfg(test)]
mod ribbon_tests;
#[cfg(test)]
mod tests;

pub use build::{bits_for, build, build_with, working_bytes, BuildError, Encoding, Shape};
pub use bumped::Bumped;
pub use ribbon::Ribbon;

use xxhash_rust::xxh3::{xxh3_64, xxh3_64_with_seed};

/// Widest fingerprint: error rates down to 2^-32.
pub const MAX_BITS: u32 = 32;
/// The seed the first construction attempt uses; each failed peel tries the next one.
pub const FIRST_SEED: u64 = 0;
/// Construction attempts before giving up (one fails with probability well under 1 %
/// beyond a few hundred keys; 64 failures in a row do not happen).
pub const MAX_ATTEMPTS: u64 = 64;
/// Most distinct items one filter holds (its slots stay below 2^32).
pub const MAX_ITEMS: u64 = 1 << 31;
/// Longest segment (slots), as the paper caps it.
pub const MAX_SEGMENT_LENGTH: u32 = 1 << 18;
/// The memory figure's fixed part (SF.INFO "Size", MEMORY USAGE): the value's fields.
pub const SF_OVERHEAD: u64 = 96;

/// The 64-bit key of an item: XXH3 of its bytes.
pub fn item_key(item: &[u8]) -> u64 {
    xxh3_64(item)
}

/// A built (or partly loaded) static filter. Fields are private: [`build`] makes one,
/// [`StaticFilter::from_parts`] checks one read from outside.
#[derive(Debug, Clone, PartialEq)]
pub struct StaticFilter {
    pub(crate) seed: u64,
    pub(crate) items: u64,
    pub(crate) bits: u32,
    pub(crate) error: f64,
    pub(crate) layout: Layout,
    /// Little-endian u64 words holding the fingerprints.
    pub(crate) data: Vec<u8>,
    /// Bytes of `data` (at its end) still to come from SF.LOADCHUNK; 0 when complete.
    pub(crate) pending: u64,
    /// [`StaticFilter::checksum_of`] of the complete filter.
    pub(crate) checksum: u64,
}

impl StaticFilter {
    /// The seed of the construction that succeeded.
    pub fn seed(&self) -> u64 {
        self.seed
    }
    /// Distinct items.
    pub fn items(&self) -> u64 {
        self.items
    }
    /// Fingerprint width.
    pub fn bits(&self) -> u32 {
        self.bits
    }
    /// The error rate asked for at build time.
    pub fn requested_error(&self) -> f64 {
        self.error
    }
    /// The false-positive rate the fingerprints give: 2^-bits (binary fuse), the mix of
    /// 2^-bits and 2^-(bits+1) over the start slots (ribbon).
    pub fn guaranteed_error(&self) -> f64 {
        match self.layout {
            Layout::Fuse(_) => (-f64::from(self.bits)).exp2(),
            Layout::Ribbon(r) => r.error_rate(self.bits),
            Layout::Bumped(b) => b.ribbon.error_rate(self.bits),
        }
    }
    pub fn layout(&self) -> Layout {
        self.layout
    }
    /// Which structure the filter is.
    pub fn encoding(&self) -> Encoding {
        match self.layout {
            Layout::Fuse(_) => Encoding::Fuse,
            Layout::Ribbon(_) => Encoding::StandardRibbon,
            Layout::Bumped(_) => Encoding::Ribbon,
        }
    }
    /// Slots (rows) of the structure.
    pub fn slots(&self) -> u64 {
        self.layout.slots()
    }
    /// The fingerprint words as bytes.
    pub fn data(&self) -> &[u8] {
        &self.data
    }
    pub fn checksum(&self) -> u64 {
        self.checksum
    }
    /// Bytes still expected from SF.LOADCHUNK (0: the filter is complete).
    pub fn pending(&self) -> u64 {
        self.pending
    }
    pub fn is_complete(&self) -> bool {
        self.pending == 0
    }
    /// Bytes of data loaded so far (all of it when complete).
    pub fn loaded(&self) -> u64 {
        self.data.len() as u64 - self.pending
    }

    /// SF.INFO "Size" and MEMORY USAGE.
    pub fn mem_usage(&self) -> u64 {
        SF_OVERHEAD + self.data.len() as u64
    }

    /// Memory per item, in bits (the whole figure of [`Self::mem_usage`]); 0 when empty.
    pub fn bits_per_item(&self) -> f64 {
        if self.items == 0 {
            return 0.0;
        }
        self.mem_usage() as f64 * 8.0 / self.items as f64
    }

    /// Whether the item whose [`item_key`] is `key` may be in the set (no false
    /// negatives; false positives at 2^-bits). An incomplete filter answers false.
    pub fn contains(&self, key: u64) -> bool {
        if !self.is_complete() {
            return false;
        }
        let h = mix(key, self.seed);
        match &self.layout {
            Layout::Fuse(shape) => {
                let [a, b, c] = shape.slots(h);
                (fingerprint(h, self.bits) ^ self.slot(a) ^ self.slot(b) ^ self.slot(c)) == 0
            }
            Layout::Ribbon(r) => ribbon_contains(r, self.bits, &self.data, h),
            Layout::Bumped(b) => self.bumped_contains(b, h),
        }
    }

    /// [`Self::contains`] of each key in order, answers passed to `each`. On filters larger
    /// than the caches, a group's slots are requested (prefetched) before any is read, so
    /// their cache misses overlap.
    pub fn contains_each(&self, keys: &[u64], mut each: impl FnMut(bool)) {
        const GROUP: usize = 8;
        if !self.is_complete() || self.data.len() <= crate::bloom::link::CACHE_RESIDENT_BYTES {
            keys.iter().for_each(|&k| each(self.contains(k)));
            return;
        }
        let shape = match &self.layout {
            Layout::Fuse(shape) => *shape,
            Layout::Ribbon(r) | Layout::Bumped(Bumped { ribbon: r, .. }) => {
                // A rolling window: the key `AHEAD` places on is requested while this one
                // is answered, so its lines have arrived by its turn.
                const AHEAD: usize = RIBBON_AHEAD;
                let request = |key: u64| {
                    let (at, len) = ribbon::window_bytes(r, self.bits, mix(key, self.seed));
                    // Every cache line the window touches (it seldom starts on one).
                    for line in (at & !63..at + len).step_by(64) {
                        crate::memory::prefetch(&self.data, line);
                    }
                };
                keys.iter().take(AHEAD).for_each(|&k| request(k));
                for (i, &key) in keys.iter().enumerate() {
                    if let Some(&ahead) = keys.get(i + AHEAD) {
                        request(ahead);
                    }
                    let h = mix(key, self.seed);
                    each(match &self.layout {
                        Layout::Bumped(b) => self.bumped_contains(b, h),
                        _ => ribbon_contains(r, self.bits, &self.data, h),
                    });
                }
                return;
            }
        };
        let bits = u64::from(self.bits);
        for group in keys.chunks(GROUP) {
            let mut hashes = [0u64; GROUP];
            for (h, &key) in hashes.iter_mut().zip(group) {
                *h = mix(key, self.seed);
                for slot in shape.slots(*h) {
                    crate::memory::prefetch(&self.data, (slot * bits / 8) as usize);
                }
            }
            for &h in &hashes[..group.len()] {
                let [a, b, c] = shape.slots(h);
                each((fingerprint(h, self.bits) ^ self.slot(a) ^ self.slot(b) ^ self.slot(c)) == 0);
            }
        }
    }

    /// Encoding 3's lookup: the ribbon (whose words come first: its windows never reach
    /// past them), then, when it fails, the bumped keys.
    #[inline]
    fn bumped_contains(&self, b: &Bumped, h: u64) -> bool {
        ribbon_contains(&b.ribbon, self.bits, &self.data, h) || {
            let at = b.ribbon_len(self.bits).unwrap_or(0) as usize;
            b.holds(self.data.get(at..).unwrap_or_default(), h)
        }
    }

    fn word(&self, w: usize) -> u64 {
        let bytes = &self.data[w * 8..w * 8 + 8];
        u64::from_le_bytes(bytes.try_into().expect("eight bytes"))
    }

    /// The fingerprint in slot `i`.
    pub(crate) fn slot(&self, i: u64) -> u32 {
        let offset = i * u64::from(self.bits);
        let (w, shift) = ((offset >> 6) as usize, (offset & 63) as u32);
        let mut v = self.word(w) >> shift;
        if shift + self.bits > 64 {
            v |= self.word(w + 1) << (64 - shift);
        }
        (v & mask(self.bits)) as u32
    }

    /// The checksum that covers every field and the data: any damage changes it.
    pub fn checksum_of(
        seed: u64,
        items: u64,
        bits: u32,
        error: f64,
        layout: Layout,
        data: &[u8],
    ) -> u64 {
        xxh3_64_with_seed(data, params_hash(seed, items, bits, error, layout))
    }

    /// A filter from its fields, read from outside (RDB, SCANDUMP): `None` unless every
    /// field is one a build or a partial load makes — bits 1..=32 and those of the error
    /// rate, a consistent layout (fuse: power-of-two segments ≤ 2^18, at least one
    /// segment; ribbon: at least one block, the lower blocks the error rate gives), no
    /// more items than slots, the data exactly the words of the slots with the unused
    /// tail bits zero, `pending` within the data and its bytes zero, and, when complete,
    /// the checksum of all of it.
    #[allow(clippy::too_many_arguments)]
    pub fn from_parts(
        seed: u64,
        items: u64,
        bits: u32,
        error: f64,
        layout: Layout,
        data: Vec<u8>,
        pending: u64,
        checksum: u64,
    ) -> Option<StaticFilter> {
        // `bits_for` is `None` outside (0, 0.5) and past 32 bits.
        let bits_ok = match layout {
            Layout::Fuse(_) => bits_for(error) == Some(bits),
            Layout::Ribbon(_) | Layout::Bumped(_) => build::ribbon_bits_for(error) == Some(bits),
        };
        let fields_ok = bits_ok
            && layout.is_consistent(bits, error, items)
            && items <= layout.slots().min(MAX_ITEMS)
            && layout.data_len(bits) == Some(data.len() as u64)
            && pending <= data.len() as u64;
        if !fields_ok {
            return None;
        }
        let filter = StaticFilter {
            seed,
            items,
            bits,
            error,
            layout,
            data,
            pending,
            checksum,
        };
        let loaded = filter.loaded() as usize;
        if filter.data[loaded..].iter().any(|&b| b != 0) {
            return None;
        }
        if filter.is_complete() && (!filter.tail_is_clear() || filter.own_checksum() != checksum) {
            return None;
        }
        Some(filter)
    }

    pub(crate) fn own_checksum(&self) -> u64 {
        Self::checksum_of(
            self.seed,
            self.items,
            self.bits,
            self.error,
            self.layout,
            &self.data,
        )
    }

    /// The bits past the last slot are zero.
    pub(crate) fn tail_is_clear(&self) -> bool {
        let words = self.data.len() / 8;
        words == 0 || dump::tail_clear_of(self, self.word(words - 1))
    }

    /// A copy (COPY): the data copied page by page.
    pub fn try_clone(&self) -> Option<StaticFilter> {
        let data = crate::sparse_copy(&self.data).ok()?;
        Some(StaticFilter {
            data,
            ..self.clone_fields()
        })
    }

    /// The fields, with empty data.
    pub(crate) fn clone_fields(&self) -> StaticFilter {
        StaticFilter {
            seed: self.seed,
            items: self.items,
            bits: self.bits,
            error: self.error,
            layout: self.layout,
            data: Vec::new(),
            pending: self.pending,
            checksum: self.checksum,
        }
    }

    /// Offers the data buffer to active defragmentation (one buffer: never pauses).
    pub fn relocate(&mut self, from: u64, r: &mut impl crate::memory::Relocator) -> Option<u64> {
        if from == 0 {
            r.relocate(&mut self.data);
        }
        None
    }
}

/// The checksum's seed: XXH3 of every field (a fuse filter's as encoding 1 had them; a
/// ribbon's after the tag `R2`; encoding 3's after `R3`, with the bumped count last).
fn params_hash(seed: u64, items: u64, bits: u32, error: f64, layout: Layout) -> u64 {
    let mut p = Vec::with_capacity(54);
    match layout {
        Layout::Fuse(_) => {}
        Layout::Ribbon(_) => p.extend_from_slice(b"R2"),
        Layout::Bumped(_) => p.extend_from_slice(b"R3"),
    }
    p.extend_from_slice(&seed.to_le_bytes());
    p.extend_from_slice(&items.to_le_bytes());
    p.extend_from_slice(&bits.to_le_bytes());
    p.extend_from_slice(&error.to_le_bytes());
    match layout {
        Layout::Fuse(shape) => {
            p.extend_from_slice(&shape.segment_length.to_le_bytes());
            p.extend_from_slice(&shape.segment_count.to_le_bytes());
        }
        Layout::Ribbon(r) => {
            p.extend_from_slice(&r.blocks.to_le_bytes());
            p.extend_from_slice(&r.lower_blocks.to_le_bytes());
        }
        Layout::Bumped(b) => {
            p.extend_from_slice(&b.ribbon.blocks.to_le_bytes());
            p.extend_from_slice(&b.ribbon.lower_blocks.to_le_bytes());
            p.extend_from_slice(&b.bumped.to_le_bytes());
        }
    }
    xxh3_64(&p)
}

/// The structure of a filter and its size.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Layout {
    /// Encoding 1's binary fuse filter.
    Fuse(Shape),
    /// Encoding 2's standard ribbon filter (right-hand sides: fingerprints).
    Ribbon(Ribbon),
    /// Encoding 3: a ribbon with little room and its bumped keys ([`bumped`]): the default.
    Bumped(Bumped),
}

impl Layout {
    pub fn slots(&self) -> u64 {
        match self {
            Layout::Fuse(s) => s.slots_len(),
            Layout::Ribbon(r) => r.slots(),
            Layout::Bumped(b) => b.ribbon.slots(),
        }
    }
    /// Bytes of data for `bits`-bit fingerprints (`None` on overflow).
    pub fn data_len(&self, bits: u32) -> Option<u64> {
        match self {
            Layout::Fuse(s) => Shape::data_len(s.slots_len(), bits),
            Layout::Ribbon(r) => r.data_len(bits),
            Layout::Bumped(b) => b.data_len(bits),
        }
    }
    /// A layout a build of `items` keys at `error` could make.
    pub fn is_consistent(&self, bits: u32, error: f64, items: u64) -> bool {
        match self {
            Layout::Fuse(s) => s.is_consistent(),
            Layout::Ribbon(r) => r.is_consistent(bits, error),
            Layout::Bumped(b) => b.is_consistent(items, bits, error),
        }
    }
}

const RIBBON_AHEAD: usize = 8;

/// A ribbon lookup: bit-sliced with SSE2 on x86-64, one column at a time elsewhere (the
/// same answer).
#[inline]
fn ribbon_contains(layout: &Ribbon, r: u32, data: &[u8], h: u64) -> bool {
    #[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
    return ribbon_query::contains(layout, r, data, h);
    #[cfg(not(all(target_arch = "x86_64", target_feature = "sse2")))]
    return ribbon::contains(layout, r, data, h);
}

/// The hash a key gets under a seed: MurmurHash3's 64-bit finalizer of `key + seed` (a
/// bijection for each seed, so distinct keys stay distinct).
pub(crate) fn mix(key: u64, seed: u64) -> u64 {
    let mut h = key.wrapping_add(seed);
    h ^= h >> 33;
    h = h.wrapping_mul(0xff51_afd7_ed55_8ccd);
    h ^= h >> 33;
    h = h.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    h ^ (h >> 33)
}

/// The inverse of an odd number modulo 2^64 (Newton's iteration: each step doubles the
/// bits that are right, from the 3 that `x` itself gets right).
const fn inverse(x: u64) -> u64 {
    let mut y = x;
    let mut i = 0;
    while i < 5 {
        y = y.wrapping_mul(2u64.wrapping_sub(x.wrapping_mul(y)));
        i += 1;
    }
    y
}

/// The key [`mix`] maps to `h` under `seed`: each of its steps undone, last first (an XOR
/// with the value shifted right by 33 or more is its own inverse).
pub(crate) fn unmix(h: u64, seed: u64) -> u64 {
    const A: u64 = inverse(0xff51_afd7_ed55_8ccd);
    const B: u64 = inverse(0xc4ce_b9fe_1a85_ec53);
    let mut k = h ^ (h >> 33);
    k = k.wrapping_mul(B);
    k ^= k >> 33;
    k = k.wrapping_mul(A);
    k ^= k >> 33;
    k.wrapping_sub(seed)
}

pub(crate) fn mask(bits: u32) -> u64 {
    (1u64 << bits) - 1
}

/// A hash's fingerprint: its two halves XORed, `bits` wide.
pub(crate) fn fingerprint(h: u64, bits: u32) -> u32 {
    ((h ^ (h >> 32)) & mask(bits)) as u32
}
