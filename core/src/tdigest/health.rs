//! A t-digest's health (TDIGEST.HEALTH): its observations, centroids against their
//! capacity and the compression (its quantiles' error shrinks as 1 / compression at the
//! tails' rate). O(1).

use super::TDigest;
use crate::health::{label, Health, Value};

impl TDigest {
    /// The health reply's figures (no alert applies).
    pub fn health(&self) -> Health {
        let fields = vec![
            (label::ITEMS, Value::Integer(self.size())),
            ("compression", Value::Double(self.compression())),
            (
                "centroids",
                Value::Integer((self.merged_nodes() + self.unmerged_nodes()) as i64),
            ),
            (label::CAPACITY, Value::Integer(self.capacity() as i64)),
            (label::ALERTS, Value::Integer(0)),
        ];
        Health { fields, alerts: 0 }
    }
}
