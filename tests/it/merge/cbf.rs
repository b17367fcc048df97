//! CBF.MERGE: counters added (CBF.COUNT at least the sum), saturating and staying
//! saturated, the delete rule after a merge, INTERSECT as the smaller counter, errors.

use super::{add_all, items, refused_without_change};
use crate::support::{call, Reply, Server};

fn count(conn: &mut crate::support::RawConnection, key: &str, item: &str) -> i64 {
    conn.call(&["CBF.COUNT", key, item]).int()
}

#[test]
fn counters_add_and_the_merged_filter_deletes_as_any_other() {
    let server = Server::start();
    let mut conn = server.raw();
    for key in ["a", "b"] {
        assert_eq!(
            call(&mut conn, &format!("CBF.RESERVE {key} 0.01 1000")),
            Reply::ok()
        );
    }
    add_all(&mut conn, &["CBF.MADD", "a"], &items("x", 0..300));
    add_all(&mut conn, &["CBF.MADD", "b"], &items("x", 200..500));
    for _ in 0..3 {
        call(&mut conn, "CBF.ADD a twice");
        call(&mut conn, "CBF.ADD b twice");
    }
    assert_eq!(call(&mut conn, "CBF.MERGE m 2 a b"), Reply::ok());
    assert_eq!(
        call(&mut conn, "CBF.CARD m").int(),
        call(&mut conn, "CBF.CARD a").int() + call(&mut conn, "CBF.CARD b").int()
    );
    for item in items("x", 0..500).iter().chain(&["twice".to_string()]) {
        let sum = count(&mut conn, "a", item) + count(&mut conn, "b", item);
        assert!(count(&mut conn, "m", item) >= sum, "{item}");
    }
    assert_eq!(count(&mut conn, "m", "twice"), 6);
    for left in (0..6).rev() {
        assert_eq!(call(&mut conn, "CBF.DEL m twice"), Reply::Int(1));
        assert_eq!(count(&mut conn, "m", "twice"), left);
    }
    // Saturation: 10 + 9 copies stop at 15, and a saturated counter stays.
    for (key, times) in [("s1", 10), ("s2", 9)] {
        for _ in 0..times {
            call(&mut conn, &format!("CBF.ADD {key} hot"));
        }
    }
    assert_eq!(call(&mut conn, "CBF.MERGE s 2 s1 s2"), Reply::ok());
    assert_eq!(count(&mut conn, "s", "hot"), 15);
    assert_eq!(call(&mut conn, "CBF.DEL s hot"), Reply::Int(1));
    assert_eq!(count(&mut conn, "s", "hot"), 15);
    // INTERSECT: the smaller counter.
    assert_eq!(
        call(&mut conn, "CBF.MERGE i 2 s1 s2 INTERSECT"),
        Reply::ok()
    );
    assert_eq!(count(&mut conn, "i", "hot"), 9);
    // OVERRIDE: the destination replaced by a copy of the source.
    assert_eq!(call(&mut conn, "CBF.MERGE m 1 a OVERRIDE"), Reply::ok());
    assert_eq!(conn.call(&["DUMP", "m"]), conn.call(&["DUMP", "a"]));
}

#[test]
fn errors_leave_the_destination_byte_identical() {
    let server = Server::start();
    let mut conn = server.raw();
    for line in [
        "CBF.RESERVE a 0.01 100",
        "CBF.RESERVE d 0.01 100",
        "CBF.RESERVE other 0.01 200",
        "BF.RESERVE bf 0.01 100",
    ] {
        assert_eq!(call(&mut conn, line), Reply::ok(), "{line}");
    }
    add_all(&mut conn, &["CBF.MADD", "a"], &items("a", 0..300));
    add_all(&mut conn, &["CBF.MADD", "d"], &items("d", 0..50));
    let shape = "ERR filters of different shapes (error rate, capacity, expansion, scaling, layout) cannot be merged: other";
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (
            vec!["CBF.MERGE", "d", "x", "a"],
            "ERR numkeys must be a positive integer",
        ),
        (
            vec!["CBF.MERGE", "d", "2", "a"],
            "ERR numkeys does not match the keys given",
        ),
        (vec!["CBF.MERGE", "d", "2", "a", "nosuch"], "ERR not found"),
        (
            vec!["CBF.MERGE", "d", "2", "a", "bf"],
            "WRONGTYPE Operation against a key holding the wrong kind of value",
        ),
        (vec!["CBF.MERGE", "d", "2", "a", "other"], shape),
        (
            vec!["CBF.MERGE", "d", "1", "a", "INTERSECT"],
            "ERR INTERSECT needs filters of a single link: a",
        ),
    ];
    refused_without_change(&mut conn, "d", &cases);
}
