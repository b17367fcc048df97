//! The window filter: the ring of slices, its generations and times, adds and lookups.

use super::{WindowShape, MAX_GENERATION, MAX_K, MAX_WINDOW};
use crate::bloom::link::{LinkError, Modulus};
use crate::hash::HashPair;
use crate::memory::zeroed_bytes;

/// A sliding-window Bloom filter.
#[derive(Clone, Debug, PartialEq)]
pub struct WindowFilter {
    /// Items per window, as reserved.
    pub(super) capacity: u64,
    pub(super) error: f64,
    /// Window length in milliseconds; 0 for a counted window.
    pub(super) window: u64,
    /// Start of generation 0 (milliseconds; 0 for a counted window).
    pub(super) base: u64,
    /// Number of the newest generation.
    pub(super) generation: u64,
    pub(super) shape: WindowShape,
    /// Ring index of the newest slice.
    pub(super) newest: u32,
    /// Adds made while each slice (by ring index) was the newest.
    pub(super) counts: Vec<u64>,
    /// The slices' bits, slice `i` at bytes `i·m/8 ..`, bit `p` in byte `p/8`, mask `1 << p%8`.
    pub(super) bits: Vec<u8>,
    pub(super) modulus: Modulus,
}

impl WindowFilter {
    /// An empty filter for `capacity` items per window at `error`; a timed window when
    /// `window` is given, starting at `now`. Refuses a filter whose memory (as
    /// [`Self::mem_usage`] counts it) exceeds `max_bytes`.
    pub fn new(
        capacity: u64,
        error: f64,
        window: Option<u64>,
        now: u64,
        max_bytes: u64,
    ) -> Result<Self, LinkError> {
        let shape = WindowShape::new(capacity, error)?;
        if window.is_some_and(|w| w == 0 || w > MAX_WINDOW) {
            return Err(LinkError::Invalid);
        }
        let bytes = shape.data_bytes().ok_or(LinkError::TooLarge)?;
        if shape.mem_usage().is_none_or(|used| used > max_bytes) {
            return Err(LinkError::TooLarge);
        }
        let bits = zeroed_bytes(bytes).map_err(|_| LinkError::OutOfMemory)?;
        let mut counts = Vec::new();
        counts
            .try_reserve_exact(shape.slices() as usize)
            .map_err(|_| LinkError::OutOfMemory)?;
        counts.resize(shape.slices() as usize, 0);
        Ok(WindowFilter {
            capacity,
            error,
            window: window.unwrap_or(0),
            base: if window.is_some() { now } else { 0 },
            generation: 0,
            shape,
            newest: 0,
            counts,
            bits,
            modulus: Modulus::of(shape.slice_bits, 0),
        })
    }

