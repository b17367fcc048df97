//! One partition of an expandable filter: a compact, exactly sized bit array holding
//!
//! 1. a unary occupancy bitmap: for each of the [`BUCKETS`] mini-buckets in order, a `1`
//!    per entry then a `0` (`BUCKETS + entries` bits);
//! 2. the entries' slots in mini-bucket order, `width` bits each: the fingerprint's `len`
//!    bits, a `1` delimiter above them, zeros above it (so `len` is the position of the
//!    slot's highest set bit, and `width` = the longest `len` + 1);
//! 3. zero bits up to the end of the last 64-bit word.
//!
//! Bit `i` of the array is bit `i % 64` of word `i / 64`. Inserting and removing shift the
//! bits above the change in place; the allocation grows and shrinks one word at a time.

/// Mini-bucket address bits (the top bits of the hash).
pub const BUCKET_BITS: u32 = 8;
/// Mini-buckets per partition.
pub const BUCKETS: usize = 1 << BUCKET_BITS;
/// Longest fingerprint an entry may have (its slot is then 57 bits wide).
pub const MAX_LEN: u32 = 56;
/// Most entries one partition holds (a hot item added this many times in one partition
/// makes the next add of its partition fail instead of growing one allocation for ever).
pub const MAX_ENTRIES: u32 = 1 << 16;

/// One partition (see the module docs).
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct Partition {
    pub(crate) words: Box<[u64]>,
    pub(crate) entries: u32,
    pub(crate) width: u8,
}

/// The fingerprint length a slot encodes (`None` for the invalid slot 0).
#[inline]
pub fn slot_len(slot: u64) -> Option<u32> {
    (slot != 0).then(|| 63 - slot.leading_zeros())
}

/// The slot of fingerprint `fp` (its low `len` bits are kept).
#[inline]
pub fn make_slot(fp: u64, len: u32) -> u64 {
    (fp & mask(len)) | (1u64 << len)
}

#[inline]
pub fn mask(len: u32) -> u64 {
    if len >= 64 {
        u64::MAX
    } else {
        (1u64 << len) - 1
    }
}

/// Whether `slot` matches an item whose fingerprint bits (already shifted past the
/// partition's address bits) are `fp`.
#[inline]
pub fn slot_matches(slot: u64, fp: u64) -> bool {
    let len = 63 - slot.leading_zeros();
    (slot ^ fp) & mask(len) == 0
}

#[inline]
fn get_bits(w: &[u64], pos: usize, k: u32) -> u64 {
    let (i, off) = (pos / 64, (pos % 64) as u32);
    let mut v = w[i] >> off;
    if off + k > 64 {
        v |= w[i + 1] << (64 - off);
    }
    v & mask(k)
}

fn set_bits(w: &mut [u64], pos: usize, k: u32, v: u64) {
    let (i, off) = (pos / 64, (pos % 64) as u32);
    let m = mask(k);
    w[i] = (w[i] & !(m << off)) | ((v & m) << off);
    if off + k > 64 {
        let rest = off + k - 64;
        w[i + 1] = (w[i + 1] & !mask(rest)) | ((v & m) >> (64 - off));
    }
}

/// Shifts the bits at `pos` and above up by `k` (1..64) within `w`; bits shifted past
/// the end are lost; bits `[pos, pos + k)` keep stale values for the caller to overwrite.
fn shift_up(w: &mut [u64], pos: usize, k: u32) {
    let first = pos / 64;
    let low = mask((pos % 64) as u32);
    for i in (first + 1..w.len()).rev() {
        let below = if i - 1 == first {
            w[first] & !low
        } else {
            w[i - 1]
        };
        w[i] = (w[i] << k) | (below >> (64 - k));
    }
    let x = w[first];
    w[first] = (x & low) | ((x & !low) << k);
}

/// Removes the bits `[pos, pos + k)` (k in 1..64): the bits above move down by `k`,
/// zeros come in at the top.
fn shift_down(w: &mut [u64], pos: usize, k: u32) {
    let first = pos / 64;
    let low = mask((pos % 64) as u32);
    let n = w.len();
    let x = w[first];
    let next = if first + 1 < n { w[first + 1] } else { 0 };
    w[first] = (x & low) | (((x & !low) >> k) & !low) | ((next << (64 - k)) & !low);
    for i in first + 1..n {
        let above = if i + 1 < n { w[i + 1] } else { 0 };
        w[i] = (w[i] >> k) | (above << (64 - k));
    }
}

fn words_for(bits: usize) -> usize {
    bits.div_ceil(64)
}

impl Partition {
    /// An empty partition: the bitmap's [`BUCKETS`] zeros.
    pub fn empty() -> Partition {
        Partition {
            words: vec![0u64; BUCKETS / 64].into_boxed_slice(),
            entries: 0,
            width: 0,
        }
    }

