//! CBF replication: a replica holds the master's bytes and counts, answers reads and refuses
//! writes.

use crate::support::cbf::{build_rich_filter, counts, snapshot};
use crate::support::replies::{err, int, ints, ok};
use crate::support::{
    call, expect, loadchunks, scandump, start_replica, wait_for_replicas, Server,
};

#[test]
fn replicas_answer_identically() {
    let master = Server::start();
    let replica = start_replica(&master);
    let mut m = master.raw();
    let mut r = replica.raw();
    build_rich_filter(&mut m, "rich");
    expect(&mut m, "CBF.ADD auto x", int(1));
    expect(
        &mut m,
        "CBF.INSERT ins CAPACITY 5 EXPANSION 3 ITEMS a b c d e f g",
        ints(&[1; 7]),
    );
    expect(
        &mut m,
        "CBF.INSERT ns CAPACITY 2 NONSCALING ITEMS a b",
        ints(&[1, 1]),
    );
    expect(
        &mut m,
        "CBF.ADD ns c",
        err("ERR non scaling filter is full"),
    );
    expect(&mut m, "CBF.DEL ins a", int(1));
    expect(&mut m, "CBF.DEL ins never", int(0));
    expect(&mut m, "CBF.DEL auto x", int(1));
    let dump = scandump(&mut m, "CBF.SCANDUMP", "rich");
    loadchunks(&mut m, "CBF.LOADCHUNK", "restored", &dump);
    expect(&mut m, "CBF.RESERVE e0 0.001 50 EXPANSION 0", ok());
    wait_for_replicas(&mut m, 1);
    for key in ["rich", "auto", "ins", "ns", "restored", "e0"] {
        assert_eq!(snapshot(&mut r, key), snapshot(&mut m, key), "{key}");
        assert_eq!(counts(&mut r, key), counts(&mut m, key), "{key}");
    }
    // The replica refuses writes but answers reads.
    assert!(call(&mut r, "CBF.ADD rich x")
        .error()
        .starts_with("READONLY"));
    expect(&mut r, "CBF.EXISTS ins b", int(1));
    expect(
        &mut r,
        "CBF.COUNT rich hot",
        call(&mut m, "CBF.COUNT rich hot"),
    );
}
