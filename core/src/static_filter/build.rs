//! Sizing and construction of a binary fuse filter (3-wise).
//!
//! Sizing follows the paper's recommendations for arity 3: segments of
//! `2^⌊ln n / ln 3.33 + 2.25⌋` slots (at most 2^18), and `n · max(1.125, 0.875 + 0.25 ·
//! ln 10^6 / ln n)` slots in all, rounded up to whole segments, two of which are added
//! at the end. Construction hashes every key with the seed, records per slot how many
//! keys touch it and the XOR of their hashes, then peels: a slot touched by one key
//! alone fixes that key's place; removing the key may leave other slots alone. When every
//! key is peeled, fingerprints are assigned in reverse peeling order. A peel that stalls
//! (a cycle in the 3-hypergraph) retries with the next seed.

use super::banding::{self, Fingerprints};
use super::bumped::Bumped;
use super::ribbon::Ribbon;
use super::{fingerprint, mix, unmix, Layout, StaticFilter, FIRST_SEED, MAX_ATTEMPTS, MAX_BITS};
use super::{MAX_ITEMS, MAX_SEGMENT_LENGTH, SF_OVERHEAD};
use crate::memory::OutOfMemory;

/// The slot layout of a filter: `segment_count + 2` segments of `segment_length` slots.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shape {
    pub segment_length: u32,
    pub segment_count: u64,
}

impl Shape {
    /// The layout for `n` distinct keys.
    pub fn for_items(n: u64) -> Shape {
        let size = n as f64;
        let exponent = if n <= 1 {
            2
        } else {
            ((size.ln() / 3.33f64.ln() + 2.25).floor() as u32).min(MAX_SEGMENT_LENGTH.ilog2())
        };
        let segment_length = 1u32 << exponent;
        let capacity = if n <= 1 {
            0
        } else {
            let factor = (0.875 + 0.25 * 1e6f64.ln() / size.ln()).max(1.125);
            (size * factor).round() as u64
        };
        let segments = capacity.div_ceil(u64::from(segment_length));
        Shape {
            segment_length,
            segment_count: segments.saturating_sub(2).max(1),
        }
    }

    /// Slots in the array.
    pub fn slots_len(&self) -> u64 {
        (self.segment_count + 2) * u64::from(self.segment_length)
    }

    /// Bytes of packed words holding `slots` fingerprints of `bits` bits (`None` on
    /// overflow).
    pub fn data_len(slots: u64, bits: u32) -> Option<u64> {
        Some(slots.checked_mul(u64::from(bits))?.div_ceil(64) * 8)
    }

    /// A layout [`Shape::for_items`] could make: power-of-two segments of at most 2^18
    /// slots, at least one segment, fewer than 2^32 slots.
    pub fn is_consistent(&self) -> bool {
        self.segment_length.is_power_of_two()
            && self.segment_length <= MAX_SEGMENT_LENGTH
            && self.segment_count >= 1
            && self
                .segment_count
                .checked_add(2)
                .and_then(|s| s.checked_mul(u64::from(self.segment_length)))
                .is_some_and(|slots| slots <= u64::from(u32::MAX))
    }

    /// The three slots of hash `h`: one in each of three consecutive segments.
    #[inline]
    pub(crate) fn slots(&self, h: u64) -> [u64; 3] {
        let length = u64::from(self.segment_length);
        let mask = length - 1;
        let span = self.segment_count * length;
        let h0 = ((u128::from(h) * u128::from(span)) >> 64) as u64;
        let h1 = (h0 + length) ^ ((h >> 18) & mask);
        let h2 = (h0 + 2 * length) ^ (h & mask);
        [h0, h1, h2]
    }
}

/// The fingerprint width for an error rate in (0, 0.5): ⌈log2(1/ε)⌉, which gives a
/// false-positive rate 2^-bits ≤ ε; `None` outside that range or beyond 32 bits.
pub fn bits_for(error: f64) -> Option<u32> {
    if !(error > 0.0 && error < 0.5) {
        return None;
    }
    let bits = (-error.log2()).ceil();
    (bits <= f64::from(MAX_BITS)).then_some((bits as u32).max(1))
}

