//! Compaction (COMPAT §8.6): fingerprints of newer sub-filters move into older ones, and
//! the newest sub-filter is dropped while it empties.

use super::alt_index;
use super::filter::CuckooFilter;

impl CuckooFilter {
    /// Compaction (COMPAT §8.6): move fingerprints of newer sub-filters into older ones,
    /// dropping the newest while it empties; with `cont == false` stop at the first
    /// sub-filter that could not be emptied. Always resets `num_deletes` to 0.
    /// CF.COMPACT uses `cont = true`.
    pub fn compact(&mut self, cont: bool) {
        let bs = usize::from(self.bucket_size);
        let mut j = self.filters.len();
        while j > 1 {
            j -= 1;
            let complete = self.compact_single(j, bs);
            if !complete && !cont {
                break;
            }
        }
        self.recount();
        self.num_deletes = 0;
    }

    /// Relocate every fingerprint of sub-filter `j` into sub-filters `0..j`; drop `j` if it
    /// emptied and is the newest. Returns false if some fingerprint stayed.
    fn compact_single(&mut self, j: usize, bs: usize) -> bool {
        let (older, rest) = self.filters.split_at_mut(j);
        let Some(cur) = rest.first_mut() else {
            return true;
        };
        let mut complete = true;
        for b in 0..cur.buckets {
            let base = cur.full_offset(b, bs);
            for s in 0..bs {
                let fp = cur.data[base + s];
                if fp == 0 {
                    continue;
                }
                let alt = alt_index(b, fp);
                let mut placed = false;
                for target in older.iter_mut() {
                    if let Some(i) = target.find_available(b, alt, bs) {
                        target.data[i] = fp;
                        placed = true;
                        break;
                    }
                }
                if placed {
                    cur.data[base + s] = 0;
                } else {
                    complete = false;
                }
            }
        }
        if complete && j + 1 == self.filters.len() {
            self.filters.pop();
        }
        complete
    }
}
