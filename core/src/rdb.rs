//! The field order of each filter type in RDB files (COMPAT §4.2), over an abstract field
//! stream so that the same code serves Redis' RDB I/O, tests and fuzzing.

use crate::bloom::chain::Chain;
use crate::bloom::link::{options_are_loadable, Link, LinkShape, OPT_BLOCKED, OPT_NO_SCALING};
use crate::counting::{CountingChain, CountingLink};
use crate::cuckoo::{
    CuckooFilter, CuckooParts, DEFAULT_BUCKET_SIZE, DEFAULT_EXPANSION, DEFAULT_MAX_ITERATIONS,
    MAX_SUB_FILTERS,
};
use crate::window::{WindowFilter, WindowShape, MAX_K};

/// Current encoding version of the Bloom type (`MBbloom--`).
pub const BLOOM_ENCODING: i32 = 4;
/// Current encoding version of the Cuckoo type (`MBbloomCF`).
pub const CUCKOO_ENCODING: i32 = 4;

/// A source of RDB fields; any error ends the load.
pub trait FieldReader {
    fn unsigned(&mut self) -> Option<u64>;
    fn double(&mut self) -> Option<f64>;
    fn buffer(&mut self) -> Option<Vec<u8>>;
}

/// A sink of RDB fields.
pub trait FieldWriter {
    fn unsigned(&mut self, v: u64);
    fn double(&mut self, v: f64);
    fn buffer(&mut self, v: &[u8]);
}

/// One RDB field, for in-memory streams.
#[derive(Clone, Debug, PartialEq)]
pub enum Field {
    Unsigned(u64),
    Double(f64),
    Buffer(Vec<u8>),
}

/// An in-memory field stream (tests, fuzzing, COPY-like tools).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Fields {
    pub fields: Vec<Field>,
    pub read_at: usize,
}

impl Fields {
    fn next(&mut self) -> Option<&Field> {
        let field = self.fields.get(self.read_at)?;
        self.read_at += 1;
        Some(field)
    }
}

impl FieldReader for Fields {
    fn unsigned(&mut self) -> Option<u64> {
        match self.next()? {
            Field::Unsigned(v) => Some(*v),
            _ => None,
        }
    }
    fn double(&mut self) -> Option<f64> {
        match self.next()? {
            Field::Double(v) => Some(*v),
            _ => None,
        }
    }
    fn buffer(&mut self) -> Option<Vec<u8>> {
        match self.next()? {
            Field::Buffer(v) => Some(v.clone()),
            _ => None,
        }
    }
}

impl FieldWriter for Fields {
    fn unsigned(&mut self, v: u64) {
        self.fields.push(Field::Unsigned(v));
    }
    fn double(&mut self, v: f64) {
        self.fields.push(Field::Double(v));
    }
    fn buffer(&mut self, v: &[u8]) {
        self.fields.push(Field::Buffer(v.to_vec()));
    }
}

/// Writes a Bloom chain in encoding 4.
pub fn save_chain(chain: &Chain, out: &mut impl FieldWriter) {
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
        out.unsigned(u64::from(link.n2));
        out.buffer(&link.data);
        out.unsigned(link.items);
    }
}

/// Reads a Bloom chain of any encoding RedisBloom wrote (0–4). Links are read one at a
/// time (the count comes from the file) and each must be internally consistent, so a
/// corrupt file fails the load instead of producing a filter that reads out of bounds; the
/// chain's item count must equal the sum of its links' (what a SCANDUMP header needs).
pub fn load_chain(input: &mut impl FieldReader, encver: i32) -> Option<Chain> {
    if !(0..=BLOOM_ENCODING).contains(&encver) {
        return None;
    }
    let items = input.unsigned()?;
    let nlinks = input.unsigned()?;
    let options = if encver >= 2 { input.unsigned()? } else { 0 };
    let growth = if encver >= 4 { input.unsigned()? } else { 2 };
    if nlinks == 0 || !options_are_loadable(options) {
        return None;
    }
    let mut links = Vec::new();
    for _ in 0..nlinks {
        let entries = input.unsigned()?;
        let error = input.double()?;
        let hashes = u32::try_from(input.unsigned()?).ok()?;
        let bpe = input.double()?;
        let (bits, n2) = if encver == 0 {
            ((entries as f64 * bpe) as u64, 0)
        } else {
            (input.unsigned()?, u8::try_from(input.unsigned()?).ok()?)
        };
        let data = input.buffer()?;
        let link_items = input.unsigned()?;
        let shape = LinkShape {
            entries,
            error,
            bpe,
            hashes,
            bits,
            bytes: data.len() as u64,
            n2,
            blocked: options & u64::from(OPT_BLOCKED) != 0,
        };
        let link = Link::from_parts(shape, link_items, data);
        if !link.is_consistent() {
            return None;
        }
        links.try_reserve(1).ok()?;
        links.push(link);
    }
    // The chain's count must be the sum of its links' counts, as LOADCHUNK requires of a
    // header: otherwise the filter's AOF rewrite (a LOADCHUNK sequence) would be refused on
    // replay and the key lost on restart.
    let in_links = links
        .iter()
        .try_fold(0u64, |sum: u64, link: &Link| sum.checked_add(link.items))?;
    if in_links != items {
        return None;
    }
    Some(Chain::from_parts(
        items,
        links,
        options as u32,
        u32::try_from(growth).ok()?,
    ))
}

