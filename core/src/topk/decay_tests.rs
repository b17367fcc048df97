//! The decay draw against outside facts: the generator is SplitMix64 (its published
//! outputs, from the state a new Top-K starts at), a collision decays with chance
//! `decay^count` (the first draws decide exactly as those outputs say; over many draws
//! the rate is `decay^count` within a bound too tight for `decay^(count+1)`).

use super::*;

/// SplitMix64's first outputs from state 0 (Vigna's `splitmix64.c`, seeded with 0).
const FROM_ZERO: [u64; 5] = [
    0xe220_a839_7b1d_cdaf,
    0x6e78_9e6a_a1b9_65f4,
    0x06c4_5d18_8009_454f,
    0xf88b_b8a8_724c_81ec,
    0x1b39_896a_51a8_749b,
];

/// Its first outputs from state 1234567 (Rosetta Code, "Pseudo-random numbers/Splitmix64").
const FROM_1234567: [u64; 5] = [
    6457827717110365317,
    3203168211198807973,
    9817491932198370423,
    4593380528125082431,
    16408922859458223821,
];

/// SplitMix64's gamma: what each output adds to the state.
const GAMMA: u64 = 0x9e37_79b9_7f4a_7c15;

fn topk(k: u32, width: u32, depth: u32, decay: f64) -> TopK {
    TopK::new(k, width, depth, decay, u64::MAX).unwrap()
}

/// A draw in `[0, 1)` from an output: its top 53 bits.
fn unit(output: u64) -> f64 {
    (output >> 11) as f64 / (1u64 << 53) as f64
}

#[test]
fn the_generator_is_splitmix64() {
    for (seed, outputs) in [(0, FROM_ZERO), (1234567, FROM_1234567)] {
        let mut state = seed;
        for (i, &want) in outputs.iter().enumerate() {
            assert_eq!(splitmix64(&mut state), want, "seed {seed}, output {i}");
            assert_eq!(state, seed.wrapping_add(GAMMA.wrapping_mul(i as u64 + 1)));
        }
    }
}

#[test]
fn a_new_topk_draws_splitmix64_s_outputs_from_state_0() {
    let mut t = topk(3, 8, 7, 0.9);
    assert_eq!(t.rng_state(), 0);
    for (i, &output) in FROM_ZERO.iter().enumerate() {
        assert_eq!(t.draw(), unit(output), "draw {i}");
        assert_eq!(t.rng_state(), GAMMA.wrapping_mul(i as u64 + 1));
    }
    assert_eq!(unit(FROM_ZERO[0]), 0.883_310_808_213_642_6);
    assert_eq!(unit(FROM_ZERO[1]), 0.431_527_997_048_509_97);
}

/// A Top-K of one bucket held by `x` at `count`, its generator at `state`.
fn held(decay: f64, count: u32, state: u64) -> TopK {
    let mut t = topk(1, 1, 1, decay);
    t.set_bucket(0, murmur2_32(b"x", FINGERPRINT_SEED), count);
    t.rng = state;
    t
}

#[test]
fn the_first_collisions_decide_as_the_first_outputs_say() {
    // From state 0 the first draw is 0.8833 and the second 0.4315: a bucket at count c
    // decays when the draw is below decay^c.
    let fx = murmur2_32(b"x", FINGERPRINT_SEED);
    let fy = murmur2_32(b"y", FINGERPRINT_SEED);
    for (decay, count, after) in [
        // 0.9 > 0.8833: the bucket at 1 decays to 0 and y takes it with what is left (1).
        (0.9, 1, (fy, 1)),
        // 0.81 < 0.8833: at 2 it holds.
        (0.9, 2, (fx, 2)),
        (0.95, 2, (fx, 1)),
        (0.95, 3, (fx, 3)),
        (0.5, 1, (fx, 1)),
    ] {
        let mut t = held(decay, count, 0);
        t.add(b"y", 1);
        assert_eq!(t.bucket(0), after, "decay {decay}, count {count}");
        assert_eq!(t.rng_state(), GAMMA, "one draw");
    }
    // An increment of 3 against count 3 at decay 0.95: draws 0.8833 (< 0.857? no),
    // 0.4315 (< 0.857: to 2), 0.0265 (< 0.9025: to 1). Three draws, the bucket kept.
    let mut t = held(0.95, 3, 0);
    t.add(b"y", 3);
    assert_eq!(t.bucket(0), (fx, 1));
    assert_eq!(t.rng_state(), GAMMA.wrapping_mul(3));
    // Above the table (count ≥ 256) the chance is table[255]^(count / 255) ×
    // table[count % 255]: at decay 0.9999, count 1240, 0.883374 > 0.883311: it decays;
    // at 1241, 0.883286: it holds.
    for (count, after) in [(1240, 1239), (1241, 1241)] {
        let mut t = held(0.9999, count, 0);
        t.add(b"y", 1);
        assert_eq!(t.bucket(0), (fx, after), "count {count}");
    }
}

/// How many of `trials` single-unit collisions with a bucket at `count` decay it, the
/// generator running on from `seed`.
fn decays(decay: f64, count: u32, trials: u32, seed: u64) -> u32 {
    let fx = murmur2_32(b"x", FINGERPRINT_SEED);
    let mut t = held(decay, count, seed);
    let mut decayed = 0;
    for _ in 0..trials {
        t.set_bucket(0, fx, count);
        t.add(b"y", 1);
        decayed += u32::from(t.bucket(0) != (fx, count));
    }
    decayed
}

#[test]
fn collisions_decay_at_the_rate_decay_to_the_count() {
    // 50 000 draws per case: the standard deviation of the rate is at most 0.0023, so the
    // bound (5 of them) is under 0.012, while decay^(count+1) lies at least 0.034 away.
    const TRIALS: u32 = 50_000;
    for (decay, count) in [(0.5, 1), (0.5, 3), (0.75, 4), (0.9, 1), (0.9, 5), (0.9, 10)] {
        let want = (0..count).fold(1.0, |p, _| p * decay);
        let sigma = (want * (1.0 - want) / f64::from(TRIALS)).sqrt();
        let bound = 5.0 * sigma;
        assert!(
            (want - want * decay) > 2.0 * bound,
            "decay {decay}, count {count}: the bound tells decay^(count+1) apart"
        );
        let decayed = decays(decay, count, TRIALS, 0x5eed + u64::from(count));
        let rate = f64::from(decayed) / f64::from(TRIALS);
        assert!(
            (rate - want).abs() < bound,
            "decay {decay}, count {count}: rate {rate}, decay^count {want} ± {bound}"
        );
    }
}

#[test]
fn a_bucket_at_count_one_is_taken_over_with_chance_decay() {
    // The takeover itself: the bucket at 1 decays to 0 and passes to the colliding item.
    let fy = murmur2_32(b"y", FINGERPRINT_SEED);
    let fx = murmur2_32(b"x", FINGERPRINT_SEED);
    let mut t = held(0.6, 1, 42);
    let mut taken = 0u32;
    for _ in 0..100_000 {
        t.set_bucket(0, fx, 1);
        t.add(b"y", 1);
        match t.bucket(0) {
            (fp, 1) if fp == fy => taken += 1,
            other => assert_eq!(other, (fx, 1)),
        }
    }
    // 0.6 ± 5σ (σ = 0.00155); decay² = 0.36 is far outside.
    let rate = f64::from(taken) / 1e5;
    assert!((rate - 0.6).abs() < 0.0078, "takeover rate {rate}");
}
