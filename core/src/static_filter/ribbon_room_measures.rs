//! Why encoding 3 bumps keys rather than using a homogeneous ribbon (Dillinger & Walzer
//! 2021): `cargo test --release -p redbloom-core --lib measure_row_space -- --ignored
//! --nocapture` prints, against the room, the keys whose equations are redundant (in a
//! standard ribbon nearly all of them are inconsistent: they are what encoding 3 bumps)
//! and the share of absent keys whose row lies in the present keys' row space (which a
//! homogeneous ribbon finds always: its false-positive excess).

use super::ribbon::{equation, Ribbon, COEFF_BITS};
use super::ribbon_tests::keys_of;
use super::*;

fn echelon(hashes: &[u64], layout: &Ribbon) -> Vec<u128> {
    let mut coeffs = vec![0u128; layout.slots() as usize];
    let starts = layout.starts();
    for &h in hashes {
        let e = equation(h, starts);
        let (mut at, mut c) = (e.start as usize, e.coeff);
        loop {
            let existing = coeffs[at];
            if existing == 0 {
                coeffs[at] = c;
                break;
            }
            c ^= existing;
            if c == 0 {
                break;
            }
            let shift = c.trailing_zeros();
            at += shift as usize;
            c >>= shift;
        }
    }
    coeffs
}

fn in_span(coeffs: &[u128], layout: &Ribbon, h: u64) -> bool {
    let e = equation(h, layout.starts());
    let (mut at, mut c) = (e.start as usize, e.coeff);
    loop {
        let existing = coeffs[at];
        if existing == 0 {
            return false;
        }
        c ^= existing;
        if c == 0 {
            return true;
        }
        let shift = c.trailing_zeros();
        at += shift as usize;
        c >>= shift;
    }
}

#[test]
#[ignore = "measurement: redundant rows and the row-space share against the room"]
fn measure_row_space() {
    for n in [1_000_000u64, 10_000_000] {
        let keys = keys_of("item:", n);
        let mut hashes: Vec<u64> = keys.iter().map(|&k| mix(k, 0)).collect();
        hashes.sort_unstable();
        for room in [0.0, 0.0025, 0.005, 0.0075, 0.01, 0.015, 0.02, 0.03] {
            let wanted = n as f64 * (1.0f64 + room) + 8.0;
            let blocks = (wanted / COEFF_BITS as f64).ceil() as u64;
            let layout = Ribbon {
                blocks,
                lower_blocks: 0,
            };
            let coeffs = echelon(&hashes, &layout);
            let pivots = coeffs.iter().filter(|&&c| c != 0).count();
            let absent = 2_000_000u64;
            let hits = (0..absent)
                .filter(|&i| in_span(&coeffs, &layout, mix(i, 0x5eed_1234)))
                .count();
            eprintln!(
                "n {n} room {:.2} %: redundant {} of {n}, P(in row space) {:.3e} ({hits} of {absent})",
                room * 100.0,
                n as usize - pivots,
                hits as f64 / absent as f64
            );
        }
    }
}