/// Writes a Cuckoo filter in encoding 4 (COMPAT §4.3).
pub fn save_cuckoo(filter: &CuckooFilter, out: &mut impl FieldWriter) {
    out.unsigned(filter.num_filters() as u64);
    out.unsigned(filter.num_buckets());
    out.unsigned(filter.num_items());
    out.unsigned(filter.num_deletes());
    out.unsigned(u64::from(filter.bucket_size()));
    out.unsigned(u64::from(filter.max_iterations()));
    out.unsigned(u64::from(filter.expansion()));
    for sub in filter.sub_filters() {
        out.unsigned(sub.buckets());
        out.buffer(sub.data());
    }
}

/// Reads a Cuckoo filter of any encoding RedisBloom wrote. Encodings before 4 stored only
/// the counts and the data: the other fields take 2.4.20's fixed defaults and every
/// sub-filter has the base bucket count. The sub-filter count is checked before any data
/// is read, and the assembled filter is validated as a whole.
pub fn load_cuckoo(input: &mut impl FieldReader, encver: i32) -> Option<CuckooFilter> {
    if !(0..=CUCKOO_ENCODING).contains(&encver) {
        return None;
    }
    let nfilters = input.unsigned()?;
    let num_buckets = input.unsigned()?;
    let num_items = input.unsigned()?;
    let current = encver >= 4;
    let parts = if current {
        CuckooParts {
            num_buckets,
            num_items,
            num_deletes: input.unsigned()?,
            bucket_size: input.unsigned()?,
            max_iterations: input.unsigned()?,
            expansion: input.unsigned()?,
        }
    } else {
        CuckooParts {
            num_buckets,
            num_items,
            num_deletes: 0,
            bucket_size: u64::from(DEFAULT_BUCKET_SIZE),
            max_iterations: u64::from(DEFAULT_MAX_ITERATIONS),
            expansion: u64::from(DEFAULT_EXPANSION),
        }
    };
    if nfilters == 0 || nfilters > MAX_SUB_FILTERS as u64 {
        return None;
    }
    let mut subs = Vec::new();
    for _ in 0..nfilters {
        let buckets = if current {
            input.unsigned()?
        } else {
            num_buckets
        };
        let data = input.buffer()?;
        subs.try_reserve(1).ok()?;
        subs.push((buckets, data));
    }
    CuckooFilter::from_parts(parts, subs).ok()
}

// ---------------------------------------------------------------------------------------
// The counting Bloom filter (`RBcountBF`): redbloom's own type and encoding.

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
        links.push(CountingLink {
            entries,
            error,
            bpe,
            hashes,
            bits,
            items: link_items,
            counters,
        });
    }
    (items_in_links == items).then_some(CountingChain {
        items,
        links,
        options,
        growth,
    })
}

