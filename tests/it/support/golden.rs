//! Replies and payloads RedisBloom gave, captured by scripts/fixtures/ into
//! core/tests/fixtures/redisbloom-2.4.20/: command sequences (`<family>.commands.json`) and
//! RDB manifests (`<family>.manifest.json`), each reply raw (RESP2 from 2.4.20 in `resp`,
//! RESP3 from 2.6.28 in `resp3`, latin-1), compared byte for byte.

use super::{RawConnection, Server, TempDir};
use serde_json::Value;
use std::path::PathBuf;

pub fn fixture_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("core/tests/fixtures/redisbloom-2.4.20")
}

/// A fixture JSON file of that directory.
pub fn load(name: &str) -> Value {
    let text = std::fs::read_to_string(fixture_dir().join(name)).unwrap();
    serde_json::from_str(&text).unwrap()
}

/// A latin-1 string of the fixtures as the bytes it stands for.
pub fn latin1(v: &Value) -> Vec<u8> {
    v.as_str()
        .unwrap()
        .chars()
        .map(|c| c as u32 as u8)
        .collect()
}

/// A raw reply with every double written one way, for a server that formats doubles its
/// own way (`REDBLOOM_SERVER`: Valkey and Redis ≥ 7.2 print the shortest form that reads
/// back, Redis 7.0 `%.17g`). Both forms read back to the same double, so comparing them
/// this way is still exact (but for the sign of a NaN, which the shortest form drops).
/// Bulk strings and RESP3 doubles that read as a double are rewritten; the rest stays.
fn doubles_as_values(raw: &[u8]) -> Vec<u8> {
    let text = String::from_utf8_lossy(raw).into_owned();
    let mut out = String::new();
    let mut lines = text.split_inclusive("\r\n");
    let canonical = |t: &str| -> Option<String> {
        let t = t.trim_end_matches("\r\n");
        let v: f64 = t
            .strip_prefix("-nan")
            .map_or_else(|| t.parse().ok(), |_| Some(f64::NAN))?;
        Some(if v.is_nan() {
            "nan".into()
        } else {
            format!("{v:?}")
        })
    };
    while let Some(line) = lines.next() {
        if line.starts_with('$') && line != "$-1\r\n" {
            let body = lines.next().unwrap_or_default();
            match canonical(body) {
                Some(v) => out.push_str(&format!("${}\r\n{v}\r\n", v.len())),
                None => {
                    out.push_str(line);
                    out.push_str(body);
                }
            }
        } else if let Some(v) = line.strip_prefix(',').and_then(canonical) {
            out.push_str(&format!(",{v}\r\n"));
        } else {
            out.push_str(line);
        }
    }
    out.into_bytes()
}

/// `got` and `want` as compared on this server: raw, or on another server than Redis 7.0
/// with doubles compared by value ([`doubles_as_values`]).
fn comparable(got: &[u8], want: &[u8]) -> (String, String) {
    let (got, want) = if std::env::var("REDBLOOM_SERVER").is_ok() {
        (doubles_as_values(got), doubles_as_values(want))
    } else {
        (got.to_vec(), want.to_vec())
    };
    (
        String::from_utf8_lossy(&got).into_owned(),
        String::from_utf8_lossy(&want).into_owned(),
    )
}

/// A record's `argv` as bytes.
pub fn argv(record: &Value) -> Vec<Vec<u8>> {
    record["argv"]
        .as_array()
        .unwrap()
        .iter()
        .map(latin1)
        .collect()
}

/// Runs a sequence file's commands in order and compares every reply with RedisBloom's
/// (`field`: `resp` or `resp3`; a null one is not compared). MEMORY and OBJECT replies are server-specific and
/// skipped; on another server than Redis 7.0 (`REDBLOOM_SERVER`) a DUMP is compared but
/// for its RDB version and CRC (the last 10 bytes and the CRLF).
pub fn run_sequence(conn: &mut RawConnection, file: &str, field: &str) {
    run_sequence_changed(conn, file, field, &[]);
}

