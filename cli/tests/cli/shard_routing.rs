//! Routing end to end: `redbloom shard add` puts each item in the member docs/sharding.md's
//! rule names (`XXH3_64bits(item) mod N`, member `i` at the key its naming rule gives),
//! checked on the members themselves with BF.EXISTS. The expected members are literals
//! computed outside this code base (Python's `xxhash.xxh3_64_intdigest(item) % 12`; the
//! first four are the routing table's test vectors), so a changed hash, seed or modulus
//! fails here even if the client agrees with itself.

use crate::common::{ok, url};
use crate::support::{Reply, Server};

/// docs/sharding.md's member keys of `users` over 12 members.
const MEMBERS: [&str; 12] = [
    "{s0.10}:users",
    "{s1.3}:users",
    "{s2.12}:users",
    "{s3.54}:users",
    "{s4.11}:users",
    "{s5.12}:users",
    "{s6.10}:users",
    "{s7.2}:users",
    "{s8.52}:users",
    "{s9.2}:users",
    "{s10.23}:users",
    "{s11.19}:users",
];

/// Items and the member of 12 each belongs to: every member gets at least one.
const ROUTED: [(&str, usize); 21] = [
    ("a", 7),
    ("user:1000", 3),
    ("hello world", 7),
    ("🦀", 4),
    ("user:1", 9),
    ("user:2", 10),
    ("user:3", 7),
    ("user:4", 10),
    ("user:5", 9),
    ("user:6", 9),
    ("user:7", 8),
    ("user:8", 2),
    ("user:12", 5),
    ("apple", 8),
    ("banana", 0),
    ("cherry", 11),
    ("durian", 6),
    ("peach", 1),
    ("{s0.10}:users", 11),
    ("item 42", 6),
    ("😀😀", 10),
];

#[test]
fn shard_add_puts_each_item_in_the_member_the_rule_names() {
    let server = Server::start();
    let u = url(&server);
    ok(&[
        "shard",
        "create",
        &u,
        "users",
        "--shards",
        "12",
        "--error-rate",
        "0.0001",
        "--capacity",
        "1200",
    ]);
    let mut conn = server.raw();
    for (i, member) in MEMBERS.iter().enumerate() {
        let field = format!("member:{i}");
        assert_eq!(
            conn.call(&["HGET", "users", &field]),
            Reply::bulk(member),
            "{field}"
        );
    }
    let mut add = vec!["shard", "add", &u, "users"];
    add.extend(ROUTED.iter().map(|&(item, _)| item));
    ok(&add);
    for (item, member) in ROUTED {
        let found: Vec<usize> = (0..MEMBERS.len())
            .filter(|&i| conn.call(&["BF.EXISTS", MEMBERS[i], item]) == Reply::Int(1))
            .collect();
        assert_eq!(found, vec![member], "{item:?}: the members that hold it");
    }
    let cards: Vec<i64> = MEMBERS
        .iter()
        .map(|m| conn.call(&["BF.CARD", m]).int())
        .collect();
    assert_eq!(cards, [1, 1, 1, 1, 1, 1, 2, 3, 2, 3, 3, 2]);
}
