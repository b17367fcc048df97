//! Support for the core's property tests: inputs that start valid and are then mutated, and
//! a runner that counts how many inputs the code under test accepted, so a generator that
//! drifts away from valid inputs fails its test instead of passing without checking
//! anything.

use crate::rdb::{Field, Fields};
use proptest::prelude::*;
use proptest::test_runner::{Config, TestCaseError, TestRunner};
use std::cell::Cell;

/// How many inputs a counted property test saw accepted and refused.
#[derive(Clone, Copy, Debug)]
pub struct Counts {
    pub accepted: u32,
    pub refused: u32,
}

/// Runs `check` on `cases` values of `strategy` (failures shrink and fail the test as in
/// `proptest!`); `check` says whether the code under test accepted the input, i.e. whether
/// the checks behind acceptance ran. Fails unless at least `min_accepted` were accepted.
pub fn run_counting<S: Strategy>(
    name: &str,
    cases: u32,
    min_accepted: u32,
    strategy: S,
    check: impl Fn(S::Value) -> Result<bool, TestCaseError>,
) -> Counts {
    let config = fixed_config(name, cases);
    let accepted = Cell::new(0u32);
    let refused = Cell::new(0u32);
    let result = TestRunner::new(config).run(&strategy, |value| {
        if check(value)? {
            accepted.set(accepted.get() + 1);
        } else {
            refused.set(refused.get() + 1);
        }
        Ok(())
    });
    if let Err(e) = result {
        panic!("{name}: {e}");
    }
    let counts = Counts {
        accepted: accepted.get(),
        refused: refused.get(),
    };
    eprintln!("{name}: {counts:?}");
    assert!(
        counts.accepted >= min_accepted,
        "{name}: only {} of {} inputs accepted (at least {min_accepted} must be): the \
         generator no longer reaches the accepting paths",
        counts.accepted,
        counts.accepted + counts.refused,
    );
    counts
}

/// `cases` cases from a seed fixed by `name`, so a property test finds the same inputs on
/// every run (a bug it can reach, it reaches every time); `PROPTEST_RNG_SEED` in the
/// environment still picks another seed, to explore.
pub fn fixed_config(name: &str, cases: u32) -> Config {
    let mut config = Config {
        cases,
        failure_persistence: None,
        ..Config::default()
    };
    if std::env::var_os("PROPTEST_RNG_SEED").is_none() {
        // FNV-1a of the name: a seed of its own per test, the same on every run.
        let seed = name.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
            (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3)
        });
        config.rng_seed = proptest::test_runner::RngSeed::Fixed(seed);
    }
    config
}

/// What a source of a three-way merge holds: nothing, one item, or its capacity.
pub const SOURCE_KINDS: [&str; 3] = ["empty", "one", "full"];

/// Every order of three sources' kinds (27).
pub fn source_orders() -> Vec<[&'static str; 3]> {
    let mut orders = Vec::new();
    for a in SOURCE_KINDS {
        for b in SOURCE_KINDS {
            for c in SOURCE_KINDS {
                orders.push([a, b, c]);
            }
        }
    }
    orders
}

/// The items of source `position` of kind `kind` in a filter of `capacity`: distinct per
/// position.
pub fn source_items(kind: &str, position: u32, capacity: u32) -> std::ops::Range<u32> {
    let base = position * 1_000_000;
    match kind {
        "empty" => base..base,
        "one" => base..base + 1,
        _ => base..base + capacity,
    }
}

/// One change to a byte string.
#[derive(Clone, Debug)]
pub enum ByteEdit {
    /// Byte `at % len` set to `value`.
    Set(usize, u8),
    /// Byte `at % len` with one bit flipped.
    Flip(usize, u8),
    /// Cut to `at % (len + 1)` bytes.
    Truncate(usize),
    /// A byte appended.
    Append(u8),
}

/// No edit half of the time, else one to three.
pub fn byte_edits() -> impl Strategy<Value = Vec<ByteEdit>> {
    let edit = prop_oneof![
        4 => (any::<usize>(), any::<u8>()).prop_map(|(at, v)| ByteEdit::Set(at, v)),
        4 => (any::<usize>(), 0u8..8).prop_map(|(at, bit)| ByteEdit::Flip(at, bit)),
        1 => any::<usize>().prop_map(ByteEdit::Truncate),
        1 => any::<u8>().prop_map(ByteEdit::Append),
    ];
    prop_oneof![
        1 => Just(Vec::new()),
        1 => proptest::collection::vec(edit, 1..4),
    ]
}

/// `bytes` with `edits` applied in order.
pub fn apply_byte_edits(bytes: &[u8], edits: &[ByteEdit]) -> Vec<u8> {
    let mut out = bytes.to_vec();
    for edit in edits {
        match *edit {
            ByteEdit::Set(at, v) if !out.is_empty() => {
                let at = at % out.len();
                out[at] = v;
            }
            ByteEdit::Flip(at, bit) if !out.is_empty() => {
                let at = at % out.len();
                out[at] ^= 1 << bit;
            }
            ByteEdit::Truncate(at) => out.truncate(at % (out.len() + 1)),
            ByteEdit::Append(v) => out.push(v),
            ByteEdit::Set(..) | ByteEdit::Flip(..) => {}
        }
    }
    out
}

