//! The windowed solve against the one-pass solve it replaces (kept here as the oracle):
//! the same bytes for every size, width and window, a seed retry, systems chosen by the
//! caller; the in-place rehash.

use super::banding::{self, solve_in, Fingerprints, System, WINDOW_SLOTS};
use super::ribbon::{equation, mask, parity, Equation, COEFF_BITS, MAX_COLUMNS};
use super::ribbon_tests::keys_of;
use super::*;
use crate::memory::OutOfMemory;
use proptest::prelude::*;

/// The one-pass solve (the build before the windows): every slot's row in memory, then
/// back substitution from the last slot; with `bumped`, an inconsistent key's hash is
/// listed there and the key left out.
pub(super) fn solve_one_pass(
    hashes: &[u64],
    layout: &Ribbon,
    r: u32,
    data_len: u64,
    mut bumped: Option<&mut Vec<u64>>,
) -> Result<Option<Vec<u8>>, BuildError> {
    let slots = layout.slots();
    let mut coeffs: Vec<u128> = zeroed(slots)?;
    let mut rhs: Vec<u32> = zeroed(slots)?;
    let starts = layout.starts();
    for &h in hashes {
        let e = equation(h, starts);
        let columns = layout.columns(e.start / COEFF_BITS, r);
        let (mut at, mut c, mut f) = (e.start as usize, e.coeff, e.fingerprint & mask(columns));
        loop {
            let existing = coeffs[at];
            if existing == 0 {
                coeffs[at] = c;
                rhs[at] = f;
                break;
            }
            c ^= existing;
            f ^= rhs[at];
            if c == 0 {
                if f != 0 {
                    match bumped.as_deref_mut() {
                        Some(list) => list.push(h),
                        None => return Ok(None),
                    }
                }
                break;
            }
            let shift = c.trailing_zeros();
            at += shift as usize;
            c >>= shift;
        }
    }
    let mut data = crate::zeroed_bytes(data_len)?;
    let mut after = [0u128; MAX_COLUMNS as usize + 1];
    for b in (0..layout.blocks).rev() {
        let columns = layout.columns(b, r) as usize;
        let mut words = [0u128; MAX_COLUMNS as usize + 1];
        for i in (0..COEFF_BITS as usize).rev() {
            let slot = b as usize * COEFF_BITS as usize + i;
            let (c, f) = (coeffs[slot] >> 1, rhs[slot]);
            let pivot = coeffs[slot] != 0;
            for j in 0..columns {
                let bit = if pivot {
                    ((f >> j) & 1) ^ parity(c & after[j])
                } else {
                    0
                };
                after[j] = (after[j] << 1) | u128::from(bit);
                words[j] |= u128::from(bit) << i;
            }
        }
        let base = layout.base(b, r);
        for (j, w) in words[..columns].iter().enumerate() {
            let at = ((base + j as u64) * 16) as usize;
            data[at..at + 16].copy_from_slice(&w.to_le_bytes());
        }
    }
    Ok(Some(data))
}

fn zeroed<T: bytemuck::Zeroable>(len: u64) -> Result<Vec<T>, OutOfMemory> {
    let len = usize::try_from(len).map_err(|_| OutOfMemory)?;
    bytemuck::allocation::try_zeroed_vec(len).map_err(|()| OutOfMemory)
}