    pub fn entries(&self) -> u32 {
        self.entries
    }
    pub fn width(&self) -> u32 {
        u32::from(self.width)
    }
    pub fn words(&self) -> &[u64] {
        &self.words
    }
    /// Heap bytes of the bit array.
    pub fn heap_bytes(&self) -> usize {
        self.words.len() * 8
    }

    fn bitmap_bits(&self) -> usize {
        BUCKETS + self.entries as usize
    }

    /// The entries of mini-bucket `q`: (index of its first entry, how many).
    pub fn run(&self, q: usize) -> (usize, usize) {
        let w = &self.words;
        // The start of run q is just past the q-th zero of the bitmap.
        let mut start = 0usize;
        if q > 0 {
            let mut need = q as u32;
            let mut i = 0;
            loop {
                let zeros = !w[i];
                let c = zeros.count_ones();
                if c >= need {
                    start = i * 64 + select(zeros, need - 1) as usize + 1;
                    break;
                }
                need -= c;
                i += 1;
            }
        }
        // Its length: the ones from `start` on.
        let mut len = 0usize;
        let mut pos = start;
        loop {
            let ones = (w[pos / 64] >> (pos % 64)).trailing_ones() as usize;
            let room = 64 - pos % 64;
            len += ones.min(room);
            if ones < room {
                break;
            }
            pos += room;
        }
        (start - q, len)
    }

    /// The slot of entry `i`.
    #[inline]
    pub fn slot(&self, i: usize) -> u64 {
        let w = u32::from(self.width);
        get_bits(&self.words, self.bitmap_bits() + i * w as usize, w)
    }

