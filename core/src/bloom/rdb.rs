//! The Bloom type's RDB layout (`MBbloom--`, encodings 0–4; COMPAT §4.2).

use crate::bloom::chain::Chain;
use crate::bloom::link::{options_are_loadable, Link, LinkShape, OPT_BLOCKED};
use crate::rdb::{FieldReader, FieldWriter};

/// Current encoding version of the Bloom type (`MBbloom--`).
pub const BLOOM_ENCODING: i32 = 4;

/// Encoding version of the BLOCKED Bloom type (`RBblockBF`, redbloom's own): the fields of
/// `MBbloom--` encoding 4, the BLOCKED option bit always set.
pub const BLOCKED_ENCODING: i32 = 1;

/// Reads a BLOCKED chain of the `RBblockBF` type: encoding 1, whose fields are those of
/// `MBbloom--` encoding 4; a chain without the BLOCKED option is refused (no command
/// stores a classic chain under that type).
pub fn load_blocked(input: &mut impl FieldReader, encver: i32) -> Option<Chain> {
    if encver != BLOCKED_ENCODING {
        return None;
    }
    load_chain(input, BLOOM_ENCODING).filter(Chain::is_blocked)
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

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    use crate::rdb::{Field, Fields};
    use crate::testing::{random_fields, random_streams};

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
    fn blocked_type_takes_only_blocked_chains_of_its_encoding() {
        let mut blocked = Chain::with_layout(100, 0.01, 2, true, true, u64::MAX).unwrap();
        let pair = blocked.hash(b"a");
        blocked.add(pair, u64::MAX);
        let mut fields = Fields::default();
        save_chain(&blocked, &mut fields);
        assert_eq!(load_blocked(&mut fields.clone(), 1), Some(blocked.clone()));
        assert_eq!(load_blocked(&mut fields.clone(), 2), None);
        assert_eq!(load_blocked(&mut fields.clone(), 0), None);
        // The legacy form (MBbloom-- with the option bit) still loads as it did.
        assert_eq!(load_chain(&mut fields, 4), Some(blocked));
        let mut classic = Fields::default();
        save_chain(&sample(), &mut classic);
        assert_eq!(load_blocked(&mut classic, 1), None);
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
