//! Every header field of small static filters changed in turn, end to end: each bit of
//! each byte of the SF.SCANDUMP header (its length taken from the reply, so the sweep
//! follows the encoding), loaded with SF.LOADCHUNK and the genuine chunks; each RDB field
//! of the DUMP payload, with RESTORE. A changed field is refused, or (LOADCHUNK) leaves a
//! filter that never completes: never one that answers. Filters of 1 and 2 items matter:
//! a change of their segment count keeps their data length.

use super::build;
use crate::support::dump_payload::{
    decode, encode_value, learn_version, restore, seal, uncompressed_dumps, BAD_DATA_FORMAT, F,
};
use crate::support::replies::ok;
use crate::support::{scandump, RawConnection, Reply, Server};

/// Items and error rate: fingerprints of 7, 3 and 2 bits, whose packing into words
/// leaves the data length unchanged by more changes of the shape.
const FILTERS: [(usize, &str); 6] = [
    (1, "0.01"),
    (2, "0.01"),
    (3, "0.01"),
    (2, "0.2"),
    (3, "0.2"),
    (3, "0.4"),
];

fn loadchunk(conn: &mut RawConnection, key: &str, iter: i64, data: &[u8]) -> Reply {
    conn.call(&[
        b"SF.LOADCHUNK".as_slice(),
        key.as_bytes(),
        iter.to_string().as_bytes(),
        data,
    ])
}

#[test]
fn every_scandump_header_bit_flipped_is_refused_by_loadchunk() {
    let server = Server::start();
    let mut conn = server.raw();
    for (n, rate) in FILTERS {
        assert_eq!(build(&mut conn, "s", rate, "i", n), ok());
        let dump = scandump(&mut conn, "SF.SCANDUMP", "s");
        let header = dump[0].1.clone().unwrap();
        let mut accepted = 0;
        for at in 0..header.len() {
            for bit in 0..8 {
                let mut h = header.clone();
                h[at] ^= 1 << bit;
                if loadchunk(&mut conn, "t", 1, &h) != ok() {
                    assert_eq!(conn.call(&["EXISTS", "t"]), Reply::Int(0));
                    continue;
                }
                accepted += 1;
                for (iter, data) in &dump[1..] {
                    match data {
                        Some(data) if *iter != 0 => loadchunk(&mut conn, "t", *iter, data),
                        _ => continue,
                    };
                }
                // Refused chunks or not, the filter must not answer.
                let exists = conn.call(&["SF.EXISTS", "t", "i0"]);
                assert!(
                    matches!(exists, Reply::Error(_)),
                    "{n} items at {rate}: header byte {at} bit {bit} loaded: SF.EXISTS {exists:?}"
                );
                assert_eq!(conn.call(&["DEL", "t"]), Reply::Int(1));
            }
        }
        // Bits the header alone cannot check (seed, counts, checksum) reach the chunks.
        assert!(accepted > 0, "{n} items");
        assert_eq!(conn.call(&["DEL", "s"]), Reply::Int(1));
    }
}

#[test]
fn every_rdb_field_changed_is_refused_by_restore() {
    let server = Server::start();
    let mut conn = server.raw();
    uncompressed_dumps(&mut conn);
    for (n, rate) in FILTERS {
        assert_eq!(build(&mut conn, "s", rate, "i", n), ok());
        let payload = conn.call(&["DUMP", "s"]).bytes();
        learn_version(&payload);
        let (id, fields) = decode(&payload);
        assert_eq!(
            restore(&mut conn, "copy", &seal(&encode_value(id, &fields))),
            ok()
        );
        assert_eq!(conn.call(&["DUMP", "copy"]), conn.call(&["DUMP", "s"]));
        for i in 0..fields.len() {
            let variants: Vec<F> = match &fields[i] {
                F::U(v) => (0..64).map(|bit| F::U(v ^ (1 << bit))).collect(),
                F::D(v) => [v * 1.5, v / 2.0, f64::from_bits(v.to_bits() ^ 1)]
                    .into_iter()
                    .map(F::D)
                    .collect(),
                F::S(s) => (0..s.len())
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
                let reply = restore(&mut conn, "forged", &seal(&encode_value(id, &forged)));
                if reply == ok() {
                    // Only a pending count that passes its check may load: incomplete.
                    let exists = conn.call(&["SF.EXISTS", "forged", "i0"]);
                    assert!(
                        matches!(exists, Reply::Error(_)),
                        "{n} items at {rate}: field {i} as {variant:?} restored, SF.EXISTS {exists:?}"
                    );
                    conn.call(&["DEL", "forged"]);
                    continue;
                }
                assert_eq!(reply, Reply::Error(BAD_DATA_FORMAT.into()), "field {i}");
                assert_eq!(conn.call(&["EXISTS", "forged"]), Reply::Int(0));
            }
        }
        conn.call(&["DEL", "s", "copy"]);
    }
}
