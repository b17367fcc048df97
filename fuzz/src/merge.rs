//! The `merge` target: BF, CBF and CF merges (union and intersection) of filters of random
//! shapes — the same shape, or one operand of another — filled with random items. A merge
//! the core accepts has no false negative (an item any operand holds, the union holds; an
//! item all hold, the intersection holds), counts within what its operands allow, and
//! survives SCANDUMP → LOADCHUNK and RDB save → load unchanged; a refusal is the documented
//! one (another shape, INTERSECT of several links, no room, the ceiling).

use crate::{cbf_round_trip, cf_round_trip, Input, MAX_BYTES};
use redbloom_core::bloom::chain::Chain;
use redbloom_core::counting::CountingChain;
use redbloom_core::cuckoo::{CuckooFilter, CuckooHash, CuckooParams};
use redbloom_core::merge::{MergeError, MergeOp};

/// Most operands of one merge, and items per operand.
const MAX_OPERANDS: usize = 4;
const MAX_ITEMS: usize = 64;

/// A Bloom-family shape from four input bytes.
#[derive(Clone, Copy, PartialEq)]
struct Shape {
    capacity: u64,
    error: f64,
    growth: u32,
    scaling: bool,
    blocked: bool,
}

impl Shape {
    fn from(input: &mut Input) -> Shape {
        let b = [input.u8(), input.u8(), input.u8()].map(|b| b.unwrap_or(0));
        Shape {
            capacity: u64::from(b[0] % 32) + 1,
            error: [0.1, 0.01, 0.001, 0.3][usize::from(b[1] % 4)],
            growth: u32::from(b[2] % 4),
            scaling: b[1] & 0x10 == 0,
            blocked: b[1] & 0x20 != 0,
        }
    }
}

/// Each operand's items (short, so operands share some), and which operand (if any) gets
/// `other` instead of the common shape.
fn operand_items(input: &mut Input) -> (Vec<Vec<Vec<u8>>>, Option<usize>) {
    let n = usize::from(input.u8().unwrap_or(0)) % MAX_OPERANDS + 1;
    let odd = input.u8().unwrap_or(0);
    let odd = (odd & 0x80 != 0).then_some(usize::from(odd) % n);
    let sets = (0..n)
        .map(|_| {
            let count = usize::from(input.u8().unwrap_or(0)) % MAX_ITEMS;
            (0..count).map(|_| input.item()).collect()
        })
        .collect();
    (sets, odd)
}

fn op_of(input: &mut Input) -> MergeOp {
    if input.u8().unwrap_or(0) & 1 == 0 {
        MergeOp::Union
    } else {
        MergeOp::Intersect
    }
}

/// Checks a refusal: the documented reason for these operands.
fn check_refusal(e: MergeError, differs: bool, multi_link: bool) {
    match e {
        MergeError::ShapeDiffers(_) => assert!(differs, "refused a merge of one shape"),
        MergeError::MultiLink(_) => assert!(multi_link, "INTERSECT refused single links"),
        MergeError::TooLarge => {}
        other => panic!("unexpected refusal {other:?}"),
    }
}

fn bloom(input: &mut Input) {
    let (shape, other) = (Shape::from(input), Shape::from(input));
    let op = op_of(input);
    let (sets, odd) = operand_items(input);
    let mut chains = Vec::new();
    for (i, set) in sets.iter().enumerate() {
        let s = if odd == Some(i) { other } else { shape };
        let Ok(mut chain) = Chain::with_layout(
            s.capacity, s.error, s.growth, s.scaling, s.blocked, MAX_BYTES,
        ) else {
            return;
        };
        for item in set {
            chain.add(chain.hash(item), MAX_BYTES);
        }
        chains.push(chain);
    }
    let refs: Vec<&Chain> = chains.iter().collect();
    let differs = refs.iter().any(|c| !refs[0].same_shape(c));
    let multi = refs.iter().any(|c| c.links().len() > 1);
    let budget = MAX_BYTES * 4;
    let merged = match Chain::merge(&refs, op, budget) {
        Ok(merged) => merged,
        Err(e) => return check_refusal(e, differs, op == MergeOp::Intersect && multi),
    };
    assert!(!differs, "merged filters of different shapes");
    let probes: Vec<&Vec<u8>> = sets.iter().flatten().collect();
    for item in probes {
        let held: Vec<bool> = chains.iter().map(|c| c.contains(c.hash(item))).collect();
        let want = match op {
            MergeOp::Union => held.iter().any(|&h| h),
            MergeOp::Intersect => held.iter().all(|&h| h),
        };
        if want {
            assert!(
                merged.contains(merged.hash(item)),
                "false negative {item:?}"
            );
        }
    }
    let counts = chains.iter().map(Chain::items);
    match op {
        MergeOp::Union => {
            assert!(merged.items() >= counts.clone().max().unwrap_or(0));
            assert!(merged.items() <= counts.sum::<u64>());
            let longest = chains.iter().map(|c| c.links().len()).max();
            assert_eq!(Some(merged.links().len()), longest);
        }
        MergeOp::Intersect => assert!(merged.items() <= counts.min().unwrap_or(0)),
    }
    crate::bf_round_trip(&merged);
}