/// The ribbon filter's lower column count for an error rate in (0, 0.5): ⌊log2(1/ε)⌋
/// (some blocks get one more column, so that the mixed rate is ε); `None` outside that
/// range or beyond 32 bits.
pub fn ribbon_bits_for(error: f64) -> Option<u32> {
    bits_for(error)?;
    Some(((-error.log2()).floor() as u32).clamp(1, MAX_BITS))
}

/// Which structure a build makes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Encoding {
    /// Encoding 1's 3-wise binary fuse filter (⌈log2(1/ε)⌉-bit fingerprints).
    Fuse,
    /// Encoding 3: a ribbon filter (fractional result bits) with little room and its
    /// bumped keys kept aside ([`super::bumped`]): the default, `ENCODING RIBBON`.
    #[default]
    Ribbon,
    /// Encoding 2's standard ribbon filter (right-hand sides: fingerprints); loads still
    /// answer, builds of it are for comparisons.
    StandardRibbon,
}

/// Why a filter could not be built.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BuildError {
    /// The error rate is outside (0, 0.5) or below 2^-32.
    BadErrorRate,
    /// More than [`MAX_ITEMS`] distinct items.
    TooManyItems,
    /// The filter would exceed the memory ceiling.
    TooLarge,
    /// The allocator refused the filter or the construction's working memory.
    OutOfMemory,
    /// No seed peeled within [`MAX_ATTEMPTS`] attempts.
    Unpeelable,
}

impl From<OutOfMemory> for BuildError {
    fn from(_: OutOfMemory) -> Self {
        BuildError::OutOfMemory
    }
}

fn zeroed<T: bytemuck::Zeroable>(len: u64) -> Result<Vec<T>, OutOfMemory> {
    let len = usize::try_from(len).map_err(|_| OutOfMemory)?;
    bytemuck::allocation::try_zeroed_vec(len).map_err(|()| OutOfMemory)
}

/// Builds the filter of `keys` (the [`item_key`](super::item_key)s of the items; any
/// order, duplicates allowed) at error rate `error`, refusing a filter whose
/// [`StaticFilter::mem_usage`] would exceed `max_bytes`.
pub fn build(keys: Vec<u64>, error: f64, max_bytes: u64) -> Result<StaticFilter, BuildError> {
    build_with(keys, error, max_bytes, Encoding::default())
}

/// [`build`] of the given structure.
pub fn build_with(
    keys: Vec<u64>,
    error: f64,
    max_bytes: u64,
    encoding: Encoding,
) -> Result<StaticFilter, BuildError> {
    match encoding {
        Encoding::Fuse => build_fuse(keys, error, max_bytes),
        Encoding::Ribbon => build_ribbon(keys, error, max_bytes, true),
        Encoding::StandardRibbon => build_ribbon(keys, error, max_bytes, false),
    }
}

/// The memory a build of `items` keys of the given structure takes besides the keys it is
/// handed and the filter it makes, in bytes (an upper bound).
pub fn working_bytes(items: u64, encoding: Encoding) -> u64 {
    match encoding {
        // The hashes, and per slot a count, a hash XOR, a queue entry and the unpacked
        // fingerprint (docs/static.md).
        Encoding::Fuse => items.saturating_mul(FUSE_BYTES_PER_ITEM),
        // The keys are hashed and sorted where they are: only the rows of a window and the
        // equations crossing windows (the most slots any attempt takes).
        Encoding::StandardRibbon => {
            let items = items.min(MAX_ITEMS);
            banding::working_bytes(Ribbon::for_items(items, MAX_ATTEMPTS - 1, 1, 0.25).slots())
        }
        // The same, and the list of bumped keys (at most one in 64, a vector that doubles).
        Encoding::Ribbon => {
            let items = items.min(MAX_ITEMS);
            let slots = Bumped::ribbon_for(items, 1, 0.25).slots();
            banding::working_bytes(slots) + (items / 64 + 1) * 16
        }
    }
}

/// The fuse build's working memory per item besides the keys.
const FUSE_BYTES_PER_ITEM: u64 = 37;

