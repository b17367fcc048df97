//! Fallible, page-aware buffers: every filter array is allocated here, so a size that
//! comes from a client, a dump or an RDB file is an error instead of an abort, and copies
//! of mostly empty filters stay mostly non-resident.

/// The allocator refused a buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OutOfMemory;

/// A zeroed byte buffer of `len` bytes, or an error instead of aborting when the
/// allocator refuses (sizes here come from clients, dumps and RDB files).
///
/// Allocated zeroed (calloc through the global allocator, which in the server is Redis'
/// allocator) rather than written with zeros: a large block then comes as fresh pages
/// the kernel zeroes on first write, so reserving 1 GiB costs microseconds and no RSS
/// instead of touching every page on the main thread.
pub fn zeroed_bytes(len: u64) -> Result<Vec<u8>, OutOfMemory> {
    let len = usize::try_from(len).map_err(|_| OutOfMemory)?;
    bytemuck::allocation::try_zeroed_vec(len).map_err(|()| OutOfMemory)
}

/// `len` zero bytes in a vector with room for `room` more (so that appending them does not
/// move it).
pub fn zeroed_bytes_with_room(len: u64, room: u64) -> Result<Vec<u8>, OutOfMemory> {
    let total =
        usize::try_from(len.checked_add(room).ok_or(OutOfMemory)?).map_err(|_| OutOfMemory)?;
    let mut v = Vec::new();
    v.try_reserve_exact(total).map_err(|_| OutOfMemory)?;
    v.resize(len as usize, 0);
    Ok(v)
}

/// The memory ceiling a filter must stay under when it grows, asked for only then: a
/// plain `u64`, or a value that finds it out when needed (in the server, whether the
/// write comes from the master decides it, and asking the server has a cost that most
/// adds, which do not grow the filter, need not pay).
pub trait Ceiling {
    /// The most the whole filter may use.
    fn max_bytes(&self) -> u64;
    /// The most a single growth step may add (in the server: the memory left under
    /// maxmemory); no limit by default.
    fn max_step(&self) -> u64 {
        u64::MAX
    }
    /// The ceiling for a filter now counted at `used` bytes: [`Self::max_bytes`], and no
    /// more than [`Self::max_step`] above `used`.
    fn limit_for(&self, used: u64) -> u64 {
        self.max_bytes().min(used.saturating_add(self.max_step()))
    }
}

impl Ceiling for u64 {
    fn max_bytes(&self) -> u64 {
        *self
    }
}

impl<C: Ceiling + ?Sized> Ceiling for &C {
    fn max_bytes(&self) -> u64 {
        (**self).max_bytes()
    }
    fn max_step(&self) -> u64 {
        (**self).max_step()
    }
    fn limit_for(&self, used: u64) -> u64 {
        (**self).limit_for(used)
    }
}

/// Moves a filter's heap buffers where a relocating allocator wants them (the server's
/// active defragmentation); the server side implements it.
pub trait Relocator {
    /// Offers `v`'s buffer: the relocator may move it (same contents, length and capacity).
    fn relocate<T>(&mut self, v: &mut Vec<T>);
    /// Whether to pause here and resume from a cursor later.
    fn should_stop(&mut self) -> bool;
}

/// Offers a filter's parts to `r`: at cursor 0 the vector holding them, then from part
/// `from` on each part's buffer, pausing when `r` says so. Returns the cursor to resume
/// from (>= 1), or `None` when every part was offered. A cursor past the parts (the
/// filter changed between two calls) ends the walk.
pub fn relocate_parts<P>(
    parts: &mut Vec<P>,
    from: u64,
    r: &mut impl Relocator,
    mut buffer: impl FnMut(&mut P) -> &mut Vec<u8>,
) -> Option<u64> {
    if from == 0 {
        r.relocate(parts);
    }
    let len = parts.len();
    let start = usize::try_from(from).unwrap_or(usize::MAX).min(len);
    for (i, part) in parts.iter_mut().enumerate().skip(start) {
        r.relocate(buffer(part));
        if i + 1 < len && r.should_stop() {
            return Some(i as u64 + 1);
        }
    }
    None
}

/// Granule of [`sparse_copy`]: a memory page.
const COPY_GRANULE: usize = 4096;
static ZERO_PAGE: [u8; COPY_GRANULE] = [0; COPY_GRANULE];

/// A copy of `src` into a fresh zeroed buffer that writes only the pages holding a
/// non-zero byte, so a copied or loaded filter that is mostly empty stays mostly
/// non-resident (COPY, RDB load).
pub fn sparse_copy(src: &[u8]) -> Result<Vec<u8>, OutOfMemory> {
    let mut out = zeroed_bytes(src.len() as u64)?;
    for (to, from) in out.chunks_mut(COPY_GRANULE).zip(src.chunks(COPY_GRANULE)) {
        // Slice equality of bytes is a memcmp, fast in unoptimised builds too.
        if from != &ZERO_PAGE[..from.len()] {
            to.copy_from_slice(from);
        }
    }
    Ok(out)
}

