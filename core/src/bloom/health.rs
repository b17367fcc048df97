//! A Bloom chain's health (BF.HEALTH, `redbloom inspect`, `redbloom health`): each link's
//! fill from its set-bit count (kept on every write), the rate that fill gives, against
//! the rate and capacity reserved. O(links).

use super::blocked::BLOCK_BITS;
use super::{Chain, Link};
use crate::health::{chain_alerts, chain_health, ChainFigures, Health, LinkFill};

impl Link {
    /// This link's fill as health reads it.
    pub fn fill_figures(&self) -> LinkFill {
        LinkFill {
            set: self.ones,
            bits: self.bits,
            hashes: self.hashes,
            block_bits: self.blocked.then_some(BLOCK_BITS),
        }
    }
}

impl Chain {
    /// The rate the chain was reserved for: a scaling chain's first link got half of it.
    pub fn target_fp(&self) -> f64 {
        let first = self.links[0].error;
        if self.is_scaling() {
            first * 2.0
        } else {
            first
        }
    }

    fn figures(&self) -> ChainFigures {
        ChainFigures {
            items: self.items,
            capacity: self.links[0].entries,
            target: self.target_fp(),
            saturated: None,
        }
    }

    /// The alert flags (`crate::health::OVER_FP` ...), without allocating.
    pub fn alerts(&self) -> u8 {
        chain_alerts(self.figures(), self.links.iter().map(Link::fill_figures))
    }

    /// The health reply's figures.
    pub fn health(&self) -> Health {
        let links: Vec<LinkFill> = self.links.iter().map(Link::fill_figures).collect();
        chain_health(self.figures(), &links)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bloom::chain::AddOutcome;
    use crate::health::{label, set_bits, Value, LONG_CHAIN, OVER_CAPACITY, OVER_FP};
    use proptest::prelude::*;

    fn recounted(chain: &Chain) -> Vec<u64> {
        chain.links().iter().map(|l| set_bits(l.data())).collect()
    }

    fn kept(chain: &Chain) -> Vec<u64> {
        chain.links().iter().map(Link::ones).collect()
    }

    proptest! {
        /// The set-bit counts kept on every write equal a recount, after adds (one by
        /// one and in bulk), growth, a dump reloaded chunk by chunk, and a merge.
        #[test]
        fn kept_counts_equal_a_recount(
            items in proptest::collection::vec(any::<u32>(), 0..600),
            blocked in any::<bool>(),
            scaling in any::<bool>(),
        ) {
            let mut chain =
                Chain::with_layout(50, 0.01, 2, scaling, blocked, u64::MAX).unwrap();
            for item in &items {
                let pair = chain.hash(&item.to_le_bytes());
                let _ = chain.add(pair, u64::MAX);
            }
            prop_assert_eq!(kept(&chain), recounted(&chain));
            let mut copy = crate::bloom::dump::chain_from_header(
                &crate::bloom::dump::header(&chain), u64::MAX).unwrap();
            prop_assert!(kept(&copy).iter().all(|&n| n == 0));
            let mut iter = 1;
            while let Some((next, data)) = crate::bloom::dump::chunk(&chain, iter) {
                crate::bloom::dump::load_chunk(&mut copy, next, data).unwrap();
                prop_assert_eq!(kept(&copy), recounted(&copy));
                iter = next;
            }
            prop_assert_eq!(kept(&copy), kept(&chain));
            // Reloading a chunk over itself changes no count.
            if let Some((next, data)) = crate::bloom::dump::chunk(&chain, 1) {
                crate::bloom::dump::load_chunk(&mut copy, next, data).unwrap();
                prop_assert_eq!(kept(&copy), recounted(&copy));
            }
            let merged = Chain::merge(&[&chain, &copy], crate::merge::MergeOp::Union, u64::MAX);
            if let Ok(merged) = merged {
                prop_assert_eq!(kept(&merged), recounted(&merged));
            }
        }
    }

    #[test]
    fn a_chain_past_its_capacity_raises_its_alerts() {
        let mut chain = Chain::new(100, 0.01, 2, true, u64::MAX).unwrap();
        assert_eq!(chain.alerts(), 0);
        for i in 0..100u32 {
            assert_eq!(
                chain.add(chain.hash(&i.to_le_bytes()), u64::MAX),
                AddOutcome::Added
            );
        }
        assert_eq!(chain.alerts() & OVER_CAPACITY, 0);
        for i in 100..1600u32 {
            let _ = chain.add(chain.hash(&i.to_le_bytes()), u64::MAX);
        }
        // Scaling keeps the rate under the target (each new link at half the rate of
        // the one before): past its capacity, in a chain of 5 links.
        let health = chain.health();
        assert_eq!(chain.alerts(), OVER_CAPACITY | LONG_CHAIN);
        assert_eq!(health.alerts, chain.alerts());
        assert_eq!(health.get(label::TARGET_FP), Some(&Value::Double(0.01)));
        assert_eq!(health.get(label::CAPACITY), Some(&Value::Integer(100)));
        assert_eq!(health.get(label::LINKS), Some(&Value::Integer(5)));
        assert!(health.number(label::ESTIMATED_FP).unwrap() < 0.01);
    }

    #[test]
    fn a_union_of_full_filters_is_over_its_rate() {
        let full = |from: u32| {
            let mut chain = Chain::new(1000, 0.01, 2, false, u64::MAX).unwrap();
            for i in from..from + 1000 {
                let _ = chain.add(chain.hash(&i.to_le_bytes()), u64::MAX);
            }
            chain
        };
        let (a, b) = (full(0), full(1000));
        assert_eq!(a.alerts(), 0);
        let merged = Chain::merge(&[&a, &b], crate::merge::MergeOp::Union, u64::MAX).unwrap();
        assert_eq!(merged.alerts(), OVER_FP | OVER_CAPACITY);
        let estimate = merged.health().number(label::ESTIMATED_FP).unwrap();
        // 2000 items in a link sized for 1000 at 1 %: ~15 % by the fill.
        assert!((0.1..0.2).contains(&estimate), "{estimate}");
    }
}