/// One change to an RDB field stream.
#[derive(Clone, Debug)]
pub enum FieldEdit {
    /// Field `at % len` replaced (`kind` 0: unsigned, 1: double, 2: buffer of `n % 64`
    /// bytes), with `n` small when `small`.
    Replace {
        at: usize,
        kind: u8,
        n: u64,
        small: bool,
    },
    /// Unsigned field `at % len` (if it is one) plus or minus one.
    Nudge(usize, bool),
    /// Buffer field `at % len` (if it is one) with one byte more or less.
    Resize(usize, bool),
    /// Byte `byte % size` of the `at % count`-th buffer field (if not empty) set to
    /// `value`: the data itself corrupted, not its shape.
    Poke { at: usize, byte: usize, value: u8 },
    /// Field `at % len` removed.
    Remove(usize),
    /// Cut to `at % (len + 1)` fields.
    Truncate(usize),
    /// A zero field appended.
    Append,
}

/// One edit of a field stream.
pub fn field_edit() -> impl Strategy<Value = FieldEdit> {
    prop_oneof![
        3 => (any::<usize>(), 0u8..3, any::<u64>(), any::<bool>())
            .prop_map(|(at, kind, n, small)| FieldEdit::Replace { at, kind, n, small }),
        3 => (any::<usize>(), any::<bool>()).prop_map(|(at, up)| FieldEdit::Nudge(at, up)),
        1 => (any::<usize>(), any::<bool>()).prop_map(|(at, up)| FieldEdit::Resize(at, up)),
        1 => any::<usize>().prop_map(FieldEdit::Remove),
        1 => any::<usize>().prop_map(FieldEdit::Truncate),
        1 => Just(FieldEdit::Append),
        3 => (any::<usize>(), any::<usize>(), any::<u8>())
            .prop_map(|(at, byte, value)| FieldEdit::Poke { at, byte, value }),
    ]
}

/// No edit half of the time, else one to three.
pub fn field_edits() -> impl Strategy<Value = Vec<FieldEdit>> {
    prop_oneof![
        1 => Just(Vec::new()),
        1 => proptest::collection::vec(field_edit(), 1..4),
    ]
}

/// `fields` with `edits` applied in order, ready to be read from the start.
pub fn apply_field_edits(fields: &Fields, edits: &[FieldEdit]) -> Fields {
    let mut out = fields.fields.clone();
    for edit in edits {
        let len = out.len();
        match *edit {
            FieldEdit::Replace { at, kind, n, small } if len > 0 => {
                let n = if small { n % 300 } else { n };
                out[at % len] = match kind {
                    0 => Field::Unsigned(n),
                    1 => Field::Double(f64::from_bits(n)),
                    _ => Field::Buffer(vec![n as u8; (n % 64) as usize]),
                };
            }
            FieldEdit::Nudge(at, up) if len > 0 => {
                if let Field::Unsigned(v) = &mut out[at % len] {
                    *v = if up {
                        v.wrapping_add(1)
                    } else {
                        v.wrapping_sub(1)
                    };
                }
            }
            FieldEdit::Resize(at, up) if len > 0 => {
                if let Field::Buffer(b) = &mut out[at % len] {
                    if up {
                        b.push(0);
                    } else {
                        b.pop();
                    }
                }
            }
            FieldEdit::Poke { at, byte, value } => {
                let mut buffers: Vec<&mut Vec<u8>> = out
                    .iter_mut()
                    .filter_map(|f| match f {
                        Field::Buffer(b) if !b.is_empty() => Some(b),
                        _ => None,
                    })
                    .collect();
                if !buffers.is_empty() {
                    let count = buffers.len();
                    let b = &mut buffers[at % count];
                    let byte = byte % b.len();
                    b[byte] = value;
                }
            }
            FieldEdit::Remove(at) if len > 0 => {
                out.remove(at % len);
            }
            FieldEdit::Truncate(at) => out.truncate(at % (len + 1)),
            FieldEdit::Append => out.push(Field::Unsigned(0)),
            _ => {}
        }
    }
    Fields {
        fields: out,
        read_at: 0,
    }
}

/// Fields from a list of `(kind, n, bytes)`: an unrelated stream.
pub fn random_fields(raw: Vec<(u8, u64, Vec<u8>)>, unsigned_below: u64) -> Fields {
    Fields {
        fields: raw
            .into_iter()
            .map(|(kind, n, bytes)| match kind {
                0 => Field::Unsigned(n % unsigned_below),
                1 => Field::Double(f64::from_bits(n)),
                _ => Field::Buffer(bytes),
            })
            .collect(),
        read_at: 0,
    }
}

pub fn random_streams() -> impl Strategy<Value = Option<Vec<(u8, u64, Vec<u8>)>>> {
    prop_oneof![
        6 => Just(None),
        1 => proptest::option::of(proptest::collection::vec(
            (0u8..3, any::<u64>(), proptest::collection::vec(any::<u8>(), 0..40)),
            0..40,
        )),
    ]
}
