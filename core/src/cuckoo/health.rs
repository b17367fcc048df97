//! A Cuckoo filter's health (CF.HEALTH): each sub-filter's load from its empty-slot count
//! (kept on every write), the rate those loads give, the sub-filters against the limit,
//! and the chance the next add fails. O(sub-filters).

use super::CuckooFilter;
use crate::health::{
    compound, label, Health, Value, CF_NEAR_LIMIT_PERCENT, LONG_CHAIN, LONG_CHAIN_LINKS,
    NEAR_LIMIT, OVER_CAPACITY,
};

impl CuckooFilter {
    /// Each sub-filter's share of slots in use.
    fn loads(&self) -> impl ExactSizeIterator<Item = f64> + '_ {
        let bucket = u64::from(self.bucket_size);
        self.filters.iter().map(move |sub| {
            let slots = sub.buckets * bucket;
            if slots == 0 {
                0.0
            } else {
                (slots - sub.free.min(slots)) as f64 / slots as f64
            }
        })
    }

    /// The rate a sub-filter at `load` gives an absent item: 8-bit fingerprints (255
    /// non-zero values) compared in two buckets of the bucket size.
    pub fn sub_filter_fp(&self, load: f64) -> f64 {
        1.0 - (1.0 - 1.0 / 255.0f64).powf(2.0 * f64::from(self.bucket_size) * load)
    }

    /// The capacity it was reserved for: the first sub-filter's slots.
    pub fn reserved_capacity(&self) -> u64 {
        self.num_buckets * u64::from(self.bucket_size)
    }

    /// The alert flags, without allocating; `max_filters` is the server's sub-filter limit.
    pub fn alerts(&self, max_filters: usize) -> u8 {
        let mut alerts = 0;
        if self.num_items > self.reserved_capacity() {
            alerts |= OVER_CAPACITY;
        }
        if self.filters.len() >= LONG_CHAIN_LINKS {
            alerts |= LONG_CHAIN;
        }
        if self.filters.len() * 100 >= max_filters * CF_NEAR_LIMIT_PERCENT {
            alerts |= NEAR_LIMIT;
        }
        alerts
    }

    /// The chance the next add of a new item fails: when the filter cannot grow (no
    /// expansion, or at `max_filters`), an add fails only after both of its buckets are
    /// full in every sub-filter and the kick-outs find no room — bounded here by the
    /// chance that both buckets are full everywhere, Π load^(2 · bucket size); 0 while the
    /// filter can still grow.
    fn next_add_fail_chance(&self, max_filters: usize) -> f64 {
        if self.expansion > 0 && self.filters.len() < max_filters {
            return 0.0;
        }
        let exponent = 2 * i32::from(self.bucket_size);
        self.loads().map(|load| load.powi(exponent)).product()
    }

    /// The health reply's figures.
    pub fn health(&self, max_filters: usize) -> Health {
        let loads: Vec<f64> = self.loads().collect();
        let alerts = self.alerts(max_filters);
        let fields = vec![
            (
                label::ESTIMATED_FP,
                Value::Double(compound(loads.iter().map(|&l| self.sub_filter_fp(l)))),
            ),
            (label::TARGET_FP, Value::Null),
            (label::ITEMS, Value::Integer(self.num_items as i64)),
            (
                label::CAPACITY,
                Value::Integer(self.reserved_capacity() as i64),
            ),
            (label::LINKS, Value::Integer(self.filters.len() as i64)),
            (label::MAX_SUB_FILTERS, Value::Integer(max_filters as i64)),
            (label::SUB_FILTER_LOAD, Value::Doubles(loads)),
            (
                label::NEXT_ADD_FAILS,
                Value::Double(self.next_add_fail_chance(max_filters)),
            ),
            (label::ALERTS, Value::Integer(i64::from(alerts))),
        ];
        Health { fields, alerts }
    }
}

#[cfg(test)]
mod tests {
    use super::super::{CuckooFilter, CuckooHash, CuckooParams};
    use crate::health::{label, Value, NEAR_LIMIT, OVER_CAPACITY};

    #[test]
    fn loads_limits_and_the_failing_add() {
        let params = CuckooParams {
            capacity: 64,
            bucket_size: 2,
            max_iterations: 20,
            expansion: 0,
        };
        let mut filter = CuckooFilter::new(params, u64::MAX).unwrap();
        assert_eq!(filter.alerts(32), 0);
        let health = filter.health(32);
        assert_eq!(
            health.get(label::SUB_FILTER_LOAD),
            Some(&Value::Doubles(vec![0.0]))
        );
        assert_eq!(health.get(label::NEXT_ADD_FAILS), Some(&Value::Double(0.0)));
        let mut added = 0u64;
        for i in 0..200u32 {
            if filter
                .insert(&CuckooHash::new(&i.to_le_bytes()), u64::MAX)
                .is_ok()
            {
                added += 1;
            }
        }
        let health = filter.health(32);
        let Some(Value::Doubles(loads)) = health.get(label::SUB_FILTER_LOAD) else {
            panic!("{health:?}");
        };
        assert_eq!(loads[0], added as f64 / 64.0);
        assert!(health.number(label::NEXT_ADD_FAILS).unwrap() > 0.5);
        assert_eq!(filter.alerts(1) & NEAR_LIMIT, NEAR_LIMIT);
        assert_eq!(filter.alerts(32) & OVER_CAPACITY, 0);
    }
}