/// A reply redbloom gives by design in place of RedisBloom's recorded one: the command
/// (its exact arguments) and the reply expected instead (both protocols).
pub type Changed<'a> = (&'a [&'a str], &'a str);

/// [`run_sequence`], but for the commands in `changed`, whose replies are compared with
/// the ones given there (docs/compat.md says why each differs).
pub fn run_sequence_changed(
    conn: &mut RawConnection,
    file: &str,
    field: &str,
    changed: &[Changed],
) {
    let exact_dump = std::env::var("REDBLOOM_SERVER").is_err();
    let mut unused: Vec<&Changed> = changed.iter().collect();
    let hex_floats = super::parses_hex_floats(conn);
    for record in load(file)["commands"].as_array().unwrap() {
        let mut argv = argv(record);
        if !hex_floats {
            // The same number in decimal, for a server whose parser has no hex floats.
            for arg in argv.iter_mut() {
                if let Some(decimal) = decimal_of_hex_integer(arg) {
                    *arg = decimal;
                }
            }
        }
        let got = conn.call_raw(&argv);
        let instead = unused.iter().position(|(args, _)| {
            args.iter()
                .map(|a| a.as_bytes())
                .eq(argv.iter().map(|a| &a[..]))
        });
        if let Some(at) = instead {
            let (_, reply) = unused.remove(at);
            assert_eq!(String::from_utf8_lossy(&got), *reply, "{field}: {argv:?}");
            continue;
        }
        if record[field].is_null() {
            // A reply recorded as null is not compared (bytes that differ by design).
            continue;
        }
        let want = latin1(&record[field]);
        let name = String::from_utf8_lossy(&argv[0]).to_ascii_uppercase();
        let shown = String::from_utf8_lossy(&argv[..argv.len().min(4)].join(&b' ')).into_owned();
        if name == "DUMP" && !exact_dump && want.starts_with(b"$") && want != b"$-1\r\n" {
            let cut = |r: &[u8]| r[..r.len().saturating_sub(12)].to_vec();
            assert_eq!(cut(&got), cut(&want), "{shown}");
            continue;
        }
        if name == "OBJECT" || name == "MEMORY" {
            continue;
        }
        let (got, want) = comparable(&got, &want);
        assert_eq!(got, want, "{field}: {shown}");
    }
    assert!(unused.is_empty(), "changed replies never met: {unused:?}");
}

/// `0x<hex digits>` written in decimal (the only hex floats the sequences send).
fn decimal_of_hex_integer(arg: &[u8]) -> Option<Vec<u8>> {
    let digits = std::str::from_utf8(arg.strip_prefix(b"0x")?).ok()?;
    let value = u64::from_str_radix(digits, 16).ok()?;
    Some(value.to_string().into_bytes())
}

/// A connection speaking RESP2 (`resp`) or RESP3 (`resp3`).
fn connect(server: &Server, field: &str) -> RawConnection {
    match field {
        "resp" => server.raw(),
        _ => RawConnection::connect_resp3(server.port).unwrap(),
    }
}

/// [`run_sequence`] on a fresh server, for a RESP2 (`resp`) or RESP3 (`resp3`) client.
pub fn sequence_on_a_fresh_server(file: &str, field: &str) {
    changed_sequence_on_a_fresh_server(file, field, &[]);
}

/// [`sequence_on_a_fresh_server`] with [`run_sequence_changed`]'s replies changed by design.
pub fn changed_sequence_on_a_fresh_server(file: &str, field: &str, changed: &[Changed]) {
    let server = Server::start();
    run_sequence_changed(&mut connect(&server, field), file, field, changed);
}

/// The keys of a manifest.
pub fn keys(m: &Value) -> &Vec<Value> {
    m["keys"].as_array().unwrap()
}

/// Runs `records` (a key's ops or queries) and compares each raw reply with RedisBloom's.
pub fn check(conn: &mut RawConnection, records: &Value, field: &str) {
    for record in records.as_array().unwrap() {
        let argv = argv(record);
        let got = conn.call_raw(&argv);
        let (got, want) = comparable(&got, &latin1(&record[field]));
        assert_eq!(
            got,
            want,
            "{field}: {}",
            String::from_utf8_lossy(&argv[..argv.len().min(4)].concat())
        );
    }
}

