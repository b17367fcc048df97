//! An expandable filter's health (XF.HEALTH): the false-positive rate its structure
//! guarantees now (the exact union bound) against the rate it was asked for. O(1).

use super::XFilter;
use crate::health::{label, over, Health, Value, OVER_FP};

impl XFilter {
    /// The alert flags: [`OVER_FP`] when the bound passes the asked rate (which the
    /// widening schedule prevents; a loaded payload could still carry it).
    pub fn alerts(&self) -> u8 {
        if over(self.fp_bound(), self.error_rate) {
            OVER_FP
        } else {
            0
        }
    }

    /// The health reply's figures.
    pub fn health(&self) -> Health {
        let alerts = self.alerts();
        let info = self.info();
        let fields = vec![
            (label::ESTIMATED_FP, Value::Double(info.fp_bound)),
            (label::TARGET_FP, Value::Double(info.error_rate)),
            (label::ITEMS, Value::Integer(info.items as i64)),
            (label::CAPACITY, Value::Integer(info.capacity as i64)),
            ("partitions", Value::Integer(info.partitions as i64)),
            ("bits_per_item", Value::Double(info.bits_per_item)),
            (label::ALERTS, Value::Integer(i64::from(alerts))),
        ];
        Health { fields, alerts }
    }
}