fn counting(input: &mut Input) {
    let (shape, other) = (Shape::from(input), Shape::from(input));
    let op = op_of(input);
    let (sets, odd) = operand_items(input);
    let mut chains = Vec::new();
    for (i, set) in sets.iter().enumerate() {
        let s = if odd == Some(i) { other } else { shape };
        let Ok(mut chain) = CountingChain::new(s.capacity, s.error, s.growth, s.scaling, MAX_BYTES)
        else {
            return;
        };
        for item in set {
            chain.add(chain.hash(item), MAX_BYTES);
        }
        chains.push(chain);
    }
    let refs: Vec<&CountingChain> = chains.iter().collect();
    let differs = refs.iter().any(|c| !refs[0].same_shape(c));
    let multi = refs.iter().any(|c| c.links().len() > 1);
    let merged = match CountingChain::merge(&refs, op, MAX_BYTES * 4) {
        Ok(merged) => merged,
        Err(e) => return check_refusal(e, differs, op == MergeOp::Intersect && multi),
    };
    assert!(!differs, "merged filters of different shapes");
    assert!(merged.is_valid(), "a merge made an invalid filter");
    let saturated = merged.has_saturated_counter();
    for item in sets.iter().flatten() {
        let pair = merged.hash(item);
        let counts: Vec<u64> = chains.iter().map(|c| c.count(pair)).collect();
        match op {
            MergeOp::Union => {
                if !saturated {
                    assert!(merged.count(pair) >= counts.iter().sum::<u64>());
                }
                assert!(merged.contains(pair) || counts.iter().all(|&c| c == 0));
            }
            MergeOp::Intersect => {
                let least = counts.iter().copied().min().unwrap_or(0);
                assert!(merged.count(pair) >= least, "intersection lost copies");
            }
        }
    }
    cbf_round_trip(&merged);
}

fn cuckoo(input: &mut Input) {
    let b = [input.u8(), input.u8(), input.u8()].map(|b| b.unwrap_or(0));
    let params = |odd: bool| CuckooParams {
        capacity: u64::from(b[0] % 64) + 8 + if odd { 64 } else { 0 },
        bucket_size: u16::from(b[1] % 4) + 1,
        max_iterations: u16::from(b[2] % 30) + 1,
        expansion: u16::from(b[1] >> 4) % 3,
    };
    let (sets, odd) = operand_items(input);
    let mut filters = Vec::new();
    let mut inserted: Vec<Vec<&Vec<u8>>> = Vec::new();
    for (i, set) in sets.iter().enumerate() {
        let Ok(mut filter) = CuckooFilter::new(params(odd == Some(i)), MAX_BYTES) else {
            return;
        };
        let mut held = Vec::new();
        for item in set {
            if filter.insert(&CuckooHash::new(item), MAX_BYTES).is_ok() {
                held.push(item);
            }
        }
        filters.push(filter);
        inserted.push(held);
    }
    let refs: Vec<&CuckooFilter> = filters.iter().collect();
    let differs = refs.iter().any(|f| !refs[0].same_shape(f));
    let max_filters = usize::from(input.u8().unwrap_or(0) % 8) + 1;
    let merged = match CuckooFilter::merge(&refs, MAX_BYTES * 4, max_filters) {
        Ok(merged) => merged,
        Err(MergeError::ShapeDiffers(_)) => return assert!(differs),
        Err(MergeError::NoSpace | MergeError::MaxFilters | MergeError::TooLarge) => {
            return assert!(!differs)
        }
        Err(e) => panic!("unexpected refusal {e:?}"),
    };
    assert!(!differs, "merged filters of different shapes");
    let sum = filters
        .iter()
        .fold(0u64, |s, f| s.wrapping_add(f.num_items()));
    assert_eq!(merged.num_items(), sum);
    for item in inserted.iter().flatten() {
        assert!(
            merged.contains(&CuckooHash::new(item)),
            "false negative {item:?}"
        );
    }
    cf_round_trip(&merged);
}

/// Input: [family byte][shape bytes][operation][operand count, odd operand, items...].
pub fn merge(data: &[u8]) {
    let mut input = Input::new(data);
    match input.u8().unwrap_or(0) % 3 {
        0 => bloom(&mut input),
        1 => counting(&mut input),
        _ => cuckoo(&mut input),
    }
}

#[cfg(test)]
mod tests {
    /// Pseudo-random inputs through the target (a fixed xorshift stream): a few thousand
    /// merges of every family run in `make test-fuzz` without the fuzzing toolchain.
    #[test]
    fn random_inputs_pass() {
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        for _ in 0..3_000 {
            let len = 64 + (x % 512) as usize;
            let data: Vec<u8> = (0..len)
                .map(|_| {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    (x >> 24) as u8
                })
                .collect();
            super::merge(&data);
        }
    }
}
