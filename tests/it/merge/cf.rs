//! CF.MERGE: every fingerprint kept (CF.COUNT the sum), growth as CF.ADD grows, a result
//! that cannot fit refused with the destination untouched, OVERRIDE, errors.

use super::{add_all, answers, items, refused_without_change};
use crate::support::{call, Reply, Server};

fn info(conn: &mut crate::support::RawConnection, key: &str) -> Vec<Reply> {
    call(conn, &format!("CF.INFO {key}")).array()
}

#[test]
fn every_item_of_every_filter_is_kept_and_counts_add() {
    let server = Server::start();
    let mut conn = server.raw();
    for key in ["a", "b"] {
        assert_eq!(
            call(&mut conn, &format!("CF.RESERVE {key} 1000")),
            Reply::ok()
        );
    }
    let (left, right) = (items("x", 0..400), items("x", 300..700));
    add_all(&mut conn, &["CF.INSERT", "a", "ITEMS"], &left);
    add_all(&mut conn, &["CF.INSERT", "b", "ITEMS"], &right);
    assert_eq!(call(&mut conn, "CF.MERGE m 2 a b"), Reply::ok());
    let all = items("x", 0..700);
    assert!(answers(&mut conn, "CF.MEXISTS", "m", &all)
        .iter()
        .all(|&x| x == 1));
    // Items: field 7 of CF.INFO ("Number of items inserted").
    assert_eq!(info(&mut conn, "m")[7], Reply::Int(800));
    for item in ["x0", "x350", "x699"] {
        let sum =
            conn.call(&["CF.COUNT", "a", item]).int() + conn.call(&["CF.COUNT", "b", item]).int();
        assert!(conn.call(&["CF.COUNT", "m", item]).int() >= sum, "{item}");
    }
    assert_eq!(call(&mut conn, "CF.DEL m x350"), Reply::Int(1));
    assert_eq!(call(&mut conn, "CF.DEL m x350"), Reply::Int(1));
    // Over one filter's capacity: the result grows (expansion 1), as adds would.
    assert_eq!(call(&mut conn, "CF.RESERVE c 500"), Reply::ok());
    assert_eq!(call(&mut conn, "CF.RESERVE e 500"), Reply::ok());
    add_all(&mut conn, &["CF.INSERT", "c", "ITEMS"], &items("c", 0..350));
    add_all(&mut conn, &["CF.INSERT", "e", "ITEMS"], &items("e", 0..350));
    assert_eq!(call(&mut conn, "CF.MERGE c 1 e"), Reply::ok());
    assert!(info(&mut conn, "c")[5].int() >= 2, "sub-filters");
    let both: Vec<String> = items("c", 0..350)
        .into_iter()
        .chain(items("e", 0..350))
        .collect();
    assert!(answers(&mut conn, "CF.MEXISTS", "c", &both)
        .iter()
        .all(|&x| x == 1));
    // OVERRIDE: a copy of the source.
    assert_eq!(call(&mut conn, "CF.MERGE m 1 a OVERRIDE"), Reply::ok());
    assert_eq!(conn.call(&["DUMP", "m"]), conn.call(&["DUMP", "a"]));
}

#[test]
fn errors_and_a_result_that_does_not_fit_leave_the_destination_byte_identical() {
    let server = Server::start();
    let mut conn = server.raw();
    for line in [
        "CF.RESERVE a 500 EXPANSION 2",
        "CF.RESERVE d 500 EXPANSION 2",
        "CF.RESERVE flat 500 EXPANSION 0",
        "CF.RESERVE flat2 500 EXPANSION 0",
        "CF.RESERVE other 500 BUCKETSIZE 4 EXPANSION 2",
        "BF.RESERVE bf 0.01 100",
    ] {
        assert_eq!(call(&mut conn, line), Reply::ok(), "{line}");
    }
    add_all(&mut conn, &["CF.INSERT", "a", "ITEMS"], &items("a", 0..350));
    add_all(&mut conn, &["CF.INSERT", "d", "ITEMS"], &items("d", 0..350));
    add_all(
        &mut conn,
        &["CF.INSERT", "flat", "ITEMS"],
        &items("f", 0..350),
    );
    add_all(
        &mut conn,
        &["CF.INSERT", "flat2", "ITEMS"],
        &items("g", 0..350),
    );
    let shape = "ERR filters of different shapes (error rate, capacity, expansion, scaling, layout) cannot be merged: other";
    let full = "ERR the merged filter is full: a fingerprint found no slot";
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (
            vec!["CF.MERGE", "d", "0", "a"],
            "ERR numkeys must be a positive integer",
        ),
        (
            vec!["CF.MERGE", "d", "1", "a", "INTERSECT"],
            "ERR numkeys does not match the keys given",
        ),
        (vec!["CF.MERGE", "d", "2", "a", "nosuch"], "ERR not found"),
        (
            vec!["CF.MERGE", "d", "2", "a", "bf"],
            "WRONGTYPE Operation against a key holding the wrong kind of value",
        ),
        (vec!["CF.MERGE", "d", "2", "a", "other"], shape),
        // Two over-half-full first sub-filters: with expansion 2 the grown sub-filter
        // cannot take their fingerprints; with expansion 0 there is no growth.
        (vec!["CF.MERGE", "d", "1", "a"], full),
        (vec!["CF.MERGE", "flat", "1", "flat2"], full),
    ];
    refused_without_change(&mut conn, "d", &cases[..6]);
    refused_without_change(&mut conn, "flat", &cases[6..]);
    // cf-max-expansions bounds the growth of a client's merge.
    assert_eq!(call(&mut conn, "CF.RESERVE c 500"), Reply::ok());
    assert_eq!(call(&mut conn, "CF.RESERVE e 500"), Reply::ok());
    add_all(&mut conn, &["CF.INSERT", "c", "ITEMS"], &items("c", 0..350));
    add_all(&mut conn, &["CF.INSERT", "e", "ITEMS"], &items("e", 0..350));
    assert_eq!(
        call(&mut conn, "CONFIG SET bf.cf-max-expansions 1"),
        Reply::ok()
    );
    refused_without_change(
        &mut conn,
        "c",
        &[(
            vec!["CF.MERGE", "c", "1", "e"],
            "Maximum expansions reached",
        )],
    );
}
