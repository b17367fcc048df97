//! Filter health: what makes a filter's answers less accurate than asked, or its next add
//! fail — the figures each family computes beside itself (`bloom/health.rs`,
//! `cuckoo/health.rs`, ...) in O(links) from counts kept on every write, and the alert
//! flags the module's INFO counts are kept from. The module's `*.HEALTH` replies,
//! `redbloom inspect` and `redbloom health` all read these, so they agree.

/// The estimated false-positive rate is above the rate the filter was reserved for (by
/// more than [`OVER_FP_FACTOR`]).
pub const OVER_FP: u8 = 1;
/// The filter holds more items than the capacity it was reserved for.
pub const OVER_CAPACITY: u8 = 2;
/// The chain has [`LONG_CHAIN_LINKS`] links or more (every lookup probes each).
pub const LONG_CHAIN: u8 = 4;
/// A Cuckoo filter has [`CF_NEAR_LIMIT_PERCENT`] % of its sub-filter limit or more.
pub const NEAR_LIMIT: u8 = 8;
/// A counting filter has a saturated counter (stuck at 15: its items can no longer be
/// deleted without leaving that counter set).
pub const SATURATED: u8 = 16;

/// Every alert flag, in INFO order, with its INFO field name.
pub const ALERTS: [(u8, &str); 5] = [
    (OVER_FP, "over_fp_rate"),
    (OVER_CAPACITY, "over_capacity"),
    (LONG_CHAIN, "long_chains"),
    (NEAR_LIMIT, "cf_near_limit"),
    (SATURATED, "cbf_saturated"),
];

/// A chain of this many links or more raises [`LONG_CHAIN`].
pub const LONG_CHAIN_LINKS: usize = 4;
/// A Cuckoo filter at this share of its sub-filter limit or more raises [`NEAR_LIMIT`].
pub const CF_NEAR_LIMIT_PERCENT: usize = 90;

/// A value of a health figure.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    Integer(i64),
    Double(f64),
    /// One figure per link or sub-filter.
    Doubles(Vec<f64>),
    /// Not known or not applicable.
    Null,
}

/// The health of one filter: labelled figures, in reply order, and its alert flags.
#[derive(Clone, Debug, PartialEq)]
pub struct Health {
    pub fields: Vec<(&'static str, Value)>,
    pub alerts: u8,
}

impl Health {
    /// The figure labelled `label`.
    pub fn get(&self, label: &str) -> Option<&Value> {
        self.fields
            .iter()
            .find(|(l, _)| *l == label)
            .map(|(_, v)| v)
    }

