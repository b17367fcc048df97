//! A replica stays byte-identical to its master through 100k mixed writes of every kind —
//! adds, MADD / INSERT batches, CF deletes and compactions, LOADCHUNK restores of SCANDUMPs
//! into new keys, scaling growth, failing commands — sent pipelined; then, with the master
//! killed and the replica promoted, every acknowledged item is answered.

use crate::support::{
    call, scandump, start_replica, wait_for_replicas, RawConnection, Reply, Rng, Server,
};
use std::collections::HashMap;

/// Commands in the run (each MADD / INSERT carries several items).
const COMMANDS: usize = 100_000;
const PIPELINE: usize = 2_000;

/// What a command is expected to do, to check its reply and update the model.
enum Expect {
    /// BF.ADD / MADD / INSERT of these items into this key: each reply 0 or 1 (or the
    /// documented growth errors, then not acknowledged).
    BloomAdds(String, Vec<String>),
    /// CF.ADD / INSERT of these items: 1 means stored. With NX (third field) 0 is also
    /// fine: a false positive, nothing stored (so nothing the model may delete later).
    CuckooAdds(String, Vec<String>, bool),
    /// CF.DEL of an item the model held (already taken out of it): must answer 1.
    CuckooDel,
    /// Anything with an exact reply.
    Exactly(Reply),
    /// Any reply that is not an error.
    NotError,
}

/// The model: acknowledged items per key (Cuckoo: a multiset as a list).
#[derive(Default)]
struct Model {
    bloom: HashMap<String, Vec<String>>,
    cuckoo: HashMap<String, Vec<String>>,
}

fn strings(items: &[String]) -> Vec<&str> {
    items.iter().map(String::as_str).collect()
}

/// Applies a pipelined batch and checks every reply against its expectation.
fn run_batch(conn: &mut RawConnection, batch: Vec<(Vec<String>, Expect)>, model: &mut Model) {
    let commands: Vec<Vec<String>> = batch.iter().map(|(c, _)| c.clone()).collect();
    let replies = conn.pipeline(&commands);
    for ((command, expect), reply) in batch.into_iter().zip(replies) {
        match expect {
            Expect::BloomAdds(key, items) => {
                let per_item: Vec<Reply> = match reply {
                    Reply::Array(Some(r)) => r,
                    single => vec![single],
                };
                for (item, r) in items.into_iter().zip(per_item) {
                    match r {
                        Reply::Int(0 | 1) => model.bloom.entry(key.clone()).or_default().push(item),
                        other => panic!("{command:?}: {other:?}"),
                    }
                }
            }
            Expect::CuckooAdds(key, items, nx) => {
                let per_item: Vec<Reply> = match reply {
                    Reply::Array(Some(r)) => r,
                    single => vec![single],
                };
                for (item, r) in items.into_iter().zip(per_item) {
                    if nx && r == Reply::Int(0) {
                        continue;
                    }
                    assert_eq!(r, Reply::Int(1), "{command:?}");
                    model.cuckoo.entry(key.clone()).or_default().push(item);
                }
            }
            Expect::CuckooDel => assert_eq!(reply, Reply::Int(1), "{command:?}"),
            Expect::Exactly(want) => assert_eq!(reply, want, "{command:?}"),
            Expect::NotError => {
                assert!(!matches!(reply, Reply::Error(_)), "{command:?}: {reply:?}")
            }
        }
    }
}

fn cmd(parts: &[&str]) -> Vec<String> {
    parts.iter().map(|s| s.to_string()).collect()
}

/// Restores a SCANDUMP of `from` into the new key `to` with LOADCHUNK (through the
/// pipeline, so the replica receives the chunks too) and copies the model.
fn copy_by_dump(conn: &mut RawConnection, bloom: bool, from: &str, to: &str, model: &mut Model) {
    let (scan, load) = if bloom {
        ("BF.SCANDUMP", "BF.LOADCHUNK")
    } else {
        ("CF.SCANDUMP", "CF.LOADCHUNK")
    };
    let dump = scandump(conn, scan, from);
    for (iter, data) in dump.iter().filter(|(it, _)| *it != 0) {
        let reply = conn.call(&[
            load.as_bytes(),
            to.as_bytes(),
            iter.to_string().as_bytes(),
            data.as_deref().unwrap_or_default(),
        ]);
        assert_eq!(reply, Reply::ok(), "{load} {to} {iter}");
    }
    if bloom {
        let items = model.bloom.get(from).cloned().unwrap_or_default();
        model.bloom.insert(to.to_string(), items);
    } else {
        let items = model.cuckoo.get(from).cloned().unwrap_or_default();
        model.cuckoo.insert(to.to_string(), items);
    }
}

