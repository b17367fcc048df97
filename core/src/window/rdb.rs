//! The sliding-window Bloom filter's RDB layout (`RBslideBF`): redbloom's own type and
//! encoding.

use crate::rdb::{FieldReader, FieldWriter};
use crate::window::{WindowFilter, WindowShape, MAX_K};

/// Current (and only) encoding version of the window filter type.
pub const WINDOW_ENCODING: i32 = 1;

/// Writes a window filter in encoding 1: capacity, error, window, base time, newest
/// generation, k, l, generation size, bits per slice, ring index of the newest slice, the
/// add count of each slice (ring order), the bit array.
pub fn save_window(filter: &WindowFilter, out: &mut impl FieldWriter) {
    out.unsigned(filter.capacity);
    out.double(filter.error);
    out.unsigned(filter.window);
    out.unsigned(filter.base);
    out.unsigned(filter.generation);
    out.unsigned(u64::from(filter.shape.k));
    out.unsigned(u64::from(filter.shape.l));
    out.unsigned(filter.shape.generation_size);
    out.unsigned(filter.shape.slice_bits);
    out.unsigned(u64::from(filter.newest));
    for &count in &filter.counts {
        out.unsigned(count);
    }
    out.buffer(&filter.bits);
}

/// Reads a window filter; it must pass every check of [`WindowFilter::is_valid`] (the
/// shape this code makes for its capacity and error, a bit array of exactly that size,
/// reachable counts). The memory ceiling is not applied: the data already exists.
pub fn load_window(input: &mut impl FieldReader, encver: i32) -> Option<WindowFilter> {
    if encver != WINDOW_ENCODING {
        return None;
    }
    let capacity = input.unsigned()?;
    let error = input.double()?;
    let window = input.unsigned()?;
    let base = input.unsigned()?;
    let generation = input.unsigned()?;
    let k = u32::try_from(input.unsigned()?).ok()?;
    let l = u32::try_from(input.unsigned()?).ok()?;
    let generation_size = input.unsigned()?;
    let slice_bits = input.unsigned()?;
    let newest = u32::try_from(input.unsigned()?).ok()?;
    if !(1..=MAX_K).contains(&k) || !(1..=MAX_K).contains(&l) {
        return None;
    }
    let counts = (0..k + l)
        .map(|_| input.unsigned())
        .collect::<Option<Vec<u64>>>()?;
    let bits = input.buffer()?;
    let shape = WindowShape {
        k,
        l,
        generation_size,
        slice_bits,
    };
    WindowFilter::from_parts(
        capacity, error, window, base, generation, shape, newest, counts, bits,
    )
}
