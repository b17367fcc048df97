//! A Top-K's health (TOPK.HEALTH): its list against k and its sketch's size (a full list
//! on a narrow sketch admits items by collisions). O(1).

use super::TopK;
use crate::health::{label, Health, Value};

impl TopK {
    /// The health reply's figures (no alert applies).
    pub fn health(&self) -> Health {
        let fields = vec![
            (
                label::ITEMS,
                Value::Integer(i64::from(self.listed_entries())),
            ),
            ("k", Value::Integer(i64::from(self.k()))),
            ("width", Value::Integer(i64::from(self.width()))),
            ("depth", Value::Integer(i64::from(self.depth()))),
            ("decay", Value::Double(self.decay())),
            (label::ALERTS, Value::Integer(0)),
        ];
        Health { fields, alerts: 0 }
    }
}
