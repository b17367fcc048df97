//! The size of a window filter: `k`, the generation size and the bits per slice for a
//! capacity and an error rate, chosen before anything is allocated.

use super::{MAX_K, WBF_OVERHEAD, WBF_SLICE_OVERHEAD};
use crate::bloom::link::LinkError;

/// The size of a window filter, computed before anything is allocated. A plain value
/// (fields of the dump header): public fields; a filter is only built from the shape
/// [`WindowShape::new`] computes for its capacity and error.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WindowShape {
    /// Slices an item is added to, and the run of slices a hit needs.
    pub k: u32,
    /// Generations per window (here always `k`).
    pub l: u32,
    /// Adds per generation: `⌈capacity / l⌉`.
    pub generation_size: u64,
    /// Bits per slice, a multiple of 64.
    pub slice_bits: u64,
}

/// The fill `p` of a slice at which `p^k · (1 + k(1 − p)) = error` (bisection: the left
/// side grows with `p`).
pub(super) fn fill_for(k: u32, error: f64) -> f64 {
    let (mut lo, mut hi) = (0.0f64, 1.0f64);
    for _ in 0..64 {
        let mid = (lo + hi) / 2.0;
        if false_positive_bound(k, mid) <= error {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    lo
}

/// The false-positive rate of `2k` slices each filled to `p`: a run of `k` hits starts at
/// slice 0, or right after a miss at one of the `k` later starts (disjoint events when
/// there are at most `2k` slices).
pub fn false_positive_bound(k: u32, p: f64) -> f64 {
    p.powi(k as i32) * (1.0 + f64::from(k) * (1.0 - p))
}

impl WindowShape {
    /// The shape for `capacity` items per window at `error`: the `k` needing the fewest
    /// bits per item (the cost is unimodal in `k`: the scan stops once it rises).
    pub fn new(capacity: u64, error: f64) -> Result<Self, LinkError> {
        if capacity < 1 || error.is_nan() || error <= 0.0 || error >= 1.0 {
            return Err(LinkError::Invalid);
        }
        // (k, bits per slot of load) with the smallest 2k · bits.
        let mut best: Option<(u32, f64)> = None;
        for k in 1..=MAX_K {
            let fill = fill_for(k, error);
            if fill <= 0.0 {
                continue;
            }
            let bits_per_add = -1.0 / (1.0 - fill).ln();
            if !bits_per_add.is_finite() {
                continue;
            }
            match best {
                Some((bk, bb)) if f64::from(k) * bits_per_add >= f64::from(bk) * bb => break,
                _ => best = Some((k, bits_per_add)),
            }
        }
        let (k, bits_per_add) = best.ok_or(LinkError::Invalid)?;
        let generation_size = capacity.div_ceil(u64::from(k));
        let load = generation_size
            .checked_mul(u64::from(k))
            .ok_or(LinkError::Invalid)?;
        let bits = (bits_per_add * load as f64).ceil();
        if bits.is_nan() || bits >= (1u64 << 62) as f64 {
            return Err(LinkError::TooLarge);
        }
        let slice_bits = ((bits as u64).max(1)).div_ceil(64) * 64;
        Ok(WindowShape {
            k,
            l: k,
            generation_size,
            slice_bits,
        })
    }

    pub fn slices(&self) -> u32 {
        self.k + self.l
    }

    /// Adds a slice may hold: the adds of `k` generations (saturating: a shape read from
    /// outside may carry any generation size).
    pub fn slice_load(&self) -> u64 {
        self.generation_size.saturating_mul(u64::from(self.k))
    }

    /// Bytes of all bit arrays, if they fit in a u64.
    pub fn data_bytes(&self) -> Option<u64> {
        (self.slice_bits / 8).checked_mul(u64::from(self.slices()))
    }

    /// What [`WindowFilter::mem_usage`](super::WindowFilter::mem_usage) reports for a filter of this shape.
    pub fn mem_usage(&self) -> Option<u64> {
        self.data_bytes()?
            .checked_add(WBF_OVERHEAD + WBF_SLICE_OVERHEAD * u64::from(self.slices()))
    }
}