/// The build before the windows: the keys hashed into a copy, sorted, solved in one pass
/// (with `bumping`, encoding 3's: little room, the inconsistent keys listed).
pub(super) fn build_one_pass(keys: &[u64], error: f64, bumping: bool) -> Option<StaticFilter> {
    let bits = build::ribbon_bits_for(error)?;
    let mut hashes = vec![0u64; keys.len()];
    for attempt in 0..MAX_ATTEMPTS {
        let seed = FIRST_SEED + attempt;
        hashes.resize(keys.len(), 0);
        for (h, &k) in hashes.iter_mut().zip(keys) {
            *h = mix(k, seed);
        }
        hashes.sort_unstable();
        hashes.dedup();
        let items = hashes.len() as u64;
        if bumping {
            let layout = Bumped::ribbon_for(items, bits, error);
            let data_len = layout.data_len(bits)?;
            let mut list = Vec::new();
            let mut data =
                solve_one_pass(&hashes, &layout, bits, data_len, Some(&mut list)).ok()??;
            if list.len() as u64 * 64 > items.max(64) && attempt + 1 < MAX_ATTEMPTS {
                continue;
            }
            let b = Bumped {
                ribbon: layout,
                bumped: list.len() as u64,
            };
            let mut rest = vec![0; (b.data_len(bits)? - data_len) as usize];
            b.write_rest(&list, &mut rest);
            data.extend_from_slice(&rest);
            return Some(build::finish(
                seed,
                items,
                bits,
                error,
                Layout::Bumped(b),
                data,
            ));
        }
        let layout = Ribbon::for_items(items, attempt, bits, error);
        let data_len = layout.data_len(bits)?;
        if let Some(data) = solve_one_pass(&hashes, &layout, bits, data_len, None).ok()? {
            let layout = Layout::Ribbon(layout);
            return Some(build::finish(seed, items, bits, error, layout, data));
        }
    }
    None
}

/// Sorted distinct hashes of `n` keys.
fn hashes_of(prefix: &str, n: u64) -> Vec<u64> {
    let mut h: Vec<u64> = keys_of(prefix, n).iter().map(|&k| mix(k, 7)).collect();
    h.sort_unstable();
    h.dedup();
    h
}

/// The windowed solve in windows of `window` slots answers as the one-pass solve: whether
/// the system is consistent, and its solution.
fn same_as_one_pass(hashes: &[u64], layout: &Ribbon, r: u32, window: u64) -> bool {
    let len = layout.data_len(r).unwrap();
    let expected = solve_one_pass(hashes, layout, r, len, None).unwrap();
    let data = crate::zeroed_bytes(len).unwrap();
    let got = solve_in(hashes, layout, r, data, &Fingerprints, window, None).unwrap();
    assert!(
        got == expected,
        "{} keys, {layout:?}, r {r}, window {window}: {}",
        hashes.len(),
        if expected.is_none() {
            "inconsistent"
        } else {
            "solved"
        },
    );
    expected.is_some()
}

#[test]
fn unmix_undoes_mix() {
    for k in [
        0u64,
        1,
        2,
        u64::MAX,
        u64::MAX - 1,
        1 << 63,
        0x1234_5678_9abc_def0,
    ] {
        for seed in [0u64, 1, 63, u64::MAX] {
            assert_eq!(unmix(mix(k, seed), seed), k, "{k} {seed}");
        }
    }
}

proptest! {
    #[test]
    fn unmix_undoes_mix_for_any_key(k in any::<u64>(), seed in any::<u64>()) {
        prop_assert_eq!(unmix(mix(k, seed), seed), k);
        prop_assert_eq!(mix(unmix(k, seed), seed), k);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]
    #[test]
    fn random_systems_band_as_one_pass(
        n in 0u64..3000,
        r in 1u32..=32,
        blocks in 1u64..6,
        room in 0.97f64..1.2,
        set in any::<u16>(),
    ) {
        // Any load, consistent or not, and any window of one to five blocks.
        let hashes = hashes_of(&format!("p{set}:"), n);
        let total = ((n as f64 * room) / COEFF_BITS as f64).ceil().max(1.0) as u64;
        let error = (-(f64::from(r) + 0.5)).exp2().min(0.49);
        let layout = Ribbon { blocks: total, lower_blocks: Ribbon::lower_blocks_for(total, r, error) };
        same_as_one_pass(&hashes, &layout, r, blocks * COEFF_BITS);
    }
}

