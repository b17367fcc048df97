//! BF.MERGE, CBF.MERGE and CF.MERGE of three sources, each empty, holding one item or
//! filled to its capacity, in every order (`BF.MERGE m 3 a b c` with `b` empty and `c`
//! holding `y` answers `y`), over filters of one memory page and of several: every item any
//! source holds, the result holds.

use super::{add_all, answers, items};
use crate::support::{call, RawConnection, Reply, Server};

const KINDS: [&str; 3] = ["empty", "one", "full"];

/// A family's commands: how to create a filter of a capacity, add items, merge, ask.
struct Family {
    reserve: fn(&str, usize) -> String,
    add: [&'static str; 2],
    merge: &'static str,
    mexists: &'static str,
}

/// The items of source `position` of `kind` (distinct per position).
fn source_items(kind: &str, position: usize, capacity: usize) -> Vec<String> {
    let prefix = format!("p{position}:");
    match kind {
        "empty" => Vec::new(),
        "one" => items(&prefix, 0..1),
        _ => items(&prefix, 0..capacity),
    }
}

/// For each capacity, the nine sources (kind × position) built once, then the 27 merges.
fn every_order(family: &Family, capacities: [usize; 2]) {
    let server = Server::start();
    let mut conn = server.raw();
    for capacity in capacities {
        call(&mut conn, "FLUSHALL");
        for kind in KINDS {
            for position in 0..3 {
                let key = format!("{kind}{position}");
                assert_eq!(
                    call(&mut conn, &(family.reserve)(&key, capacity)),
                    Reply::ok()
                );
                let prefix = [family.add[0], &key, family.add[1]];
                let prefix: Vec<&str> = prefix.into_iter().filter(|a| !a.is_empty()).collect();
                add_all(&mut conn, &prefix, &source_items(kind, position, capacity));
            }
        }
        for a in KINDS {
            for b in KINDS {
                for c in KINDS {
                    merged_holds_every_item(&mut conn, family, [a, b, c], capacity);
                }
            }
        }
    }
}

fn merged_holds_every_item(
    conn: &mut RawConnection,
    family: &Family,
    kinds: [&str; 3],
    capacity: usize,
) {
    let sources: Vec<String> = (0..3).map(|p| format!("{}{p}", kinds[p])).collect();
    call(conn, "DEL m");
    let merge = conn.call(&[
        family.merge,
        "m",
        "3",
        &sources[0],
        &sources[1],
        &sources[2],
    ]);
    assert_eq!(merge, Reply::ok(), "{kinds:?}, capacity {capacity}");
    for (p, kind) in kinds.iter().enumerate() {
        let held = source_items(kind, p, capacity);
        let answers = answers(conn, family.mexists, "m", &held);
        let missing = answers.iter().filter(|&&a| a != 1).count();
        assert_eq!(
            missing, 0,
            "{} of source {p} ({kind}) missing from {kinds:?}, capacity {capacity}",
            family.merge
        );
    }
}

#[test]
fn bf_merges_with_empty_full_and_one_item_sources_in_every_position() {
    let family = Family {
        reserve: |key, capacity| format!("BF.RESERVE {key} 0.01 {capacity}"),
        add: ["BF.MADD", ""],
        merge: "BF.MERGE",
        mexists: "BF.MEXISTS",
    };
    // 50 items: 60 bytes of bits; 20,000: 24 KB, six pages.
    every_order(&family, [50, 20_000]);
}

#[test]
fn cbf_merges_with_empty_full_and_one_item_sources_in_every_position() {
    let family = Family {
        reserve: |key, capacity| format!("CBF.RESERVE {key} 0.01 {capacity}"),
        add: ["CBF.MADD", ""],
        merge: "CBF.MERGE",
        mexists: "CBF.MEXISTS",
    };
    every_order(&family, [50, 5_000]);
}

#[test]
fn cf_merges_with_empty_full_and_one_item_sources_in_every_position() {
    let family = Family {
        reserve: |key, capacity| format!("CF.RESERVE {key} {capacity}"),
        add: ["CF.INSERT", "ITEMS"],
        merge: "CF.MERGE",
        mexists: "CF.MEXISTS",
    };
    every_order(&family, [100, 10_000]);
}