    /// Assembles a filter from stored fields; `None` unless [`Self::is_valid`] holds.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn from_parts(
        capacity: u64,
        error: f64,
        window: u64,
        base: u64,
        generation: u64,
        shape: WindowShape,
        newest: u32,
        counts: Vec<u64>,
        bits: Vec<u8>,
    ) -> Option<Self> {
        let filter = WindowFilter {
            capacity,
            error,
            window,
            base,
            generation,
            shape,
            newest,
            counts,
            bits,
            modulus: Modulus::of(shape.slice_bits, 0),
        };
        filter.is_valid().then_some(filter)
    }

    pub fn is_timed(&self) -> bool {
        self.window != 0
    }

    /// Items per window, as reserved.
    #[inline]
    pub fn capacity(&self) -> u64 {
        self.capacity
    }

    /// The error rate reserved.
    #[inline]
    pub fn error(&self) -> f64 {
        self.error
    }

    /// Window length in milliseconds; 0 for a counted window.
    #[inline]
    pub fn window(&self) -> u64 {
        self.window
    }

    /// Start of generation 0 (milliseconds; 0 for a counted window).
    #[inline]
    pub fn base(&self) -> u64 {
        self.base
    }

    /// Number of the newest generation.
    #[inline]
    pub fn generation(&self) -> u64 {
        self.generation
    }

    /// The sizing: slices, generation size, bits per slice.
    #[inline]
    pub fn shape(&self) -> WindowShape {
        self.shape
    }

    /// Ring index of the newest slice.
    #[inline]
    pub fn newest(&self) -> u32 {
        self.newest
    }

    /// Adds made while each slice (by ring index) was the newest.
    #[inline]
    pub fn counts(&self) -> &[u64] {
        &self.counts
    }

    /// The slices' bits, slice `i` at bytes `i·m/8 ..`.
    #[inline]
    pub fn bits(&self) -> &[u8] {
        &self.bits
    }

    fn slices(&self) -> u32 {
        self.shape.slices()
    }

    /// Start of generation `j` of a timed window: `base + ⌊j·w/l⌋`.
    pub fn generation_start(&self, j: u64) -> u128 {
        u128::from(self.base) + u128::from(j) * u128::from(self.window) / u128::from(self.shape.l)
    }

    /// The generation a timed window is in at `now`: the last one started by then (0
    /// before the base).
    pub fn generation_at(&self, now: u64) -> u64 {
        if now < self.base || !self.is_timed() {
            return 0;
        }
        // start(j) ≤ now ⟺ j·w < (now − base + 1)·l; 64-bit division unless it overflows.
        let elapsed = now - self.base;
        let j = match (elapsed + 1).checked_mul(u64::from(self.shape.l)) {
            Some(scaled) if elapsed < u64::MAX => u128::from((scaled - 1) / self.window),
            _ => {
                ((u128::from(elapsed) + 1) * u128::from(self.shape.l) - 1) / u128::from(self.window)
            }
        };
        j.min(u128::from(MAX_GENERATION)) as u64
    }

    /// Generations that ended between the newest one and `now` (0 for counted windows and
    /// for a time before the newest generation's start).
    pub fn due_shifts(&self, now: u64) -> u64 {
        if self.is_timed() {
            self.generation_at(now).saturating_sub(self.generation)
        } else {
            0
        }
    }

    /// Ring index of the slice `age` places older than the newest.
    #[inline]
    fn ring(&self, age: u32) -> u32 {
        // newest < n and age < n: one conditional subtraction instead of a division.
        let n = self.slices();
        let i = self.newest + age;
        if i >= n {
            i - n
        } else {
            i
        }
    }

    /// Whether the item's bit is set in ring slice `slice`.
    #[inline]
    fn bit(&self, pair: HashPair, slice: u32) -> bool {
        let pos = self.position(pair, slice);
        self.bits[(pos >> 3) as usize] & (1 << (pos & 7)) != 0
    }

    /// The item's bit in ring slice `slice`: `(a + slice·b) mod m`, offset to the slice.
    #[inline]
    fn position(&self, pair: HashPair, slice: u32) -> u64 {
        let within = self
            .modulus
            .reduce(pair.a.wrapping_add(u64::from(slice).wrapping_mul(pair.b)));
        u64::from(slice) * self.shape.slice_bits + within
    }

    /// Whether `k` consecutive slices among the `live` newest hold the item. Every run of
    /// `k` contains exactly one of the positions k−1, 2k−1, …: probe those, and extend a
    /// hit to the left and then to the right.
    fn run_among(&self, pair: HashPair, live: u32) -> bool {
        let k = self.shape.k;
        let mut anchor = k - 1;
        while anchor < live {
            if self.bit(pair, self.ring(anchor)) {
                let mut left = 0;
                while left < k - 1 && self.bit(pair, self.ring(anchor - left - 1)) {
                    left += 1;
                }
                let right = k - 1 - left;
                if anchor + right < live
                    && (1..=right).all(|i| self.bit(pair, self.ring(anchor + i)))
                {
                    return true;
                }
            }
            anchor += k;
        }
        false
    }

    /// Whether the item was added within the window, as of `now` (false positives aside).
    pub fn contains(&self, pair: HashPair, now: u64) -> bool {
        let expired = self.due_shifts(now).min(u64::from(self.slices())) as u32;
        self.run_among(pair, self.slices() - expired)
    }

    /// Membership of many items at `now`, in order.
    pub fn contains_each(&self, pairs: &[HashPair], now: u64, mut emit: impl FnMut(bool)) {
        let expired = self.due_shifts(now).min(u64::from(self.slices())) as u32;
        let live = self.slices() - expired;
        pairs
            .iter()
            .for_each(|&pair| emit(self.run_among(pair, live)));
    }

    /// Turns the ring by one: the oldest slice is cleared and becomes the newest.
    fn shift(&mut self) {
        let n = self.slices();
        self.newest = (self.newest + n - 1) % n;
        let bytes = (self.shape.slice_bits / 8) as usize;
        let start = self.newest as usize * bytes;
        self.bits[start..start + bytes].fill(0);
        self.counts[self.newest as usize] = 0;
    }

    /// Adds made into the `k` newest slices (the load of the slice `k − 1` old).
    fn newest_load(&self) -> u64 {
        (0..self.shape.k)
            .map(|age| self.counts[self.ring(age) as usize])
            .sum()
    }

    /// Ends the generations that are over before an add: a timed window catches up with
    /// the clock at `now` (at most one full turn of clearing; `None`: no time passes, as
    /// for a write replicated as it came), then turns early while the newest slices hold a
    /// full load; a counted window ends a full generation. An early turn does not move the
    /// generation number, which follows the clock alone: so after a burst, generations
    /// keep ending on time and every item ages out on time (it only ages faster while the
    /// turns come early).
    fn advance(&mut self, now: Option<u64>) {
        if self.is_timed() {
            let target = now.map_or(0, |now| self.generation_at(now));
            if target > self.generation {
                for _ in 0..(target - self.generation).min(u64::from(self.slices())) {
                    self.shift();
                }
                self.generation = target;
            }
            while self.newest_load() >= self.shape.slice_load() {
                self.shift();
            }
        } else if self.counts[self.newest as usize] >= self.shape.generation_size {
            self.shift();
            self.generation = (self.generation + 1).min(MAX_GENERATION);
        }
    }

    /// Records the item at `now` (it stays a full window from now); true if it was not in
    /// the window before.
    pub fn add(&mut self, pair: HashPair, now: u64) -> bool {
        self.add_when(pair, Some(now))
    }

    /// Records the item in the newest generation, whatever the time: what a write that
    /// ended no generation by time on the master does on a replica or from the AOF.
    pub fn add_untimed(&mut self, pair: HashPair) -> bool {
        self.add_when(pair, None)
    }

    fn add_when(&mut self, pair: HashPair, now: Option<u64>) -> bool {
        self.advance(now);
        // The item's bits in the k newest slices: all set means a run there already; else
        // the other runs decide. Kept for setting them.
        let mut positions = [0u64; MAX_K as usize];
        let positions = &mut positions[..self.shape.k as usize];
        for (age, pos) in positions.iter_mut().enumerate() {
            *pos = self.position(pair, self.ring(age as u32));
        }
        let newest_run = positions
            .iter()
            .all(|&pos| self.bits[(pos >> 3) as usize] & (1 << (pos & 7)) != 0);
        let new = !newest_run && !self.run_among(pair, self.slices());
        for &pos in positions.iter() {
            self.bits[(pos >> 3) as usize] |= 1 << (pos & 7);
        }
        let newest = self.newest as usize;
        self.counts[newest] = self.counts[newest].saturating_add(1);
        new
    }

    /// Adds many items at `now` (`None`: as [`Self::add_untimed`]), in order; `emit` gets
    /// whether each was new.
    pub fn add_each(&mut self, pairs: &[HashPair], now: Option<u64>, mut emit: impl FnMut(bool)) {
        for &pair in pairs {
            emit(self.add_when(pair, now));
        }
    }

    /// Adds recorded in the generations still inside the window at `now` (WBF.CARD).
    pub fn items(&self, now: u64) -> u64 {
        self.items_after(self.due_shifts(now))
    }

    /// Adds recorded in the generations inside the window as stored, whatever the time
    /// (the INFO totals: they change only when the filter does).
    pub fn stored_items(&self) -> u64 {
        self.items_after(0)
    }

    fn items_after(&self, expired: u64) -> u64 {
        let live = u64::from(self.shape.l + 1).saturating_sub(expired) as u32;
        (0..live)
            .map(|age| self.counts[self.ring(age) as usize])
            .fold(0u64, u64::saturating_add)
    }

    /// Bytes used, as WBF.INFO "Size" and MEMORY USAGE report it.
    pub fn mem_usage(&self) -> u64 {
        self.shape.mem_usage().unwrap_or(u64::MAX)
    }

    /// Whether the fields describe exactly a filter this code makes and keeps: the shape
    /// of (capacity, error), a bit array of that size, a ring index in range, generation
    /// numbers and times within range, and add counts a filter can reach (no `k`
    /// consecutive slices with more than a slice's load; in a counted window no slice
    /// with more than a generation).
    pub fn is_valid(&self) -> bool {
        let n = self.slices() as usize;
        let load = self.shape.slice_load();
        // Windows of k slices in age order (the newest and the oldest slice are neighbours
        // in the ring, not in age).
        let counts_ok = self.counts.len() == n
            && (self.newest as usize) < n
            && (0..=self.shape.l).all(|oldest| {
                let sum = (oldest..oldest + self.shape.k)
                    .map(|age| self.counts[self.ring(age) as usize] as u128)
                    .sum::<u128>();
                sum <= u128::from(load)
            })
            && (self.is_timed() || self.counts.iter().all(|&c| c <= self.shape.generation_size));
        WindowShape::new(self.capacity, self.error).is_ok_and(|shape| shape == self.shape)
            && self.shape.data_bytes() == Some(self.bits.len() as u64)
            && (self.newest as usize) < n
            && self.generation <= MAX_GENERATION
            && self.window <= MAX_WINDOW
            && (self.is_timed() || self.base == 0)
            && counts_ok
    }

    /// A copy, or `None` when the allocator refuses the memory.
    pub fn try_clone(&self) -> Option<Self> {
        let mut bits = Vec::new();
        bits.try_reserve_exact(self.bits.len()).ok()?;
        bits.extend_from_slice(&self.bits);
        let mut counts = Vec::new();
        counts.try_reserve_exact(self.counts.len()).ok()?;
        counts.extend_from_slice(&self.counts);
        Some(WindowFilter {
            bits,
            counts,
            ..*self
        })
    }
}