    /// The slots of mini-bucket `q`.
    pub fn bucket(&self, q: usize) -> impl Iterator<Item = u64> + '_ {
        let (first, n) = self.run(q);
        (first..first + n).map(move |i| self.slot(i))
    }

    /// Every entry as (mini-bucket, slot), in stored order.
    pub fn decode(&self) -> Vec<(u16, u64)> {
        let mut out = Vec::with_capacity(self.entries as usize);
        let mut q = 0u16;
        let mut i = 0usize;
        for pos in 0..self.bitmap_bits() {
            if self.words[pos / 64] >> (pos % 64) & 1 == 1 {
                out.push((q, self.slot(i)));
                i += 1;
            } else {
                q = q.wrapping_add(1);
            }
        }
        out
    }

    /// The partition holding `entries` (mini-bucket, slot) pairs, sorted by mini-bucket,
    /// at the narrowest width.
    pub fn encode(entries: &[(u16, u64)]) -> Partition {
        let width = entries
            .iter()
            .map(|&(_, s)| slot_len(s).map_or(0, |l| l + 1))
            .max()
            .unwrap_or(0);
        let m = entries.len();
        let bits = BUCKETS + m + m * width as usize;
        let mut words = vec![0u64; words_for(bits)];
        let mut pos = 0usize;
        let mut q = 0usize;
        for &(b, _) in entries {
            while q < usize::from(b) {
                pos += 1; // a zero: the end of mini-bucket q
                q += 1;
            }
            words[pos / 64] |= 1 << (pos % 64);
            pos += 1;
        }
        let base = BUCKETS + m;
        for (i, &(_, s)) in entries.iter().enumerate() {
            set_bits(&mut words, base + i * width as usize, width, s);
        }
        Partition {
            words: words.into_boxed_slice(),
            entries: m as u32,
            width: width as u8,
        }
    }

    fn resize(&mut self, bits: usize) {
        let n = words_for(bits);
        if n != self.words.len() {
            // Exactly `n` words reserved, so the boxed slice keeps the allocation: one
            // reallocation (often in place) instead of a grow and a shrink.
            let mut v = std::mem::take(&mut self.words).into_vec();
            v.reserve_exact(n.saturating_sub(v.len()));
            v.resize(n, 0);
            self.words = v.into_boxed_slice();
        }
    }

    /// Adds `slot` at the end of mini-bucket `q`, widening the partition if it needs to.
    pub fn insert(&mut self, q: usize, slot: u64) {
        let need = slot_len(slot).map_or(0, |l| l + 1);
        let (first, n) = self.run(q);
        let idx = first + n;
        let w = u32::from(self.width);
        if need > w {
            self.insert_wider(q, idx, slot, need);
            return;
        }
        let old_bits = self.bitmap_bits() + self.entries as usize * w as usize;
        self.resize(old_bits + 1 + w as usize);
        let slot_pos = self.bitmap_bits() + idx * w as usize;
        shift_up(&mut self.words, slot_pos, w);
        set_bits(&mut self.words, slot_pos, w, slot);
        let bit_pos = idx + q; // the run's end in the bitmap
        shift_up(&mut self.words, bit_pos, 1);
        set_bits(&mut self.words, bit_pos, 1, 1);
        self.entries += 1;
    }

    /// [`Self::insert`] of a slot `need` bits wide, wider than the partition's slots, as
    /// entry `idx` (the end of mini-bucket `q`'s run): the bits [`Self::encode`] would
    /// make of the entries with the new one, rewritten in place in one pass. Every
    /// partition takes this path once per level (its first entry of the new generation
    /// has a longer fingerprint), so after a level change it runs for most inserts: it
    /// moves each slot once instead of decoding and re-encoding the whole partition.
    fn insert_wider(&mut self, q: usize, idx: usize, slot: u64, need: u32) {
        let (w, w2) = (u32::from(self.width), need);
        let m = self.entries as usize;
        let base = BUCKETS + m + 1; // the slots' start once the bitmap has its new bit
        self.resize(base + (m + 1) * w2 as usize);
        // The new bitmap bit; everything above it, the old slots included, moves up by one.
        shift_up(&mut self.words, idx + q, 1);
        set_bits(&mut self.words, idx + q, 1, 1);
        // Each old slot to its wider place, from the last: a slot's new place is at or
        // above its old one, so no slot is overwritten before it has moved, and every bit
        // from `base` to the end is written.
        for i in (0..m).rev() {
            let s = get_bits(&self.words, base + i * w as usize, w);
            let j = if i >= idx { i + 1 } else { i };
            set_bits(&mut self.words, base + j * w2 as usize, w2, s);
        }
        set_bits(&mut self.words, base + idx * w2 as usize, w2, slot);
        self.entries += 1;
        self.width = w2 as u8;
    }

    /// Removes entry `idx` of mini-bucket `q` (an entry index from [`Self::run`]),
    /// narrowing the partition when it held the only longest fingerprint.
    pub fn remove(&mut self, q: usize, idx: usize) {
        let w = u32::from(self.width);
        let removed = self.slot(idx);
        let slot_pos = self.bitmap_bits() + idx * w as usize;
        shift_down(&mut self.words, slot_pos, w);
        shift_down(&mut self.words, idx + q, 1);
        self.entries -= 1;
        let bits = self.bitmap_bits() + self.entries as usize * w as usize;
        self.resize(bits);
        if slot_len(removed).map_or(0, |l| l + 1) == w {
            let narrower = (0..self.entries as usize).all(|i| self.slot(i) >> (w - 1) == 0);
            if narrower {
                *self = Partition::encode(&self.decode());
            }
        }
    }

    /// Checks a partition read from outside: the word count fits the bits, the bitmap
    /// holds exactly [`BUCKETS`] zeros and `entries` ones, every slot is a valid slot of
    /// at most [`MAX_LEN`] bits, the width is the longest slot's, the bits past the end
    /// are zero. Returns the slots' lengths through `each_len`.
    pub fn is_valid(&self, mut each_len: impl FnMut(u32)) -> bool {
        let m = self.entries as usize;
        let w = u32::from(self.width);
        if self.entries > MAX_ENTRIES || w > MAX_LEN + 1 || (m == 0) != (w == 0) {
            return false;
        }
        let bits = BUCKETS + m + m * w as usize;
        if self.words.len() != words_for(bits) {
            return false;
        }
        if !bits.is_multiple_of(64) && self.words[bits / 64] >> (bits % 64) != 0 {
            return false;
        }
        let ones: usize = (0..BUCKETS + m)
            .step_by(64)
            .map(|pos| get_bits(&self.words, pos, (BUCKETS + m - pos).min(64) as u32))
            .map(|x| x.count_ones() as usize)
            .sum();
        if ones != m {
            return false;
        }
        let mut widest = 0;
        for i in 0..m {
            match slot_len(self.slot(i)) {
                Some(len) if len < w => {
                    widest = widest.max(len + 1);
                    each_len(len);
                }
                _ => return false,
            }
        }
        widest == w
    }
}

/// `SELECT_IN_BYTE[b][k]`: the position of the `k`-th (0-based) set bit of byte `b` (8 when
/// `b` has no more than `k`).
static SELECT_IN_BYTE: [[u8; 8]; 256] = {
    let mut table = [[8u8; 8]; 256];
    let mut b = 0;
    while b < 256 {
        let (mut bit, mut k) = (0, 0);
        while bit < 8 {
            if b >> bit & 1 == 1 {
                table[b][k] = bit as u8;
                k += 1;
            }
            bit += 1;
        }
        b += 1;
    }
    table
};