/// `dst.copy_from_slice(src)`, writing only the pages that differ: loading a dump chunk
/// of a mostly empty filter into its zeroed arrays (LOADCHUNK) then leaves the untouched
/// pages non-resident. The result is the same as a plain copy.
pub fn copy_changed_pages(dst: &mut [u8], src: &[u8]) {
    assert_eq!(
        dst.len(),
        src.len(),
        "copy_changed_pages of unequal lengths"
    );
    for (to, from) in dst.chunks_mut(COPY_GRANULE).zip(src.chunks(COPY_GRANULE)) {
        // Reading an untouched page maps the kernel's shared zero page: no RSS.
        if *to != *from {
            to.copy_from_slice(from);
        }
    }
}

/// Asks the CPU for the cache line holding `data[index]` without waiting for it (a
/// software prefetch: the instruction retires at once, the line arrives meanwhile).
/// Out-of-range indexes are ignored.
#[inline(always)]
pub(crate) fn prefetch<T: Copy>(data: &[T], index: usize) {
    if let Some(byte) = data.get(index) {
        #[cfg(all(target_arch = "x86_64", target_feature = "sse"))]
        safe_arch::prefetch_t0(byte);
        #[cfg(not(all(target_arch = "x86_64", target_feature = "sse")))]
        std::hint::black_box(*byte);
    }
}

/// [`prefetch`] of the cache line holding `value` (a value that is not `Copy`: only
/// x86-64 prefetches it, elsewhere this does nothing).
#[inline(always)]
pub(crate) fn prefetch_ref<T>(value: &T) {
    #[cfg(all(target_arch = "x86_64", target_feature = "sse"))]
    safe_arch::prefetch_t0(value);
    #[cfg(not(all(target_arch = "x86_64", target_feature = "sse")))]
    let _ = value;
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Offers every buffer, counting them, and asks to pause after every `every`.
    struct Counting {
        offered: Vec<usize>,
        every: usize,
    }

    impl Relocator for Counting {
        fn relocate<T>(&mut self, v: &mut Vec<T>) {
            self.offered.push(v.len());
        }
        fn should_stop(&mut self) -> bool {
            self.offered.len().is_multiple_of(self.every)
        }
    }

    #[test]
    fn relocate_parts_offers_the_vector_then_every_part_once_across_pauses() {
        let mut parts: Vec<Vec<u8>> = (1..=7).map(|n| vec![0; n]).collect();
        let mut r = Counting {
            offered: Vec::new(),
            every: 3,
        };
        let mut cursor = 0;
        let mut calls = 0;
        while let Some(next) = relocate_parts(&mut parts, cursor, &mut r, |p| p) {
            assert!(next > cursor);
            cursor = next;
            calls += 1;
        }
        assert_eq!(r.offered, vec![7, 1, 2, 3, 4, 5, 6, 7]);
        assert_eq!(calls, 2);
        // A cursor past the parts (they shrank) ends the walk without offering anything.
        assert_eq!(relocate_parts(&mut parts, 99, &mut r, |p| p), None);
        assert_eq!(r.offered.len(), 8);
    }

    #[test]
    fn zeroed_bytes_are_zero_and_sized() {
        for len in [0u64, 1, 4095, 4096, 4097, 3 << 20] {
            let buf = zeroed_bytes(len).unwrap();
            assert_eq!(buf.len() as u64, len);
            assert!(buf.iter().all(|&b| b == 0));
        }
    }

    #[test]
    fn an_impossible_size_is_an_error_not_an_abort() {
        assert_eq!(zeroed_bytes(u64::MAX), Err(OutOfMemory));
        assert_eq!(zeroed_bytes(1 << 62), Err(OutOfMemory));
    }

    #[test]
    fn sparse_copy_equals_its_source() {
        let mut src = vec![0u8; 5 * COPY_GRANULE + 123];
        src[0] = 1;
        src[2 * COPY_GRANULE + 7] = 0x80;
        src[5 * COPY_GRANULE + 122] = 0xff;
        assert_eq!(sparse_copy(&src).unwrap(), src);
        assert_eq!(sparse_copy(&[]).unwrap(), Vec::<u8>::new());
        assert_eq!(sparse_copy(&[0, 0, 9]).unwrap(), vec![0, 0, 9]);
    }

    #[test]
    fn copy_changed_pages_is_a_copy() {
        let mut src = vec![0u8; 3 * COPY_GRANULE + 5];
        src[COPY_GRANULE + 1] = 7;
        src[3 * COPY_GRANULE + 4] = 1;
        // The destination holds bits the source does not: they are cleared, too.
        let mut dst = vec![0u8; src.len()];
        dst[0] = 0xff;
        dst[3 * COPY_GRANULE] = 2;
        copy_changed_pages(&mut dst, &src);
        assert_eq!(dst, src);
    }
}