/// The ribbon filter of `keys`: the keys hashed under the attempt's seed where they are,
/// sorted and made distinct, solved; an inconsistent system retries with the next seed
/// (the hashes unmixed back to the keys and mixed again; every fourth attempt also gives
/// more slots). The size depends on the number of distinct keys alone.
/// A build of encoding 3 (`bumping`) keeps the inconsistent keys aside instead: its first
/// seed works unless over one key in 64 is bumped (an adversarial set), when the next is
/// tried (the last attempt keeps what it gets).
fn build_ribbon(
    keys: Vec<u64>,
    error: f64,
    max_bytes: u64,
    bumping: bool,
) -> Result<StaticFilter, BuildError> {
    let bits = ribbon_bits_for(error).ok_or(BuildError::BadErrorRate)?;
    let mut hashes = keys;
    for attempt in 0..MAX_ATTEMPTS {
        let seed = FIRST_SEED + attempt;
        if attempt == 0 {
            hashes.iter_mut().for_each(|k| *k = mix(*k, seed));
        } else {
            hashes
                .iter_mut()
                .for_each(|h| *h = mix(unmix(*h, seed - 1), seed));
        }
        // In place (no allocation). The hash is a bijection for a seed: distinct hashes
        // are distinct keys.
        hashes.sort_unstable();
        hashes.dedup();
        let items = hashes.len() as u64;
        if items > MAX_ITEMS {
            return Err(BuildError::TooManyItems);
        }
        let layout = if bumping {
            Bumped::ribbon_for(items, bits, error)
        } else {
            Ribbon::for_items(items, attempt, bits, error)
        };
        let data_len = layout.data_len(bits).ok_or(BuildError::TooLarge)?;
        if SF_OVERHEAD.saturating_add(data_len) > max_bytes {
            return Err(BuildError::TooLarge);
        }
        // Encoding 3's bitmap and bumped hashes follow the ribbon's words: room for them
        // (up to the one key in 64 a first attempt accepts) is reserved now, so that
        // appending them never moves the filter (a copy would double the build's memory).
        let room = if bumping {
            let most = Bumped {
                ribbon: layout,
                bumped: items / 64 + 1,
            };
            most.data_len(bits).ok_or(BuildError::TooLarge)? - data_len
        } else {
            0
        };
        let data = crate::memory::zeroed_bytes_with_room(data_len, room)?;
        let mut bumped = Vec::new();
        let out = bumping.then_some(&mut bumped);
        let Some(mut data) = banding::solve(&hashes, &layout, bits, data, &Fingerprints, out)?
        else {
            continue;
        };
        if !bumping {
            return Ok(finish(
                seed,
                items,
                bits,
                error,
                Layout::Ribbon(layout),
                data,
            ));
        }
        let many = (bumped.len() as u64).saturating_mul(64) > items.max(64);
        if many && attempt + 1 < MAX_ATTEMPTS {
            continue;
        }
        let b = Bumped {
            ribbon: layout,
            bumped: bumped.len() as u64,
        };
        let total = b.data_len(bits).ok_or(BuildError::TooLarge)?;
        if SF_OVERHEAD.saturating_add(total) > max_bytes {
            return Err(BuildError::TooLarge);
        }
        let mut rest = crate::zeroed_bytes(total - data_len)?;
        b.write_rest(&bumped, &mut rest);
        data.try_reserve_exact(rest.len())
            .map_err(|_| OutOfMemory)?;
        data.extend_from_slice(&rest);
        // The unused room is given back (in place: a shrink does not move).
        data.shrink_to_fit();
        return Ok(finish(seed, items, bits, error, Layout::Bumped(b), data));
    }
    Err(BuildError::Unpeelable)
}

fn build_fuse(mut keys: Vec<u64>, error: f64, max_bytes: u64) -> Result<StaticFilter, BuildError> {
    let bits = bits_for(error).ok_or(BuildError::BadErrorRate)?;
    keys.sort_unstable();
    keys.dedup();
    let items = keys.len() as u64;
    if items > MAX_ITEMS {
        return Err(BuildError::TooManyItems);
    }
    let shape = Shape::for_items(items);
    let data_len = Shape::data_len(shape.slots_len(), bits).ok_or(BuildError::TooLarge)?;
    if SF_OVERHEAD.saturating_add(data_len) > max_bytes {
        return Err(BuildError::TooLarge);
    }
    let mut hashes: Vec<u64> = zeroed(items)?;
    for seed in FIRST_SEED..FIRST_SEED + MAX_ATTEMPTS {
        for (h, &key) in hashes.iter_mut().zip(&keys) {
            *h = mix(key, seed);
        }
        // Sorted hashes touch the slots in order (their first slot grows with the hash).
        hashes.sort_unstable();
        if let Some(fingerprints) = peel(&hashes, shape, bits)? {
            let data = pack(&fingerprints, bits, data_len)?;
            return Ok(finish(seed, items, bits, error, Layout::Fuse(shape), data));
        }
    }
    Err(BuildError::Unpeelable)
}