#[test]
fn small_windows_band_as_one_pass_at_every_width() {
    // Windows of one to five blocks: equations cross several windows on their way up.
    for n in [0u64, 1, 2, 3, 40, 127, 128, 129, 1000, 5000] {
        let hashes = hashes_of("w", n);
        for r in [1u32, 2, 6, 7, 13, 31, 32] {
            let error = (-(f64::from(r) + 0.5)).exp2().min(0.49);
            let layout = Ribbon::for_items(hashes.len() as u64, 0, r, error);
            for window in [128u64, 256, 384, 640, WINDOW_SLOTS] {
                assert!(same_as_one_pass(&hashes, &layout, r, window));
            }
        }
    }
}

#[test]
fn inconsistent_systems_are_found_as_in_one_pass() {
    // Too few slots: the system is inconsistent; both solves say so, at every window.
    let hashes = hashes_of("full", 3000);
    for blocks in [20u64, 22, 23] {
        let layout = Ribbon {
            blocks,
            lower_blocks: 7,
        };
        for window in [128u64, 256, 1024] {
            assert!(!same_as_one_pass(&hashes, &layout, 6, window));
        }
    }
}

#[test]
fn sizes_around_window_multiples_band_as_one_pass() {
    // Slots just under, at and just over one and two windows; keys filling 96 % of them.
    let window = WINDOW_SLOTS / COEFF_BITS;
    let mut solved_sizes = 0;
    for blocks in [
        window - 1,
        window,
        window + 1,
        2 * window - 1,
        2 * window,
        2 * window + 1,
    ] {
        let n = (blocks * COEFF_BITS) * 96 / 100;
        let hashes = hashes_of(&format!("b{blocks}:"), n);
        let layout = Ribbon {
            blocks,
            lower_blocks: blocks / 3,
        };
        let solved = same_as_one_pass(&hashes, &layout, 6, WINDOW_SLOTS);
        assert_eq!(
            same_as_one_pass(&hashes, &layout, 6, 4 * COEFF_BITS),
            solved
        );
        solved_sizes += usize::from(solved);
    }
    assert_eq!(solved_sizes, 6);
}

#[test]
fn builds_are_those_of_the_one_pass_build() {
    for n in [0u64, 1, 2, 3, 4, 100, 5000, 70_000, 1_000_000] {
        for error in [0.49, 0.01, 0.003, 1e-4, (-32f64).exp2()] {
            if n == 1_000_000 && error != 0.01 {
                continue;
            }
            let keys = keys_of("k", n);
            for (encoding, bumping) in [(Encoding::StandardRibbon, false), (Encoding::Ribbon, true)]
            {
                let built = build_with(keys.clone(), error, u64::MAX, encoding).unwrap();
                assert!(
                    built == build_one_pass(&keys, error, bumping).unwrap(),
                    "{n} {error} {encoding:?}"
                );
            }
        }
    }
    // Duplicates, and the first seed failing.
    let mut keys = keys_of("d", 3);
    keys.extend_from_within(..);
    let standard = |keys: &Vec<u64>| {
        build_with(keys.clone(), 0.01, u64::MAX, Encoding::StandardRibbon).unwrap()
    };
    assert!(standard(&keys) == build_one_pass(&keys, 0.01, false).unwrap());
    assert!(
        build(keys.clone(), 0.01, u64::MAX).unwrap() == build_one_pass(&keys, 0.01, true).unwrap()
    );
    let keys = keys_of("s28:", 50_000);
    let retried = standard(&keys);
    assert_eq!(retried.seed(), FIRST_SEED + 1);
    assert!(retried == build_one_pass(&keys, 0.01, false).unwrap());
}

/// A caller's system: right-hand sides 0, free slots from a pattern.
struct Homogeneous;

impl System for Homogeneous {
    fn rhs(&self, _h: u64, _e: &Equation, _columns: u32) -> u32 {
        0
    }

    fn free(&self, slot: u64, columns: u32) -> u32 {
        (mix(slot, 99) as u32) & mask(columns)
    }
}

