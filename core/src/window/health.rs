//! A window filter's health (WBF.HEALTH): the adds inside the window against the capacity
//! per window, and the rate its fullest generation gives. O(slices): from the adds kept
//! per generation, not the bits.

use super::shape::{false_positive_bound, fill_for};
use super::WindowFilter;
use crate::health::{label, over, Health, Value, OVER_CAPACITY, OVER_FP};

impl WindowFilter {
    /// The estimated rate: the shape fills a slice to `fill_for(k, error)` with one
    /// generation's share of the capacity; a generation holding `ratio` times that share
    /// fills it to 1 − (1 − p)^ratio, and the bound of `2k` slices at that fill follows.
    fn estimated_fp(&self) -> f64 {
        let share = self.shape.generation_size.max(1) as f64;
        let fullest = self.counts.iter().copied().max().unwrap_or(0) as f64;
        let p = fill_for(self.shape.k, self.error);
        let fill = 1.0 - (1.0 - p).powf(fullest / share);
        false_positive_bound(self.shape.k, fill)
    }

    /// The alert flags, without allocating.
    pub fn alerts(&self) -> u8 {
        let mut alerts = 0;
        if over(self.estimated_fp(), self.error) {
            alerts |= OVER_FP;
        }
        if self.stored_items() > self.capacity {
            alerts |= OVER_CAPACITY;
        }
        alerts
    }

    /// The health reply's figures.
    pub fn health(&self) -> Health {
        let alerts = self.alerts();
        let fields = vec![
            (label::ESTIMATED_FP, Value::Double(self.estimated_fp())),
            (label::TARGET_FP, Value::Double(self.error)),
            (label::ITEMS, Value::Integer(self.stored_items() as i64)),
            (label::CAPACITY, Value::Integer(self.capacity as i64)),
            (label::LINKS, Value::Integer(i64::from(self.shape.slices()))),
            (label::ALERTS, Value::Integer(i64::from(alerts))),
        ];
        Health { fields, alerts }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_window_over_its_capacity_is_over_its_rate() {
        let mut filter = WindowFilter::new(100, 0.01, None, 0, u64::MAX).unwrap();
        assert_eq!(filter.alerts(), 0);
        for i in 0..100u32 {
            filter.add_untimed(crate::hash::HashPair::wide(&i.to_le_bytes()));
        }
        let at_capacity = filter.health().number(label::ESTIMATED_FP).unwrap();
        assert!(at_capacity <= 0.01 * 1.01, "{at_capacity}");
        // Counted windows move on by adds: the whole window's load stays at capacity.
        // A generation overloaded by hand (as a merge or a dump could leave it):
        filter.counts[filter.newest as usize] *= 3;
        assert_eq!(filter.alerts() & OVER_FP, OVER_FP);
    }
}