/// DUMP of every key of a manifest equals RedisBloom's payload (on another server than
/// Redis 7.0, all but the RDB version and CRC, the last 10 bytes); but for keys marked
/// `"dump_exact": false` (a Top-K's pointer bytes: tests/it/topk/fixtures.rs).
pub fn check_dumps(conn: &mut RawConnection, m: &Value) {
    let exact = std::env::var("REDBLOOM_SERVER").is_err();
    for key in keys(m).iter().filter(|k| k["dump_exact"] != false) {
        let name = key["key"].as_str().unwrap();
        let dump = conn.call(&["DUMP", name]).bytes();
        let want = hex::decode(key["dump_hex"].as_str().unwrap()).unwrap();
        let cut = if exact { 0 } else { 10 };
        assert_eq!(
            hex::encode(&dump[..dump.len() - cut]),
            hex::encode(&want[..want.len() - cut]),
            "DUMP {name}"
        );
    }
}

/// Every query of every key of a manifest.
pub fn check_queries(conn: &mut RawConnection, m: &Value, field: &str) {
    for key in keys(m) {
        check(conn, &key["queries"], field);
    }
}

/// A server started on a copy of the fixture RDB `file`.
pub fn load_rdb(dir: &TempDir, file: &str) -> Server {
    std::fs::copy(fixture_dir().join(file), dir.0.join(file)).unwrap();
    Server::start_in(&dir.0, &["--dbfilename", file])
}

/// An RDB file RedisBloom wrote (`<family>.rdb`) loads: its keys, every query answered and
/// every DUMP payload as the manifest (`<family>.manifest.json`) says, in RESP2 and RESP3.
pub fn rdb_loads_and_answers(family: &str) {
    let m = load(&format!("{family}.manifest.json"));
    let dir = TempDir::new(&format!("{family}-fixture"));
    let server = load_rdb(&dir, &format!("{family}.rdb"));
    let mut conn = server.raw();
    assert_eq!(conn.call(&["DBSIZE"]).int(), keys(&m).len() as i64);
    check_dumps(&mut conn, &m);
    check_queries(&mut conn, &m, "resp");
    check_dumps(&mut conn, &m);
    let mut conn3 = RawConnection::connect_resp3(server.port).unwrap();
    check_queries(&mut conn3, &m, "resp3");
}

/// The manifest's ops replayed on empty servers give RedisBloom's replies, answers and
/// DUMP payloads (RESP2 and RESP3).
pub fn replay_gives_the_same(family: &str) {
    let m = load(&format!("{family}.manifest.json"));
    for field in ["resp", "resp3"] {
        let server = Server::start();
        let mut conn = connect(&server, field);
        for key in keys(&m) {
            check(&mut conn, &key["ops"], field);
        }
        check_queries(&mut conn, &m, field);
        check_dumps(&mut conn, &m);
    }
}

/// The other direction: RedisBloom (`REDISBLOOM_MODULE`) loads the RDB redbloom writes
/// after the manifest's ops and answers as the manifest says. Skipped, with a message
/// naming `test`, without a RedisBloom build.
pub fn redisbloom_loads_ours(family: &str, test: &str) {
    let Some(reference) = super::redisbloom(test) else {
        return;
    };
    let m = load(&format!("{family}.manifest.json"));
    let dir = TempDir::new(&format!("{family}-reverse"));
    {
        let server = Server::start_in(&dir.0, &["--dbfilename", "ours.rdb"]);
        let mut conn = server.raw();
        for key in keys(&m) {
            check(&mut conn, &key["ops"], "resp");
        }
        assert_eq!(conn.call(&["SAVE"]).text(), "OK");
    }
    let server = Server::start_in_with_module(&dir.0, &reference, &["--dbfilename", "ours.rdb"]);
    let mut conn = server.raw();
    assert_eq!(conn.call(&["DBSIZE"]).int(), keys(&m).len() as i64);
    check_queries(&mut conn, &m, "resp");
    check_dumps(&mut conn, &m);
}
