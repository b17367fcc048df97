//! The field order of each filter type in RDB files (COMPAT §4.2), over an abstract field
//! stream so that the same code serves Redis' RDB I/O, tests and fuzzing.

use super::bloom::{Link, OPT_ALL};
use super::chain::Chain;

/// Current encoding version of the Bloom type (`MBbloom--`).
pub const BLOOM_ENCODING: i32 = 4;

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
/// corrupt file fails the load instead of producing a filter that reads out of bounds.
pub fn load_chain(input: &mut impl FieldReader, encver: i32) -> Option<Chain> {
    if !(0..=BLOOM_ENCODING).contains(&encver) {
        return None;
    }
    let items = input.unsigned()?;
    let nlinks = input.unsigned()?;
    let options = if encver >= 2 { input.unsigned()? } else { 0 };
    let growth = if encver >= 4 { input.unsigned()? } else { 2 };
    if nlinks == 0 || options & !u64::from(OPT_ALL) != 0 {
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
        let link = Link {
            entries,
            error,
            bpe,
            hashes,
            bits,
            n2,
            items: link_items,
            data,
        };
        if !link.is_consistent() {
            return None;
        }
        links.try_reserve(1).ok()?;
        links.push(link);
    }
    Some(Chain {
        items,
        links,
        options: options as u32,
        growth: u32::try_from(growth).ok()?,
    })
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

    proptest! {
        #[test]
        fn arbitrary_fields_never_panic(
            raw in proptest::collection::vec((0u8..3, any::<u64>(), proptest::collection::vec(any::<u8>(), 0..40)), 0..40),
            encver in -1i32..6,
        ) {
            let fields = raw.into_iter().map(|(kind, n, bytes)| match kind {
                0 => Field::Unsigned(n % 1000),
                1 => Field::Double(f64::from_bits(n)),
                _ => Field::Buffer(bytes),
            }).collect();
            let _ = load_chain(&mut Fields { fields, read_at: 0 }, encver);
        }
    }
}