    /// The figure labelled `label` as a float (integers converted), if it is a number.
    pub fn number(&self, label: &str) -> Option<f64> {
        match self.get(label)? {
            Value::Integer(v) => Some(*v as f64),
            Value::Double(v) => Some(*v),
            _ => None,
        }
    }
}

/// The labels every health reply uses for the same figure (one spelling each).
pub mod label {
    pub const ESTIMATED_FP: &str = "estimated_fp_rate";
    pub const TARGET_FP: &str = "target_fp_rate";
    pub const FILL: &str = "fill";
    pub const LINKS: &str = "links";
    pub const ITEMS: &str = "items";
    pub const CAPACITY: &str = "capacity";
    pub const LINK_FILL: &str = "link_fill";
    pub const LINK_FP: &str = "link_fp_rate";
    pub const SATURATED: &str = "saturated_counters";
    pub const MAX_SUB_FILTERS: &str = "max_sub_filters";
    pub const SUB_FILTER_LOAD: &str = "sub_filter_load";
    pub const NEXT_ADD_FAILS: &str = "next_add_fail_chance";
    pub const ALERTS: &str = "alerts";
}

/// Set bits of a byte array (an O(bits) recount: loading, tests).
pub fn set_bits(data: &[u8]) -> u64 {
    let mut words = data.chunks_exact(8);
    let mut n: u64 = words
        .by_ref()
        .map(|w| u64::from(u64::from_le_bytes(w.try_into().unwrap_or([0; 8])).count_ones()))
        .sum();
    n += words
        .remainder()
        .iter()
        .map(|b| u64::from(b.count_ones()))
        .sum::<u64>();
    n
}

/// The chance an absent item answers 1 in a chain whose links answer 1 with these rates:
/// 1 − Π(1 − rate).
pub fn compound(rates: impl IntoIterator<Item = f64>) -> f64 {
    1.0 - rates.into_iter().map(|r| 1.0 - r).product::<f64>()
}

/// A classic Bloom (or counting) link's rate from its fill: fill^k.
pub fn classic_fp(fill: f64, hashes: u32) -> f64 {
    fill.powi(hashes as i32)
}

/// A blocked link's rate from its fill (`set` of `bits` set bits, `k` bits per item in one
/// block of `block_bits`). An absent item answers 1 when its k bits in one block are set;
/// the blocks' loads vary (items fall into blocks as a Poisson process), so the rate is
/// above the whole array's fill^k. With λ items per block, a block holding j items has
/// each bit set with chance 1 − r^j (r = (1 − 1/block_bits)^k), so the fill is
/// 1 − e^(−λ(1 − r)): λ comes from the fill, and the rate is E[(1 − r^J)^k] over
/// J ~ Poisson(λ) = Σ_i C(k, i) (−1)^i e^(−λ(1 − r^i)) — k + 1 terms, exact enough while
/// C(k, k/2) stays small; past [`CLOSED_FORM_HASHES`], the Poisson sum itself.
pub fn blocked_fp(set: u64, bits: u64, hashes: u32, block_bits: u64) -> f64 {
    if bits == 0 || set == 0 {
        return 0.0;
    }
    if set >= bits {
        return 1.0;
    }
    let fill = set as f64 / bits as f64;
    let r = (1.0 - 1.0 / block_bits as f64).powi(hashes as i32);
    let lambda = -(1.0 - fill).ln() / (1.0 - r);
    let rate = if hashes <= CLOSED_FORM_HASHES {
        let mut sum = 0.0;
        let mut binomial = 1.0;
        let mut r_i = 1.0;
        for i in 0..=hashes {
            if i > 0 {
                binomial *= f64::from(hashes - i + 1) / f64::from(i);
                r_i *= r;
            }
            let term = binomial * (-lambda * (1.0 - r_i)).exp();
            sum += if i % 2 == 0 { term } else { -term };
        }
        sum
    } else {
        poisson_rate(lambda, r, hashes)
    };
    rate.clamp(0.0, 1.0)
}

/// Up to this many hashes [`blocked_fp`] uses its closed form (C(16, 8) = 12870: the
/// alternating sum loses ~1e-12 of a rate ~1e-5, well within the estimate's own error).
pub const CLOSED_FORM_HASHES: u32 = 16;

/// E[(1 − r^J)^k] over J ~ Poisson(λ), summed over the j that carry the mass.
fn poisson_rate(lambda: f64, r: f64, hashes: u32) -> f64 {
    let spread = 12.0 * lambda.sqrt() + 30.0;
    let first = (lambda - spread).max(0.0).floor() as u64;
    let last = (lambda + spread).ceil() as u64;
    let mut sum = 0.0;
    for j in first..=last {
        let jf = j as f64;
        // ln P(J = j) = j ln λ − λ − ln j!
        let log_p = jf * lambda.ln() - lambda - ln_factorial(j);
        sum += log_p.exp() * (1.0 - r.powf(jf)).powi(hashes as i32);
    }
    sum
}

fn ln_factorial(n: u64) -> f64 {
    if n < 2 {
        return 0.0;
    }
    // Stirling's series: exact to ~1e-10 from n = 2 on.
    let x = n as f64;
    x * x.ln() - x + 0.5 * (2.0 * std::f64::consts::PI * x).ln() + 1.0 / (12.0 * x)
        - 1.0 / (360.0 * x * x * x)
}

/// The reservation to rebuild a filter holding `items` with: a capacity with room for
/// growth (twice the items, at least the old capacity) at the rate asked.
pub fn rebuild_capacity(items: u64, capacity: u64) -> u64 {
    items.saturating_mul(2).max(capacity).max(1)
}

/// A filter is over its rate when its estimate is more than this factor above the rate
/// asked: a filter filled exactly to its capacity estimates about its rate, a little above
/// or below by the chance of its hashes, and is not at fault.
pub const OVER_FP_FACTOR: f64 = 1.1;

/// Whether `rate` is over `target` (see [`OVER_FP_FACTOR`]).
pub fn over(rate: f64, target: f64) -> bool {
    rate > target * OVER_FP_FACTOR
}

/// One link of a Bloom-style chain as health reads it: its set bits (non-zero counters)
/// of all of them, its hash count and layout.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LinkFill {
    pub set: u64,
    pub bits: u64,
    pub hashes: u32,
    /// The block size of a blocked link, in bits.
    pub block_bits: Option<u64>,
}