// ---------------------------------------------------------------------------------------
// The sliding-window Bloom filter (`RBwindBF`): redbloom's own type and encoding.

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

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn sample() -> Chain {
        let mut chain = Chain::new(10, 0.01, 2, true, u64::MAX).unwrap();
        for i in 0..50 {
            let pair = chain.hash(i.to_string().as_bytes());
            chain.add(pair, u64::MAX);
        }
        chain
    }

    #[test]
    fn save_then_load_is_identity() {
        let chain = sample();
        let mut fields = Fields::default();
        save_chain(&chain, &mut fields);
        assert_eq!(fields.fields.len(), 4 + 8 * chain.links.len());
        assert_eq!(load_chain(&mut fields, 4), Some(chain));
    }

    #[test]
    fn older_encodings_default_options_and_growth() {
        let chain = sample();
        let mut v4 = Fields::default();
        save_chain(&chain, &mut v4);
        // Encoding 3: no growth field; encoding 1: no options either.
        let mut v3 = v4.clone();
        v3.fields.remove(3);
        let loaded = load_chain(&mut v3, 3).unwrap();
        assert_eq!((loaded.growth, loaded.options), (2, chain.options));
        let mut v1 = v3.clone();
        v1.read_at = 0;
        v1.fields.remove(2);
        let loaded = load_chain(&mut v1, 1).unwrap();
        assert_eq!((loaded.growth, loaded.options), (2, 0));
        assert_eq!(loaded.links, chain.links);
    }

    #[test]
    fn corrupt_fields_fail_the_load() {
        let chain = sample();
        let mut good = Fields::default();
        save_chain(&chain, &mut good);
        let load = |f: &Fields, encver| load_chain(&mut f.clone(), encver);
        assert!(load(&good, 5).is_none());
        let mut f = good.clone();
        f.fields[1] = Field::Unsigned(0);
        assert!(load(&f, 4).is_none());
        let mut f = good.clone();
        f.fields[1] = Field::Unsigned(u64::MAX);
        assert!(
            load(&f, 4).is_none(),
            "a huge link count runs out of fields"
        );
        let mut f = good.clone();
        f.fields[5] = Field::Double(1.0);
        assert!(load(&f, 4).is_none());
        let mut f = good.clone();
        f.fields[10] = Field::Buffer(vec![0; 8]);
        assert!(load(&f, 4).is_none(), "buffer shorter than the bit count");
        let mut f = good.clone();
        f.fields[6] = Field::Unsigned(1 << 40);
        assert!(load(&f, 4).is_none());
        let mut f = good;
        f.fields.truncate(9);
        assert!(load(&f, 4).is_none());
    }

    fn sample_cuckoo() -> CuckooFilter {
        use crate::cuckoo::{CuckooHash, CuckooParams};
        let params = CuckooParams {
            capacity: 64,
            ..CuckooParams::default()
        };
        let mut filter = CuckooFilter::new(params, u64::MAX).unwrap();
        for i in 0..300 {
            filter
                .insert(&CuckooHash::new(i.to_string().as_bytes()), u64::MAX)
                .unwrap();
        }
        filter.delete(&CuckooHash::new(b"7"));
        filter
    }

    #[test]
    fn cuckoo_save_then_load_is_identity() {
        let filter = sample_cuckoo();
        assert!(filter.num_filters() > 1);
        let mut fields = Fields::default();
        save_cuckoo(&filter, &mut fields);
        assert_eq!(fields.fields.len(), 7 + 2 * filter.num_filters());
        assert_eq!(load_cuckoo(&mut fields, 4), Some(filter));
    }

    #[test]
    fn cuckoo_old_encoding_uses_fixed_defaults() {
        let filter = sample_cuckoo();
        let mut old = Fields::default();
        FieldWriter::unsigned(&mut old, 1);
        FieldWriter::unsigned(&mut old, filter.num_buckets());
        FieldWriter::unsigned(&mut old, 5);
        FieldWriter::buffer(&mut old, filter.sub_filters()[0].data());
        let loaded = load_cuckoo(&mut old, 3).unwrap();
        assert_eq!(
            (
                loaded.num_items(),
                loaded.num_deletes(),
                loaded.bucket_size()
            ),
            (5, 0, 2)
        );
        assert_eq!((loaded.max_iterations(), loaded.expansion()), (20, 1));
        assert_eq!(
            loaded.sub_filters()[0].data(),
            filter.sub_filters()[0].data()
        );
    }

    #[test]
    fn corrupt_cuckoo_fields_fail_the_load() {
        let filter = sample_cuckoo();
        let mut good = Fields::default();
        save_cuckoo(&filter, &mut good);
        let load = |f: &Fields| load_cuckoo(&mut f.clone(), 4);
        for (index, value) in [
            (0, 0),
            (0, 70000),
            (1, 0),
            (1, 3),
            (4, 0),
            (4, 256),
            (5, 0),
            (6, 3),
            (7, 64),
        ] {
            let mut f = good.clone();
            f.fields[index] = Field::Unsigned(value);
            assert!(load(&f).is_none(), "field {index} = {value}");
        }
        let mut f = good.clone();
        f.fields[8] = Field::Buffer(vec![0; 3]);
        assert!(load(&f).is_none(), "data length mismatch");
        let mut f = good;
        f.fields.truncate(8);
        assert!(load(&f).is_none());
    }

    /// Found by fuzz/bf_rdb: a chain whose total count differed from the sum of its links'
    /// loaded from an RDB, but its SCANDUMP header — and so its AOF rewrite — was refused.
    #[test]
    fn chain_count_must_be_the_sum_of_its_links() {
        let chain = sample();
        let mut good = Fields::default();
        save_chain(&chain, &mut good);
        for total in [chain.items + 1, chain.items - 1, 0, u64::MAX] {
            let mut f = good.clone();
            f.fields[0] = Field::Unsigned(total);
            assert!(load_chain(&mut f, 4).is_none(), "total {total}");
        }
        // Link counts whose sum overflows.
        let mut f = good.clone();
        f.fields[11] = Field::Unsigned(u64::MAX);
        assert!(load_chain(&mut f, 4).is_none());
        let loaded = load_chain(&mut good, 4).unwrap();
        let header = crate::bloom::dump::header(&loaded);
        assert!(crate::bloom::dump::chain_from_header(&header, u64::MAX).is_ok());
    }

    /// Found by fuzz/cf_rdb: sub-filters whose bucket counts did not follow
    /// `base × expansion^i` loaded, but their dump could not be loaded back.
    #[test]
    fn cuckoo_sub_filters_must_have_the_header_layout() {
        let crash = vec![
            Field::Unsigned(1),
            Field::Unsigned(2),
            Field::Unsigned(10),
            Field::Unsigned(0),
            Field::Unsigned(4),
            Field::Unsigned(20),
            Field::Unsigned(0),
            Field::Unsigned(4),
            Field::Buffer(vec![1; 16]),
        ];
        let mut f = Fields {
            fields: crash.clone(),
            read_at: 0,
        };
        assert!(load_cuckoo(&mut f, 4).is_none());
        // The same with the bucket count of the base: accepted.
        let mut fixed = crash;
        fixed[7] = Field::Unsigned(2);
        fixed[8] = Field::Buffer(vec![1; 8]);
        let mut f = Fields {
            fields: fixed,
            read_at: 0,
        };
        assert!(load_cuckoo(&mut f, 4).is_some());
        // A grown filter (expansion 2) whose second sub-filter has the base size.
        use crate::cuckoo::{CuckooHash, CuckooParams};
        let params = CuckooParams {
            capacity: 8,
            expansion: 2,
            ..CuckooParams::default()
        };
        let mut filter = CuckooFilter::new(params, u64::MAX).unwrap();
        for i in 0..40 {
            filter
                .insert(&CuckooHash::new(i.to_string().as_bytes()), u64::MAX)
                .unwrap();
        }
        assert!(filter.num_filters() >= 2);
        let mut good = Fields::default();
        save_cuckoo(&filter, &mut good);
        assert_eq!(load_cuckoo(&mut good.clone(), 4).as_ref(), Some(&filter));
        let mut f = good;
        let base = filter.num_buckets();
        f.fields[9] = Field::Unsigned(base);
        f.fields[10] = Field::Buffer(vec![0; (base * 2) as usize]);
        assert!(load_cuckoo(&mut f, 4).is_none());
    }

    /// Fields from a list of `(kind, n, bytes)`: an unrelated stream.
    fn random_fields(raw: Vec<(u8, u64, Vec<u8>)>, unsigned_below: u64) -> Fields {
        Fields {
            fields: raw
                .into_iter()
                .map(|(kind, n, bytes)| match kind {
                    0 => Field::Unsigned(n % unsigned_below),
                    1 => Field::Double(f64::from_bits(n)),
                    _ => Field::Buffer(bytes),
                })
                .collect(),
            read_at: 0,
        }
    }

    fn random_streams() -> impl Strategy<Value = Option<Vec<(u8, u64, Vec<u8>)>>> {
        prop_oneof![
            6 => Just(None),
            1 => proptest::option::of(proptest::collection::vec(
                (0u8..3, any::<u64>(), proptest::collection::vec(any::<u8>(), 0..40)),
                0..40,
            )),
        ]
    }

    /// The RDB fields of real Cuckoo filters (grown, with deletes), then edited (or, now
    /// and then, random), under any encoding version: nothing panics; whatever loads saves
    /// back to the fields it read; an unedited stream of the current encoding loads as the
    /// filter.
    #[test]
    fn arbitrary_cuckoo_fields_never_panic() {
        use crate::cuckoo::{CuckooHash, CuckooParams};
        use crate::testing::{apply_field_edits, field_edits, run_counting};
        let source = (
            1u64..40,
            1u16..=4,
            prop_oneof![Just(0u16), Just(1), Just(2), Just(4)],
            0u16..120,
            0u16..20,
        );
        let encver = prop_oneof![4 => Just(CUCKOO_ENCODING), 1 => -1i32..6];
        run_counting(
            "arbitrary_cuckoo_fields_never_panic",
            400,
            120,
            (source, field_edits(), random_streams(), encver),
            |((capacity, bucket_size, expansion, n, deletes), edits, random, encver)| {
                let params = CuckooParams {
                    capacity: 2 * u64::from(bucket_size) + capacity,
                    bucket_size,
                    max_iterations: 20,
                    expansion,
                };
                let mut filter = CuckooFilter::new(params, u64::MAX).unwrap();
                for i in 0..n {
                    let _ = filter.insert(&CuckooHash::new(&i.to_le_bytes()), u64::MAX);
                }
                for i in 0..deletes.min(n) {
                    filter.delete(&CuckooHash::new(&i.to_le_bytes()));
                }
                let mut good = Fields::default();
                save_cuckoo(&filter, &mut good);
                let mut fields = match random {
                    Some(raw) => random_fields(raw, 70),
                    None => apply_field_edits(&good, &edits),
                };
                let stream = fields.fields.clone();
                match load_cuckoo(&mut fields, encver) {
                    Some(loaded) => {
                        if encver == CUCKOO_ENCODING {
                            let mut again = Fields::default();
                            save_cuckoo(&loaded, &mut again);
                            prop_assert_eq!(&again.fields[..], &stream[..fields.read_at]);
                        }
                        if stream == good.fields && encver == CUCKOO_ENCODING {
                            prop_assert_eq!(&loaded, &filter);
                        }
                        Ok(true)
                    }
                    None => {
                        prop_assert!(stream != good.fields || encver != CUCKOO_ENCODING);
                        Ok(false)
                    }
                }
            },
        );
    }

    /// The same for Bloom chains (several links, non-scaling ones full).
    #[test]
    fn arbitrary_fields_never_panic() {
        use crate::testing::{apply_field_edits, field_edits, run_counting};
        let source = (
            1u64..30,
            prop_oneof![Just(0.01), Just(0.1)],
            1u32..4,
            any::<bool>(),
            0u16..200,
        );
        let encver = prop_oneof![4 => Just(BLOOM_ENCODING), 1 => -1i32..6];
        run_counting(
            "bloom arbitrary_fields_never_panic",
            400,
            120,
            (source, field_edits(), random_streams(), encver),
            |((capacity, error, growth, scaling, n), edits, random, encver)| {
                let mut chain = Chain::new(capacity, error, growth, scaling, u64::MAX).unwrap();
                for i in 0..n {
                    chain.add(chain.hash(&i.to_le_bytes()), u64::MAX);
                }
                let mut good = Fields::default();
                save_chain(&chain, &mut good);
                let mut fields = match random {
                    Some(raw) => random_fields(raw, 1000),
                    None => apply_field_edits(&good, &edits),
                };
                let stream = fields.fields.clone();
                match load_chain(&mut fields, encver) {
                    Some(loaded) => {
                        prop_assert!(loaded.links_are_consistent());
                        if encver == BLOOM_ENCODING {
                            let mut again = Fields::default();
                            save_chain(&loaded, &mut again);
                            prop_assert_eq!(&again.fields[..], &stream[..fields.read_at]);
                        }
                        if stream == good.fields && encver == BLOOM_ENCODING {
                            prop_assert_eq!(&loaded, &chain);
                        }
                        Ok(true)
                    }
                    None => {
                        prop_assert!(stream != good.fields || encver != BLOOM_ENCODING);
                        Ok(false)
                    }
                }
            },
        );
    }
}
