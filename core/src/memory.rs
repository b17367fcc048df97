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

/// The memory ceiling a filter must stay under when it grows, asked for only then: a
/// plain `u64`, or a value that finds it out when needed (in the server, whether the
/// write comes from the master decides it, and asking the server has a cost that most
/// adds, which do not grow the filter, need not pay).
pub trait Ceiling {
    fn max_bytes(&self) -> u64;
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

#[cfg(test)]
mod tests {
    use super::*;

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
