//! A counting chain's health (CBF.HEALTH): as a Bloom chain's, from each link's non-zero
//! counters, plus its saturated counters (both kept on every write). O(links).

use super::link::CountingLink;
use super::CountingChain;
use crate::health::{chain_alerts, chain_health, ChainFigures, Health, LinkFill};

impl CountingLink {
    /// This link's fill as health reads it (a non-zero counter is a set bit).
    pub fn fill_figures(&self) -> LinkFill {
        LinkFill {
            set: self.nonzero,
            bits: self.bits,
            hashes: self.hashes,
            block_bits: None,
        }
    }
}

impl CountingChain {
    /// The rate the chain was reserved for: a scaling chain's first link got half of it.
    pub fn target_fp(&self) -> f64 {
        let first = self.links()[0].error();
        if self.is_scaling() {
            first * 2.0
        } else {
            first
        }
    }

    fn figures(&self) -> ChainFigures {
        ChainFigures {
            items: self.items(),
            capacity: self.links()[0].entries(),
            target: self.target_fp(),
            saturated: Some(self.links().iter().map(CountingLink::saturated).sum()),
        }
    }

    /// The alert flags, without allocating.
    pub fn alerts(&self) -> u8 {
        chain_alerts(
            self.figures(),
            self.links().iter().map(CountingLink::fill_figures),
        )
    }

    /// The health reply's figures.
    pub fn health(&self) -> Health {
        let links: Vec<LinkFill> = self
            .links()
            .iter()
            .map(CountingLink::fill_figures)
            .collect();
        chain_health(self.figures(), &links)
    }
}

#[cfg(test)]
mod tests {
    use super::super::link::tally;
    use super::*;
    use crate::health::{label, Value, SATURATED};
    use proptest::prelude::*;

    fn recounted(chain: &CountingChain) -> Vec<(u64, u64)> {
        chain.links().iter().map(|l| tally(l.counters())).collect()
    }

    fn kept(chain: &CountingChain) -> Vec<(u64, u64)> {
        chain
            .links()
            .iter()
            .map(|l| (l.nonzero(), l.saturated()))
            .collect()
    }

    proptest! {
        /// The counts kept on every add and delete equal a recount, also after a dump
        /// reloaded chunk by chunk and a merge.
        #[test]
        fn kept_counts_equal_a_recount(
            ops in proptest::collection::vec((0u8..40, any::<bool>()), 0..800),
        ) {
            let mut chain = CountingChain::new(20, 0.01, 2, true, u64::MAX).unwrap();
            for (item, delete) in &ops {
                let pair = chain.hash(&[*item]);
                if *delete {
                    chain.delete(pair);
                } else {
                    let _ = chain.add(pair, u64::MAX);
                }
                prop_assert_eq!(kept(&chain), recounted(&chain));
            }
            let mut copy = super::super::dump::chain_from_header(
                &super::super::dump::header(&chain), u64::MAX).unwrap();
            let mut iter = 1;
            while let Some((next, data)) = super::super::dump::chunk(&chain, iter) {
                super::super::dump::load_chunk(&mut copy, next, data).unwrap();
                prop_assert_eq!(kept(&copy), recounted(&copy));
                iter = next;
            }
            prop_assert_eq!(kept(&copy), kept(&chain));
            if let Ok(merged) =
                CountingChain::merge(&[&chain, &copy], crate::merge::MergeOp::Union, u64::MAX)
            {
                prop_assert_eq!(kept(&merged), recounted(&merged));
            }
        }
    }

    #[test]
    fn a_saturated_counter_raises_its_alert() {
        let mut chain = CountingChain::new(100, 0.01, 2, true, u64::MAX).unwrap();
        let pair = chain.hash(b"x");
        for _ in 0..14 {
            let _ = chain.add(pair, u64::MAX);
        }
        assert_eq!(chain.alerts() & SATURATED, 0);
        let _ = chain.add(pair, u64::MAX);
        assert_eq!(chain.alerts() & SATURATED, SATURATED);
        let hashes = i64::from(chain.links()[0].hashes());
        assert_eq!(
            chain.health().get(label::SATURATED),
            Some(&Value::Integer(hashes))
        );
    }
}
