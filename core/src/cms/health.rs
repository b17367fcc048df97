//! A Count-Min Sketch's health (CMS.HEALTH): how far a count may be over the truth. Each
//! count overestimates by at most `total · 2 / width` (RedisBloom sizes `width` as
//! `⌈2 / error⌉`) with probability `1 − 2^−depth`. O(1).

use super::CountMinSketch;
use crate::health::{label, Health, Value};

/// The label of the overestimate bound, in counts.
pub const ERROR_BOUND: &str = "error_bound";
/// The label of the chance a count stays within it.
pub const CONFIDENCE: &str = "error_bound_confidence";

impl CountMinSketch {
    /// The health reply's figures (a sketch raises no alert: it has no capacity).
    pub fn health(&self) -> Health {
        let bound = (self.count() as f64 * 2.0 / self.width().max(1) as f64).ceil();
        let fields = vec![
            (label::ITEMS, Value::Integer(self.count() as i64)),
            ("width", Value::Integer(self.width() as i64)),
            ("depth", Value::Integer(self.depth() as i64)),
            ("cell_size", Value::Integer(i64::from(self.cell_size()))),
            (ERROR_BOUND, Value::Integer(bound as i64)),
            (
                CONFIDENCE,
                Value::Double(1.0 - 0.5f64.powi(self.depth().min(1024) as i32)),
            ),
            (label::ALERTS, Value::Integer(0)),
        ];
        Health { fields, alerts: 0 }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_bound_grows_with_the_total() {
        let mut cms =
            CountMinSketch::new(200, 3, super::super::DEFAULT_CELL_SIZE, u64::MAX).unwrap();
        assert_eq!(cms.health().get(ERROR_BOUND), Some(&Value::Integer(0)));
        cms.incr_by(b"a", 1000);
        let health = cms.health();
        assert_eq!(health.get(ERROR_BOUND), Some(&Value::Integer(10)));
        assert_eq!(health.get(CONFIDENCE), Some(&Value::Double(0.875)));
        assert_eq!(health.get("cell_size"), Some(&Value::Integer(4)));
    }
}
