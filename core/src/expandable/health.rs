//! An expandable filter's health (XF.HEALTH): the false-positive rate its structure
//! guarantees now (the exact union bound) against the rate it was asked for, O(1); and its
//! active defragmentation.

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

impl XFilter {
    /// Offers the filter's buffers to `r` (the server's active defragmentation): at cursor
    /// 0 the directory (the segment list and each segment), then each partition's bit
    /// array from partition `from` on, pausing when `r` says so. Returns the cursor to
    /// resume from, or `None` when every buffer was offered; a cursor past the partitions
    /// (the filter changed between two calls) ends the walk. Nothing changes but where the
    /// buffers live.
    pub fn relocate(&mut self, from: u64, r: &mut impl crate::memory::Relocator) -> Option<u64> {
        if from == 0 {
            r.relocate(&mut self.segments);
            for seg in &mut self.segments {
                r.relocate(seg);
            }
        }
        let total = self.partitions();
        for j in from..total {
            let p = self.partition_mut(j);
            let mut words = std::mem::take(&mut p.words).into_vec();
            r.relocate(&mut words);
            p.words = words.into_boxed_slice();
            if j + 1 < total && r.should_stop() {
                return Some(j + 1);
            }
        }
        None
    }
}