impl LinkFill {
    pub fn fill(&self) -> f64 {
        if self.bits == 0 {
            0.0
        } else {
            self.set as f64 / self.bits as f64
        }
    }

    /// The rate this fill gives an absent item.
    pub fn fp(&self) -> f64 {
        match self.block_bits {
            Some(block) => blocked_fp(self.set, self.bits, self.hashes, block),
            None => classic_fp(self.fill(), self.hashes),
        }
    }
}

/// What a Bloom-style chain (BF, CBF) is asked and holds.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ChainFigures {
    pub items: u64,
    /// The capacity it was reserved for.
    pub capacity: u64,
    /// The rate it was reserved for.
    pub target: f64,
    /// Saturated counters (counting chains).
    pub saturated: Option<u64>,
}

/// A chain's alert flags, in O(links) without allocating (every write computes them).
pub fn chain_alerts(
    figures: ChainFigures,
    mut links: impl ExactSizeIterator<Item = LinkFill> + Clone,
) -> u8 {
    let count = links.len();
    let over_fp = match (count, links.clone().next()) {
        // A single blocked link (the usual BLOCKED filter): its rate grows with its set
        // bits, so it is over exactly from a threshold of set bits, found once per shape
        // (the rate costs k + 1 exponentials; a write would pay it twice).
        (
            1,
            Some(
                link @ LinkFill {
                    block_bits: Some(block),
                    ..
                },
            ),
        ) => link.set >= blocked_threshold(link.bits, link.hashes, block, figures.target),
        _ => over(compound(links.by_ref().map(|l| l.fp())), figures.target),
    };
    let mut alerts = 0;
    if over_fp {
        alerts |= OVER_FP;
    }
    if figures.items > figures.capacity {
        alerts |= OVER_CAPACITY;
    }
    if count >= LONG_CHAIN_LINKS {
        alerts |= LONG_CHAIN;
    }
    if figures.saturated.is_some_and(|s| s > 0) {
        alerts |= SATURATED;
    }
    alerts
}

/// The fewest set bits at which a blocked link of `bits` bits and `hashes` hashes is
/// [`over`] `target` (`bits + 1`: never). A bisection over [`blocked_fp`], which grows
/// with the set bits; remembered per shape (a few hundred shapes at most in practice; the
/// memo is cleared past 4096).
pub fn blocked_threshold(bits: u64, hashes: u32, block_bits: u64, target: f64) -> u64 {
    use std::cell::RefCell;
    use std::collections::HashMap;
    type Memo = HashMap<(u64, u32, u64, u64), u64>;
    type Shape = (u64, u32, u64, u64);
    thread_local! {
        static MEMO: RefCell<Memo> = RefCell::new(HashMap::new());
        /// The last shape asked and its threshold: a write asks twice for the same.
        static LAST: std::cell::Cell<Option<(Shape, u64)>> = const { std::cell::Cell::new(None) };
    }
    let shape = (bits, hashes, block_bits, target.to_bits());
    if let Some((last, found)) = LAST.with(std::cell::Cell::get) {
        if last == shape {
            return found;
        }
    }
    if let Some(found) = MEMO.with(|m| m.borrow().get(&shape).copied()) {
        LAST.with(|l| l.set(Some((shape, found))));
        return found;
    }
    let is_over = |set: u64| over(blocked_fp(set, bits, hashes, block_bits), target);
    let threshold = if !is_over(bits) {
        bits + 1
    } else {
        // is_over(hi) holds, is_over(lo) does not (lo = 0: a rate of 0).
        let (mut lo, mut hi) = (0u64, bits);
        while hi - lo > 1 {
            let mid = lo + (hi - lo) / 2;
            if is_over(mid) {
                hi = mid;
            } else {
                lo = mid;
            }
        }
        hi
    };
    MEMO.with(|m| {
        let mut m = m.borrow_mut();
        if m.len() >= 4096 {
            m.clear();
        }
        m.insert(shape, threshold);
    });
    LAST.with(|l| l.set(Some((shape, threshold))));
    threshold
}

