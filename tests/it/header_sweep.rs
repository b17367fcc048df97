//! Every bit of every SCANDUMP header byte flipped in turn, end to end, for BF, CBF, CF
//! and WBF (SF's is in `sf/header_sweep.rs`): LOADCHUNK refuses the header and makes no
//! key, or the filter it makes dumps back exactly the header it was given (lengths and
//! every other field kept as read) once the genuine chunks have been offered; the server
//! answers throughout. The header's length is the reply's, so the sweep follows the
//! encoding.

use crate::support::{call, scandump, RawConnection, Reply, Server};

fn loadchunk(conn: &mut RawConnection, command: &str, key: &str, iter: i64, data: &[u8]) -> Reply {
    conn.call(&[
        command.as_bytes(),
        key.as_bytes(),
        iter.to_string().as_bytes(),
        data,
    ])
}

/// Builds `key` with `setup`, then sweeps its header with `prefix.LOADCHUNK`.
fn sweep(conn: &mut RawConnection, prefix: &str, setup: &[&str]) {
    for command in setup {
        let reply = call(conn, command);
        assert!(!matches!(reply, Reply::Error(_)), "{command}: {reply:?}");
    }
    let (scan, load) = (format!("{prefix}.SCANDUMP"), format!("{prefix}.LOADCHUNK"));
    let dump = scandump(conn, &scan, "f");
    let header = dump[0].1.clone().unwrap();
    let mut accepted = 0;
    for at in 0..header.len() {
        for bit in 0..8 {
            let mut h = header.clone();
            h[at] ^= 1 << bit;
            if loadchunk(conn, &load, "t", dump[0].0, &h) != Reply::ok() {
                assert_eq!(
                    conn.call(&["EXISTS", "t"]),
                    Reply::Int(0),
                    "{prefix} {at}.{bit}"
                );
                continue;
            }
            accepted += 1;
            for (iter, data) in dump[1..].iter().filter(|(iter, _)| *iter != 0) {
                loadchunk(conn, &load, "t", *iter, data.as_deref().unwrap_or_default());
            }
            let written = scandump(conn, &scan, "t");
            assert!(
                written[0].1.as_deref() == Some(&h[..]),
                "{prefix}: header byte {at} bit {bit} read as another header"
            );
            assert_eq!(conn.call(&["DEL", "t"]), Reply::Int(1));
        }
    }
    assert!(accepted > 0, "{prefix}: no flip accepted");
    assert_eq!(conn.call(&["PING"]), Reply::Simple("PONG".into()));
    conn.call(&["DEL", "f"]);
}

fn madd(command: &str, n: usize) -> String {
    let items: Vec<String> = (0..n).map(|i| format!("i{i}")).collect();
    format!("{command} f {}", items.join(" "))
}

#[test]
fn every_header_bit_flipped_is_refused_or_kept_as_read() {
    let server = Server::start();
    let mut conn = server.raw();
    sweep(
        &mut conn,
        "BF",
        &["BF.RESERVE f 0.01 100", &madd("BF.MADD", 250)],
    );
    sweep(
        &mut conn,
        "BF",
        &["BF.RESERVE f 0.01 100 BLOCKED", &madd("BF.MADD", 250)],
    );
    sweep(
        &mut conn,
        "CBF",
        &["CBF.RESERVE f 0.01 100", &madd("CBF.MADD", 250)],
    );
    let cf_items = madd("CF.INSERT", 150).replacen("CF.INSERT f", "CF.INSERT f ITEMS", 1);
    sweep(&mut conn, "CF", &["CF.RESERVE f 64 EXPANSION 2", &cf_items]);
    sweep(
        &mut conn,
        "WBF",
        &["WBF.RESERVE f 0.01 200", &madd("WBF.MADD", 500)],
    );
}