#[test]
fn replica_is_identical_after_100k_mixed_writes_and_takes_over() {
    let mut master = Server::start();
    let replica = start_replica(&master);
    let mut conn = master.raw();
    let mut model = Model::default();
    let mut rng = Rng(0x5eed_1234_abcd_0001);

    // Filters of every shape: scaling with growth 1/2/4, non-scaling, Cuckoo with
    // expansion 0/1/2 and bucket sizes 1/2/4, and a string key for WRONGTYPE.
    let setup = [
        "BF.RESERVE bf0 0.01 100",
        "BF.RESERVE bf1 0.001 500 EXPANSION 1",
        "BF.RESERVE bf2 0.1 20 EXPANSION 4",
        "BF.RESERVE bfn 0.01 1000 NONSCALING",
        "CF.RESERVE cf0 1000",
        "CF.RESERVE cf1 64 BUCKETSIZE 1 EXPANSION 2",
        "CF.RESERVE cf2 256 BUCKETSIZE 4 MAXITERATIONS 50 EXPANSION 2",
        "CF.RESERVE cfz 100000 EXPANSION 0",
        "SET str x",
    ];
    for line in setup {
        assert_eq!(call(&mut conn, line), Reply::ok(), "{line}");
    }
    let bf_keys = ["bf0", "bf1", "bf2", "bfn"];
    let cf_keys = ["cf0", "cf1", "cf2", "cfz"];

    let mut sent = 0;
    let mut next_item = 0usize;
    let mut copies = 0;
    while sent < COMMANDS {
        let mut batch: Vec<(Vec<String>, Expect)> = Vec::with_capacity(PIPELINE);
        for _ in 0..PIPELINE {
            let mut item = || {
                next_item += 1;
                format!("i{next_item}")
            };
            let op = rng.index(100);
            let bf = bf_keys[rng.index(3)].to_string(); // bfn gets its own ops
            let cf = cf_keys[rng.index(3)].to_string(); // cfz too
            let entry = match op {
                0..=24 => {
                    let it = item();
                    (cmd(&["BF.ADD", &bf, &it]), Expect::BloomAdds(bf, vec![it]))
                }
                25..=29 => {
                    let items: Vec<String> = (0..8).map(|_| item()).collect();
                    let mut c = cmd(&["BF.MADD", &bf]);
                    c.extend(items.iter().cloned());
                    (c, Expect::BloomAdds(bf, items))
                }
                30..=32 => {
                    // Creates a new scaling filter on first use, then adds to it.
                    let key = format!("bfi{}", rng.index(20));
                    let items: Vec<String> = (0..5).map(|_| item()).collect();
                    let mut c = cmd(&[
                        "BF.INSERT",
                        &key,
                        "CAPACITY",
                        "10",
                        "ERROR",
                        "0.01",
                        "EXPANSION",
                        "2",
                        "ITEMS",
                    ]);
                    c.extend(items.iter().cloned());
                    (c, Expect::BloomAdds(key, items))
                }
                33..=34 => {
                    // A non-scaling filter, never filled up (items ≤ acknowledged adds).
                    if model.bloom.get("bfn").map_or(0, Vec::len) >= 900 {
                        continue;
                    }
                    let it = item();
                    (
                        cmd(&["BF.ADD", "bfn", &it]),
                        Expect::BloomAdds("bfn".into(), vec![it]),
                    )
                }
                35..=59 => {
                    let it = item();
                    let nx = rng.index(2) == 0;
                    let c = if nx { "CF.ADDNX" } else { "CF.ADD" };
                    (cmd(&[c, &cf, &it]), Expect::CuckooAdds(cf, vec![it], nx))
                }
                60..=64 => {
                    let items: Vec<String> = (0..6).map(|_| item()).collect();
                    let mut c = cmd(&["CF.INSERT", &cf, "ITEMS"]);
                    c.extend(items.iter().cloned());
                    (c, Expect::CuckooAdds(cf, items, false))
                }
                65..=79 => {
                    // Delete an item the model holds, taking it out of the model now so no
                    // later command of the batch picks it again. (Deleting absent items
                    // may remove a colliding fingerprint: that is done on cfz only.)
                    let Some(list) = model.cuckoo.get_mut(&cf).filter(|l| !l.is_empty()) else {
                        continue;
                    };
                    let victim = list.swap_remove(rng.index(list.len()));
                    (cmd(&["CF.DEL", &cf, &victim]), Expect::CuckooDel)
                }
                80..=81 => (cmd(&["CF.COMPACT", &cf]), Expect::Exactly(Reply::ok())),
                82..=85 => {
                    let it = item();
                    (
                        cmd(&["CF.INSERTNX", "cfz", "ITEMS", &it, &it]),
                        Expect::NotError,
                    )
                }
                86..=87 => {
                    let it = item();
                    (cmd(&["CF.DEL", "cfz", &it]), Expect::NotError)
                }
                88 => (
                    cmd(&["BF.ADD", "str", "x"]),
                    Expect::Exactly(Reply::err(
                        "WRONGTYPE Operation against a key holding the wrong kind of value",
                    )),
                ),
                89 => (
                    cmd(&["CF.RESERVE", "cf0", "100"]),
                    Expect::Exactly(Reply::err("ERR item exists")),
                ),
                90 => (
                    cmd(&["BF.RESERVE", "bfx", "2", "100"]),
                    Expect::Exactly(Reply::err("ERR (0 < error rate range < 1) ")),
                ),
                91 => (
                    cmd(&["CF.DEL", "missing", "x"]),
                    Expect::Exactly(Reply::err("Not found")),
                ),
                92 => (
                    cmd(&["BF.LOADCHUNK", "bf0", "0", "x"]),
                    Expect::Exactly(Reply::err("ERR received bad data")),
                ),
                _ => {
                    let it = item();
                    let key = format!("auto{}", rng.index(50));
                    match rng.index(3) {
                        0 => (
                            cmd(&["BF.ADD", &format!("b{key}"), &it]),
                            Expect::BloomAdds(format!("b{key}"), vec![it]),
                        ),
                        1 => (
                            cmd(&["CF.ADD", &format!("c{key}"), &it]),
                            Expect::CuckooAdds(format!("c{key}"), vec![it], false),
                        ),
                        // Counting filters: every add stores a copy (like CF.ADD).
                        _ => (
                            cmd(&["CBF.ADD", &format!("n{key}"), &it]),
                            Expect::CuckooAdds(format!("n{key}"), vec![it], false),
                        ),
                    }
                }
            };
            batch.push(entry);
        }
        sent += batch.len();
        run_batch(&mut conn, batch, &mut model);
        // Now and then: a LOADCHUNK copy of a filter into a new key.
        if sent % (2 * PIPELINE) < PIPELINE {
            copies += 1;
            let bloom = copies % 2 == 0;
            let from = if bloom {
                bf_keys[rng.index(3)]
            } else {
                cf_keys[rng.index(3)]
            };
            copy_by_dump(&mut conn, bloom, from, &format!("copy{copies}"), &mut model);
        }
    }

    wait_for_replicas(&mut conn, 1);
    let mut rconn = replica.raw();
    let keys = conn.call(&["KEYS", "*"]).array();
    assert!(keys.len() > 60, "{}", keys.len());
    let mut rkeys = rconn.call(&["KEYS", "*"]).array();
    let mut sorted = keys.clone();
    sorted.sort_by_key(|k| k.bytes());
    rkeys.sort_by_key(|k| k.bytes());
    assert_eq!(sorted, rkeys);
    for key in &keys {
        let key = key.text();
        assert_eq!(
            conn.call(&["DEBUG", "DIGEST-VALUE", &key]),
            rconn.call(&["DEBUG", "DIGEST-VALUE", &key]),
            "{key}"
        );
        // The content itself, not only its digest: the DUMP payloads are the same bytes.
        let (on_master, on_replica) = (conn.call(&["DUMP", &key]), rconn.call(&["DUMP", &key]));
        assert!(
            on_master == on_replica,
            "{key}: the replica's DUMP payload differs ({} vs {} bytes)",
            on_master.bytes().len(),
            on_replica.bytes().len()
        );
    }
    assert_eq!(
        conn.call(&["DEBUG", "DIGEST"]),
        rconn.call(&["DEBUG", "DIGEST"])
    );
    // Several keys grew: scaling and Cuckoo growth happened.
    assert!(call(&mut conn, "BF.INFO bf1 FILTERS").ints()[0] > 3);
    assert!(call(&mut conn, "CF.INFO cf1").array()[5].int() > 3);

    // The master dies; the promoted replica answers every acknowledged item.
    master.stop(true);
    assert_eq!(call(&mut rconn, "REPLICAOF NO ONE"), Reply::ok());
    let mut checked = 0;
    for (bloom, map) in [(true, &model.bloom), (false, &model.cuckoo)] {
        for (key, items) in map {
            for chunk in items.chunks(1000) {
                let command = match (bloom, key.starts_with("nauto")) {
                    (true, _) => "BF.MEXISTS",
                    (false, true) => "CBF.MEXISTS",
                    (false, false) => "CF.MEXISTS",
                };
                let mut argv = vec![command, key.as_str()];
                argv.extend(strings(chunk));
                let found = rconn.call(&argv).ints();
                assert!(
                    found.iter().all(|&f| f == 1),
                    "{key} lost items after failover"
                );
                checked += chunk.len();
            }
        }
    }
    assert!(checked > 100_000, "{checked}");
    assert_eq!(call(&mut rconn, "BF.ADD bf0 after-failover"), Reply::Int(1));
    assert_eq!(call(&mut rconn, "CF.ADD cf0 after-failover"), Reply::Int(1));
    assert_eq!(
        call(&mut rconn, "CBF.ADD nauto0 after-failover"),
        Reply::Int(1)
    );
}