/// A chain's health reply.
pub fn chain_health(figures: ChainFigures, links: &[LinkFill]) -> Health {
    let rates: Vec<f64> = links.iter().map(LinkFill::fp).collect();
    let (set, bits) = links
        .iter()
        .fold((0u64, 0u64), |(s, b), l| (s + l.set, b + l.bits));
    let mut fields = vec![
        (
            label::ESTIMATED_FP,
            Value::Double(compound(rates.iter().copied())),
        ),
        (label::TARGET_FP, Value::Double(figures.target)),
        (label::ITEMS, Value::Integer(figures.items as i64)),
        (label::CAPACITY, Value::Integer(figures.capacity as i64)),
        (
            label::FILL,
            Value::Double(if bits == 0 {
                0.0
            } else {
                set as f64 / bits as f64
            }),
        ),
        (label::LINKS, Value::Integer(links.len() as i64)),
        (
            label::LINK_FILL,
            Value::Doubles(links.iter().map(LinkFill::fill).collect()),
        ),
        (label::LINK_FP, Value::Doubles(rates)),
    ];
    if let Some(saturated) = figures.saturated {
        fields.push((label::SATURATED, Value::Integer(saturated as i64)));
    }
    let alerts = chain_alerts(figures, links.iter().copied());
    fields.push((label::ALERTS, Value::Integer(i64::from(alerts))));
    Health { fields, alerts }
}

/// The names of the alert flags set in `alerts`, in [`ALERTS`] order.
pub fn alert_names(alerts: u8) -> Vec<&'static str> {
    ALERTS
        .iter()
        .filter(|(flag, _)| alerts & flag != 0)
        .map(|(_, name)| *name)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn set_bits_counts_every_byte() {
        assert_eq!(set_bits(&[]), 0);
        assert_eq!(set_bits(&[0xff; 9]), 72);
        assert_eq!(
            set_bits(&[1, 2, 3, 0, 0, 0, 0, 0x80, 7, 1]),
            1 + 1 + 2 + 1 + 3 + 1
        );
    }

    #[test]
    fn the_blocked_threshold_is_where_the_rate_crosses() {
        let (bits, k) = (512 * 1000, 7);
        let t = blocked_threshold(bits, k, 512, 0.01);
        assert!(over(blocked_fp(t, bits, k, 512), 0.01));
        assert!(!over(blocked_fp(t - 1, bits, k, 512), 0.01));
        assert_eq!(blocked_threshold(bits, k, 512, 0.01), t);
        // A rate of 1 is never exceeded.
        assert_eq!(blocked_threshold(bits, k, 512, 1.0), bits + 1);
    }

    #[test]
    fn compound_of_links() {
        assert_eq!(compound([]), 0.0);
        assert!((compound([0.01, 0.01]) - 0.0199).abs() < 1e-12);
    }

    #[test]
    fn blocked_rate_is_above_the_classic_rate_of_the_same_fill() {
        // 10 bits per item, k = 7, one item in ~51 per block: measured blocked rates are
        // ~1.3x to ~2x the classic fill^k at this load.
        let bits = 512 * 10_000;
        let n = bits / 10;
        let k = 7;
        let fill = 1.0 - (-(k as f64) * n as f64 / bits as f64).exp();
        let set = (fill * bits as f64) as u64;
        let classic = classic_fp(fill, k);
        let blocked = blocked_fp(set, bits, k, 512);
        assert!(
            blocked > classic * 1.1 && blocked < classic * 3.0,
            "{blocked} {classic}"
        );
        assert_eq!(blocked_fp(0, bits, k, 512), 0.0);
        // The closed form and the Poisson sum agree.
        for k in [1, 4, 7, 12, 16] {
            let r = (1.0 - 1.0 / 512.0f64).powi(k as i32);
            let lambda = -(1.0 - fill).ln() / (1.0 - r);
            let closed = blocked_fp(set, bits, k, 512);
            let summed = poisson_rate(lambda, r, k);
            assert!(
                (closed - summed).abs() < 1e-5 * summed,
                "{k}: {closed} {summed}"
            );
        }
        assert_eq!(blocked_fp(bits, bits, k, 512), 1.0);
    }
}
