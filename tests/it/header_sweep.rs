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

/// Every RDB field of a small value of each family changed in turn (each bit of an
/// integer, a double scaled, a string's bytes flipped): RESTORE refuses it (`ERR Bad data
/// format`, no key), or the value it makes dumps back exactly the fields it was given (BF,
/// CBF, CF, WBF, CMS) and the server answers. A forged WBF generation size once overflowed
/// `WindowShape::slice_load` here.
#[test]
fn every_rdb_field_changed_is_refused_or_kept_as_read() {
    use crate::support::dump_payload::{
        decode, encode_value, learn_version, restore, seal, uncompressed_dumps, BAD_DATA_FORMAT, F,
    };
    let server = Server::start();
    let mut conn = server.raw();
    uncompressed_dumps(&mut conn);
    let cf_items = madd("CF.INSERT", 40).replacen("CF.INSERT f", "CF.INSERT f ITEMS", 1);
    let cases: [(&str, Vec<String>); 7] = [
        (
            "bf",
            vec!["BF.RESERVE f 0.01 20".into(), madd("BF.MADD", 50)],
        ),
        (
            "cbf",
            vec!["CBF.RESERVE f 0.01 20".into(), madd("CBF.MADD", 50)],
        ),
        ("cf", vec!["CF.RESERVE f 16 EXPANSION 2".into(), cf_items]),
        (
            "wbf",
            vec!["WBF.RESERVE f 0.01 20".into(), madd("WBF.MADD", 50)],
        ),
        (
            "cms",
            vec!["CMS.INITBYDIM f 8 3".into(), "CMS.INCRBY f a 3 b 5".into()],
        ),
        (
            "topk",
            vec!["TOPK.RESERVE f 3 8 2 0.9".into(), madd("TOPK.ADD", 20)],
        ),
        (
            "tdigest",
            vec![
                "TDIGEST.CREATE f COMPRESSION 10".into(),
                "TDIGEST.ADD f 1 2 3 4 5".into(),
            ],
        ),
    ];
    for (family, setup) in cases {
        for command in &setup {
            let reply = call(&mut conn, command);
            assert!(!matches!(reply, Reply::Error(_)), "{command}: {reply:?}");
        }
        let payload = conn.call(&["DUMP", "f"]).bytes();
        learn_version(&payload);
        let (id, fields) = decode(&payload);
        let mut accepted = 0;
        for i in 0..fields.len() {
            let variants: Vec<F> = match &fields[i] {
                F::U(v) => (0..64).map(|bit| F::U(v ^ (1 << bit))).collect(),
                F::D(v) => [v * 1.5, v / 2.0, f64::from_bits(v.to_bits() ^ 1)]
                    .into_iter()
                    .map(F::D)
                    .collect(),
                F::S(s) => (0..s.len().min(48))
                    .map(|at| {
                        let mut s = s.clone();
                        s[at] ^= 1;
                        F::S(s)
                    })
                    .collect(),
            };
            for variant in variants {
                let mut forged = fields.clone();
                forged[i] = variant.clone();
                let reply = restore(&mut conn, "t", &seal(&encode_value(id, &forged)));
                if reply != Reply::ok() {
                    assert_eq!(
                        reply,
                        Reply::Error(BAD_DATA_FORMAT.into()),
                        "{family} field {i}"
                    );
                    assert_eq!(conn.call(&["EXISTS", "t"]), Reply::Int(0));
                    continue;
                }
                accepted += 1;
                let (_, kept) = decode(&conn.call(&["DUMP", "t"]).bytes());
                // Top-K's loader rewrites a byte of some changed buckets (byte 20 of the
                // bucket array here) and t-digest's some changed counts (field 5 as 1): open
                // questions (issue 44's report), whose acceptance alone is checked here.
                assert!(
                    kept == forged || ["topk", "tdigest"].contains(&family),
                    "{family}: field {i} as {variant:?} restored as another value"
                );
                assert_eq!(conn.call(&["PING"]), Reply::Simple("PONG".into()));
                assert_eq!(conn.call(&["DEL", "t"]), Reply::Int(1));
            }
        }
        assert!(accepted > 0, "{family}: no change accepted");
        conn.call(&["DEL", "f"]);
    }
}
