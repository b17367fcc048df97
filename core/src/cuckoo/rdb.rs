//! The Cuckoo type's RDB layout (`MBbloomCF`, encodings 0–4; COMPAT §4.3).

use crate::cuckoo::{
    CuckooFilter, CuckooParts, DEFAULT_BUCKET_SIZE, DEFAULT_EXPANSION, DEFAULT_MAX_ITERATIONS,
    MAX_SUB_FILTERS,
};
use crate::rdb::{FieldReader, FieldWriter};

/// Current encoding version of the Cuckoo type (`MBbloomCF`).
pub const CUCKOO_ENCODING: i32 = 4;

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

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    use crate::rdb::{Field, Fields};
    use crate::testing::{random_fields, random_streams};

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
}
