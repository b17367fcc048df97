//! A static filter's health (SF.HEALTH): the rate its fingerprints give, 2^−bits, against
//! the rate it was built for, and how much of it is loaded. O(1).

use super::StaticFilter;
use crate::health::{label, over, Health, Value, OVER_FP};

impl StaticFilter {
    /// The alert flags.
    pub fn alerts(&self) -> u8 {
        if over(self.guaranteed_error(), self.requested_error()) {
            OVER_FP
        } else {
            0
        }
    }

    /// The health reply's figures.
    pub fn health(&self) -> Health {
        let alerts = self.alerts();
        let fields = vec![
            (label::ESTIMATED_FP, Value::Double(self.guaranteed_error())),
            (label::TARGET_FP, Value::Double(self.requested_error())),
            (label::ITEMS, Value::Integer(self.items() as i64)),
            ("complete", Value::Integer(i64::from(self.is_complete()))),
            (label::ALERTS, Value::Integer(i64::from(alerts))),
        ];
        Health { fields, alerts }
    }
}