/// The fingerprint of every slot, or `None` when the peel stalls.
fn peel(hashes: &[u64], shape: Shape, bits: u32) -> Result<Option<Vec<u32>>, OutOfMemory> {
    let slots = shape.slots_len();
    // Per slot: (number of keys touching it) << 2 | XOR of which of a key's three slots
    // it is (0, 1, 2), and the XOR of their hashes.
    let mut count: Vec<u8> = zeroed(slots)?;
    let mut xors: Vec<u64> = zeroed(slots)?;
    for &h in hashes {
        for (which, slot) in shape.slots(h).into_iter().enumerate() {
            let c = &mut count[slot as usize];
            if *c >= 252 {
                return Ok(None);
            }
            *c = (*c + 4) ^ which as u8;
            xors[slot as usize] ^= h;
        }
    }
    let mut stack: Vec<u32> = Vec::new();
    stack.try_reserve(slots as usize).map_err(|_| OutOfMemory)?;
    stack.extend((0..slots as u32).filter(|&i| count[i as usize] >> 2 == 1));
    let mut order: Vec<u64> = Vec::new();
    let mut order_which: Vec<u8> = Vec::new();
    order.try_reserve(hashes.len()).map_err(|_| OutOfMemory)?;
    order_which
        .try_reserve(hashes.len())
        .map_err(|_| OutOfMemory)?;
    while let Some(i) = stack.pop() {
        let i = i as usize;
        if count[i] >> 2 != 1 {
            continue;
        }
        let h = xors[i];
        order.push(h);
        order_which.push(count[i] & 3);
        for (which, slot) in shape.slots(h).into_iter().enumerate() {
            let s = slot as usize;
            count[s] = (count[s] - 4) ^ which as u8;
            xors[s] ^= h;
            if count[s] >> 2 == 1 {
                stack.push(slot as u32);
            }
        }
    }
    if order.len() != hashes.len() {
        return Ok(None);
    }
    drop(count);
    drop(xors);
    let mut fingerprints: Vec<u32> = zeroed(slots)?;
    for (&h, &which) in order.iter().zip(&order_which).rev() {
        let s = shape.slots(h);
        let w = usize::from(which);
        let others = fingerprints[s[(w + 1) % 3] as usize] ^ fingerprints[s[(w + 2) % 3] as usize];
        fingerprints[s[w] as usize] = fingerprint(h, bits) ^ others;
    }
    Ok(Some(fingerprints))
}

/// The fingerprints packed `bits` wide into little-endian words.
fn pack(fingerprints: &[u32], bits: u32, data_len: u64) -> Result<Vec<u8>, OutOfMemory> {
    let mut data = crate::zeroed_bytes(data_len)?;
    let mut words = data.chunks_exact_mut(8);
    let (mut acc, mut filled) = (0u128, 0u32);
    for &f in fingerprints {
        acc |= u128::from(f) << filled;
        filled += bits;
        if filled >= 64 {
            let word = words.next().expect("data sized for every slot");
            word.copy_from_slice(&(acc as u64).to_le_bytes());
            acc >>= 64;
            filled -= 64;
        }
    }
    if filled > 0 {
        let word = words.next().expect("data sized for every slot");
        word.copy_from_slice(&(acc as u64).to_le_bytes());
    }
    Ok(data)
}

/// The complete filter of its fields and data, with its checksum.
pub(super) fn finish(
    seed: u64,
    items: u64,
    bits: u32,
    error: f64,
    layout: Layout,
    data: Vec<u8>,
) -> StaticFilter {
    let checksum = StaticFilter::checksum_of(seed, items, bits, error, layout, &data);
    StaticFilter {
        seed,
        items,
        bits,
        error,
        layout,
        data,
        pending: 0,
        checksum,
    }
}
