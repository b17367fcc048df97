//! WBF replication at the master's time: DUMP payloads and digests equal on the replica,
//! which answers reads and refuses writes (WBF.AT included).

use crate::support::replies::ok;
use crate::support::wbf::{build_filters, mexists, snapshot};
use crate::support::{
    call, expect, loadchunks, scandump, start_replica, wait_for_replicas, Server,
};
use std::time::Duration;

#[test]
fn replicas_reproduce_the_master_bytes() {
    let master = Server::start();
    let replica = start_replica(&master);
    let mut m = master.raw();
    let mut r = replica.raw();
    build_filters(&mut m);
    // Short generations (10 ms): a replica using its own clock would shift differently.
    expect(&mut m, "WBF.RESERVE moving 0.01 1000 WINDOW 80", ok());
    for i in 0..40 {
        m.call(&["WBF.ADD", "moving", &format!("m{i}")]);
        std::thread::sleep(Duration::from_millis(3));
    }
    let dump = scandump(&mut m, "WBF.SCANDUMP", "counted");
    loadchunks(&mut m, "WBF.LOADCHUNK", "restored", &dump);
    wait_for_replicas(&mut m, 1);
    for key in ["counted", "timed", "short", "moving", "restored"] {
        assert_eq!(r.call(&["DUMP", key]), m.call(&["DUMP", key]), "{key}");
        let digest = ["DEBUG", "DIGEST-VALUE", key];
        assert_eq!(r.call(&digest), m.call(&digest), "{key}");
        let state = snapshot(&mut m, key);
        assert_eq!(snapshot(&mut r, key)[..1], state[..1], "{key}");
    }
    // The replica answers reads and refuses writes, WBF.AT included.
    assert_eq!(mexists(&mut r, "timed", "t", 300), vec![1; 300]);
    for line in ["WBF.ADD timed x", "WBF.AT timed 5 ADD x"] {
        assert!(call(&mut r, line).error().starts_with("READONLY"), "{line}");
    }
}