/// `c · S[start ..]`, `columns` wide, read from the solution.
fn left_side(layout: &Ribbon, r: u32, data: &[u8], e: &Equation, columns: u32) -> u32 {
    let mut sum = 0u32;
    for i in 0..COEFF_BITS {
        if (e.coeff >> i) & 1 == 0 {
            continue;
        }
        let slot = e.start + i;
        let (b, bit) = (slot / COEFF_BITS, slot % COEFF_BITS);
        for j in 0..u64::from(columns) {
            let at = ((layout.base(b, r) + j) * 16) as usize;
            let word = u128::from_le_bytes(data[at..at + 16].try_into().unwrap());
            sum ^= (((word >> bit) & 1) as u32) << j;
        }
    }
    sum
}

#[test]
fn the_caller_chooses_right_hand_sides_and_free_values() {
    let hashes = hashes_of("h", 3000);
    let layout = Ribbon::for_items(hashes.len() as u64, 0, 6, 0.01);
    let len = layout.data_len(6).unwrap();
    let zeroed = || crate::zeroed_bytes(len).unwrap();
    let data = solve_in(&hashes, &layout, 6, zeroed(), &Homogeneous, 256, None)
        .unwrap()
        .expect("a homogeneous system is consistent");
    assert!(data.iter().any(|&b| b != 0), "free slots hold the pattern");
    for &h in &hashes {
        let e = equation(h, layout.starts());
        let columns = layout.columns(e.start / COEFF_BITS, 6);
        assert_eq!(left_side(&layout, 6, &data, &e, columns), 0);
    }
    // The same windows for any window size.
    let whole = banding::solve(&hashes, &layout, 6, zeroed(), &Homogeneous, None).unwrap();
    assert_eq!(whole, Some(data));
}

#[test]
fn working_memory_is_a_window_and_its_crossings() {
    // A window's rows (20 bytes a slot), and under a quarter byte an item in all (encoding
    // 3: under half a byte, its list of bumped keys counted at the most a first seed
    // accepts, one key in 64, in a vector that doubles).
    let window = WINDOW_SLOTS * 20;
    // 1000 items: at most 11 blocks (the last attempt's), one window, one boundary.
    assert_eq!(
        working_bytes(1000, Encoding::StandardRibbon),
        11 * 128 * 20 + 2064
    );
    // Encoding 3: fewer slots (8 blocks), and its list of bumped keys (16 × 16 bytes).
    assert_eq!(
        working_bytes(1000, Encoding::Ribbon),
        8 * 128 * 20 + 2064 + 16 * 16
    );
    let ten_million = working_bytes(10_000_000, Encoding::StandardRibbon);
    assert!(
        ten_million > window && ten_million < 10_000_000 / 4,
        "{ten_million}"
    );
    let ten_million = working_bytes(10_000_000, Encoding::Ribbon);
    assert!(
        ten_million > window && ten_million < 10_000_000 / 2,
        "{ten_million}"
    );
    assert_eq!(working_bytes(1000, Encoding::Fuse), 37_000);
}

/// Encoding 3's little room: in windows of any size, the windowed solve bumps the keys the
/// one-pass solve bumps (an equation carried across windows included) and solves alike.
#[test]
fn windows_bump_the_keys_one_pass_bumps() {
    for (prefix, r) in [("bump", 7u32), ("bumped", 14)] {
        let hashes = hashes_of(prefix, 200_000);
        let n = hashes.len();
        let layout = Bumped::ribbon_for(hashes.len() as u64, r, 0.01);
        let len = layout.data_len(r).unwrap();
        let mut expected = Vec::new();
        let one_pass = solve_one_pass(&hashes, &layout, r, len, Some(&mut expected)).unwrap();
        assert!(!expected.is_empty(), "{n}: some keys are bumped");
        for window in [256, 1024, WINDOW_SLOTS] {
            let mut got = Vec::new();
            let data = crate::zeroed_bytes(len).unwrap();
            let windowed = solve_in(
                &hashes,
                &layout,
                r,
                data,
                &Fingerprints,
                window,
                Some(&mut got),
            )
            .unwrap();
            assert!(windowed == one_pass, "{n} keys, window {window}");
            assert_eq!(got, expected, "{n} keys, window {window}");
        }
    }
}
