//! The counting Bloom filter's RDB layout (`RBcountBF`): redbloom's own type and encoding.

use crate::bloom::link::OPT_NO_SCALING;
use crate::counting::{CountingChain, CountingLink};
use crate::rdb::{FieldReader, FieldWriter};

/// Current (and only) encoding version of the counting Bloom filter type.
pub const COUNTING_ENCODING: i32 = 1;

/// Writes a counting filter in encoding 1: total items, link count, options, growth, then
/// per link (oldest first) entries, error, hashes, bits per entry, counter count, the
/// counter array, items in the link.
pub fn save_counting(chain: &CountingChain, out: &mut impl FieldWriter) {
    out.unsigned(chain.items);
    out.unsigned(chain.links.len() as u64);
    out.unsigned(u64::from(chain.options));
    out.unsigned(u64::from(chain.growth));
    for link in &chain.links {
        out.unsigned(link.entries);
        out.double(link.error);
        out.unsigned(u64::from(link.hashes));
        out.double(link.bpe);
        out.unsigned(link.bits);
        out.buffer(&link.counters);
        out.unsigned(link.items);
    }
}

/// Reads a counting filter. Links are read one at a time (the count comes from the file)
/// and each must be exactly the link this code makes for its capacity and error, with a
/// counter array of exactly the right length; the link counts must sum to the total.
/// The memory ceiling is not applied: the data already exists.
pub fn load_counting(input: &mut impl FieldReader, encver: i32) -> Option<CountingChain> {
    if encver != COUNTING_ENCODING {
        return None;
    }
    let items = input.unsigned()?;
    let nlinks = input.unsigned()?;
    let options = u32::try_from(input.unsigned()?).ok()?;
    let growth = u32::try_from(input.unsigned()?).ok()?;
    let scaling = options & OPT_NO_SCALING == 0;
    if nlinks == 0
        || !CountingChain::options_are_valid(options, growth)
        || (!scaling && nlinks != 1)
    {
        return None;
    }
    let mut links = Vec::new();
    let mut items_in_links = 0u64;
    for _ in 0..nlinks {
        let entries = input.unsigned()?;
        let error = input.double()?;
        let hashes = u32::try_from(input.unsigned()?).ok()?;
        let bpe = input.double()?;
        let bits = input.unsigned()?;
        let counters = input.buffer()?;
        let link_items = input.unsigned()?;
        let bytes = counters.len() as u64;
        if !CountingLink::fields_are_valid(entries, error, bpe, hashes, bits, bytes, options) {
            return None;
        }
        items_in_links = items_in_links.checked_add(link_items)?;
        links.try_reserve(1).ok()?;
        links.push(CountingLink::from_parts(
            (entries, error, bpe, hashes, bits),
            link_items,
            counters,
        ));
    }
    (items_in_links == items).then_some(CountingChain {
        items,
        links,
        options,
        growth,
    })
}