/// The position of the `k`-th (0-based) set bit of `x` (which has more than `k`), without
/// a branch: the bytes' popcounts summed into prefix sums by one multiplication, the
/// target byte by comparing all eight sums with `k` at once, the bit by a table.
#[inline]
fn select(x: u64, k: u32) -> u32 {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let mut s = x - ((x >> 1) & 0x5555_5555_5555_5555);
    s = (s & 0x3333_3333_3333_3333) + ((s >> 2) & 0x3333_3333_3333_3333);
    s = (s + (s >> 4)) & 0x0f0f_0f0f_0f0f_0f0f;
    // Byte i: the set bits of bytes 0..=i (at most 64: no carries between bytes).
    let sums = s.wrapping_mul(ONES);
    // The high bit of byte i is set when sum i <= k: those bytes come before the target.
    let byte = ((((u64::from(k) & 63) * ONES) | HIGH) - sums) & HIGH;
    // They are bytes 0..b: the highest high bit set is bit 8b − 1.
    let b = ((64 - byte.leading_zeros()) / 8).min(7);
    let skipped = ((sums << 8) >> (8 * b)) & 0xff;
    let rest = u64::from(k).wrapping_sub(skipped) as usize & 7;
    8 * b + u32::from(SELECT_IN_BYTE[((x >> (8 * b)) & 0xff) as usize][rest])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn model_check(p: &Partition, model: &[(u16, u64)]) {
        assert_eq!(p.decode(), model);
        assert_eq!(*p, Partition::encode(model));
        assert!(p.is_valid(|_| {}));
    }

    #[test]
    fn inserts_and_removes_match_a_model() {
        let mut p = Partition::empty();
        let mut model: Vec<(u16, u64)> = Vec::new();
        let mut x = 0x1234_5678_9abc_def0u64;
        for step in 0..3000u32 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let q = (x >> 56) as usize;
            if step % 3 == 2 && !model.is_empty() {
                let (b, _) = model[(x % model.len() as u64) as usize];
                let (first, n) = p.run(usize::from(b));
                let k = first + (x as usize >> 8) % n;
                let at = model.iter().position(|&(bb, _)| bb == b).unwrap() + (k - first);
                model.remove(at);
                p.remove(usize::from(b), k);
            } else {
                let len = (x >> 20) as u32 % 30;
                let slot = make_slot(x, len);
                let at = model.partition_point(|&(b, _)| usize::from(b) <= q);
                model.insert(at, (q as u16, slot));
                p.insert(q, slot);
            }
            model_check(&p, &model);
        }
    }

    #[test]
    fn widening_in_place_gives_the_bytes_encode_gives() {
        // A partition about to split (512 entries of 9-bit fingerprints), then an entry one
        // or several bits longer at the start, in the middle and at the end.
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let mut base: Vec<(u16, u64)> = (0..512)
            .map(|_| {
                let r = next();
                ((r >> 56) as u16, make_slot(r, 9))
            })
            .collect();
        base.sort_by_key(|&(q, _)| q);
        for (q, len) in [(0usize, 10), (1, 10), (100, 17), (255, 10), (255, 40)] {
            let mut p = Partition::encode(&base);
            let slot = make_slot(next(), len);
            p.insert(q, slot);
            let mut model = base.clone();
            let at = model.partition_point(|&(b, _)| usize::from(b) <= q);
            model.insert(at, (q as u16, slot));
            model_check(&p, &model);
            assert_eq!(p.width(), len + 1);
        }
    }

    #[test]
    fn select_finds_the_kth_set_bit() {
        let mut r = 0x9e37_79b9_7f4a_7c15u64;
        let mut xs = vec![1u64, u64::MAX, 0x8000_0000_0000_0001, 0xf0f0_0f0f_1234_8001];
        for _ in 0..2000 {
            r ^= r << 13;
            r ^= r >> 7;
            r ^= r << 17;
            xs.push(r & (r >> 3) | 1); // sparse and dense words
            xs.push(r | 1);
        }
        for x in xs {
            let ones: Vec<u32> = (0..64).filter(|&i| x >> i & 1 == 1).collect();
            for (k, &pos) in ones.iter().enumerate() {
                assert_eq!(select(x, k as u32), pos, "{x:x} {k}");
            }
        }
    }

    #[test]
    fn a_slot_matches_its_fingerprint_bits_only() {
        let s = make_slot(0b1011, 4);
        assert_eq!(slot_len(s), Some(4));
        assert!(slot_matches(s, 0xff0b));
        assert!(!slot_matches(s, 0xff0a));
        assert!(slot_matches(1, 12345)); // a void entry matches everything
        assert_eq!(slot_len(0), None);
    }
}
