//! The DUMP / RESTORE payload of a module value, field by field: decode a real payload
//! (taken with rdbcompression off), change fields, encode it again and seal it with the
//! server's RDB version and the CRC64, to feed RESTORE forged values.

use super::crc64::crc64_jones;
use super::resp::{RawConnection, Reply};

pub const RDB_TYPE_MODULE_2: u8 = 7;
pub const BF_ID: u64 = 0x3016_e5a2_89be_f804;
pub const CF_ID: u64 = 0x3016_e5a2_8982_1404;

/// One module field of an RDB value.
#[derive(Clone, Debug, PartialEq)]
pub enum F {
    /// An unsigned integer (opcode 2).
    U(u64),
    /// A double (opcode 4).
    D(f64),
    /// A string (opcode 5).
    S(Vec<u8>),
}

pub fn read_len(b: &[u8], at: &mut usize) -> u64 {
    let first = b[*at];
    *at += 1;
    let mut be = |n: usize| {
        let v = b[*at..*at + n]
            .iter()
            .fold(0u64, |v, &x| v << 8 | u64::from(x));
        *at += n;
        v
    };
    match first >> 6 {
        0 => u64::from(first & 0x3f),
        1 => u64::from(first & 0x3f) << 8 | be(1),
        _ if first == 0x80 => be(4),
        _ if first == 0x81 => be(8),
        _ => panic!("unexpected length byte {first:#x}"),
    }
}

pub fn put_len(out: &mut Vec<u8>, v: u64) {
    if v < 64 {
        out.push(v as u8);
    } else if v < 16384 {
        out.extend_from_slice(&[0x40 | (v >> 8) as u8, v as u8]);
    } else if v <= u64::from(u32::MAX) {
        out.push(0x80);
        out.extend_from_slice(&(v as u32).to_be_bytes());
    } else {
        out.push(0x81);
        out.extend_from_slice(&v.to_be_bytes());
    }
}

/// Decodes a module value's DUMP payload (taken with rdbcompression off): module id, fields.
pub fn decode(payload: &[u8]) -> (u64, Vec<F>) {
    assert_eq!(payload[0], RDB_TYPE_MODULE_2);
    let mut at = 1;
    let id = read_len(payload, &mut at);
    let mut fields = Vec::new();
    loop {
        match read_len(payload, &mut at) {
            0 => break,
            2 => fields.push(F::U(read_len(payload, &mut at))),
            4 => {
                let bits = u64::from_le_bytes(payload[at..at + 8].try_into().unwrap());
                at += 8;
                fields.push(F::D(f64::from_bits(bits)));
            }
            5 => {
                assert!(
                    payload[at] >> 6 != 3,
                    "an encoded string: turn rdbcompression off"
                );
                let len = read_len(payload, &mut at) as usize;
                fields.push(F::S(payload[at..at + len].to_vec()));
                at += len;
            }
            op => panic!("unexpected module opcode {op}"),
        }
    }
    assert_eq!(
        payload.len(),
        at + 10,
        "RDB version and CRC follow the value"
    );
    (id, fields)
}

/// The value bytes (type, module id, fields, EOF) of a module value.
pub fn encode_value(id: u64, fields: &[F]) -> Vec<u8> {
    let mut out = vec![RDB_TYPE_MODULE_2];
    put_len(&mut out, id);
    for field in fields {
        match field {
            F::U(v) => {
                out.push(2);
                put_len(&mut out, *v);
            }
            F::D(v) => {
                out.push(4);
                out.extend_from_slice(&v.to_bits().to_le_bytes());
            }
            F::S(s) => {
                out.push(5);
                put_len(&mut out, s.len() as u64);
                out.extend_from_slice(s);
            }
        }
    }
    out.push(0);
    out
}

/// The RDB version of the server's DUMP payloads (10 for Redis 7.0, 11 for Valkey 8).
pub static RDB_VERSION: std::sync::OnceLock<[u8; 2]> = std::sync::OnceLock::new();

/// Takes the RDB version from a real DUMP payload (its last 10 bytes: version, CRC).
pub fn learn_version(payload: &[u8]) {
    let at = payload.len() - 10;
    let version = [payload[at], payload[at + 1]];
    assert_eq!(*RDB_VERSION.get_or_init(|| version), version);
}

/// A complete payload: the value, the RDB version, and the CRC-64 of both.
pub fn seal(value: &[u8]) -> Vec<u8> {
    let mut out = value.to_vec();
    out.extend_from_slice(RDB_VERSION.get().expect("learn_version first"));
    let crc = crc64_jones(&out);
    out.extend_from_slice(&crc.to_le_bytes());
    out
}

pub fn restore(conn: &mut RawConnection, key: &str, payload: &[u8]) -> Reply {
    conn.call(&[b"RESTORE".as_slice(), key.as_bytes(), b"0", payload])
}

/// The reply to a RESTORE payload the module's loader refuses.
pub const BAD_DATA_FORMAT: &str = "ERR Bad data format";

/// Every forged value (`what`, fields) of the module type `id` is refused by RESTORE with
/// [`BAD_DATA_FORMAT`], and so is the `genuine` value under another encoding version (the
/// id's low bits), each leaving the server up and the key unmade.
pub fn forgeries_are_refused(
    conn: &mut RawConnection,
    id: u64,
    genuine: &[F],
    forged: &[(&str, Vec<F>)],
) {
    for (what, fields) in forged {
        let reply = restore(conn, "forged", &seal(&encode_value(id, fields)));
        assert_eq!(reply, Reply::Error(BAD_DATA_FORMAT.into()), "{what}");
        alive_without(conn, "forged", what);
    }
    let reply = restore(conn, "forged", &seal(&encode_value(id | 1, genuine)));
    assert!(matches!(reply, Reply::Error(_)), "encoding 1: {reply:?}");
    alive_without(conn, "forged", "encoding 1");
}

/// Turns rdbcompression off, so DUMP payloads can be decoded and compared field by field.
pub fn uncompressed_dumps(conn: &mut RawConnection) {
    assert_eq!(
        conn.call(&["CONFIG", "SET", "rdbcompression", "no"]),
        Reply::ok()
    );
}

/// After a refused RESTORE or creation: the server still answers and `key` was not made.
pub fn alive_without(conn: &mut RawConnection, key: &str, what: &str) {
    assert_eq!(conn.call(&["PING"]), Reply::Simple("PONG".into()), "{what}");
    assert_eq!(conn.call(&["EXISTS", key]).int(), 0, "{what}");
}
