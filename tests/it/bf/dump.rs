//! BF.SCANDUMP / BF.LOADCHUNK against a real redis-server: reply shapes and errors in
//! order (COMPAT §1.9, §1.10), chunking (§7.1, §7.2), round trips on the same server and
//! onto another one, hostile headers and chunks, and random cursors and data.

use crate::support::replies::err;

use crate::support::bf::{assert_all_exist, items, madd, Snapshot};
use crate::support::Rng;
use crate::support::{call, expect, loadchunks, scandump, RawConnection, Reply, Server};

const NOT_FOUND: &str = "ERR not found";
const WRONGTYPE: &str = "WRONGTYPE Operation against a key holding the wrong kind of value";
const SCANDUMP_NOT_NUMERIC: &str = "Second argument must be numeric";
const LOADCHUNK_NOT_NUMERIC: &str = "ERR Second argument must be numeric";
const BAD_DATA: &str = "ERR received bad data";
const NO_LINK: &str = "ERR invalid offset - no link found";
const TOO_BIG: &str = "ERR invalid chunk - Too big for current filter";
const MAX_CHUNK: usize = 16 * 1024 * 1024;

type Dump = Vec<(i64, Option<Vec<u8>>)>;

fn pair(next: i64, data: &[u8]) -> Reply {
    Reply::Array(Some(vec![Reply::Int(next), Reply::bulk(data)]))
}

fn loadchunk(conn: &mut RawConnection, key: &str, iter: i64, data: &[u8]) -> Reply {
    conn.call(&[
        b"BF.LOADCHUNK".as_slice(),
        key.as_bytes(),
        iter.to_string().as_bytes(),
        data,
    ])
}

fn scandump_at(conn: &mut RawConnection, key: &str, iter: i64) -> Reply {
    conn.call(&["BF.SCANDUMP", key, &iter.to_string()])
}

/// The bit arrays of all links, concatenated, from a full dump.
fn bit_arrays(dump: &Dump) -> Vec<u8> {
    dump.iter()
        .filter(|(it, _)| *it > 1)
        .flat_map(|(_, data)| data.clone().unwrap_or_default())
        .collect()
}

/// Link sizes in bytes, read from a header.
fn link_bytes(header: &[u8]) -> Vec<usize> {
    let n = u32::from_le_bytes(header[8..12].try_into().unwrap()) as usize;
    (0..n)
        .map(|i| {
            let at = 20 + 53 * i;
            u64::from_le_bytes(header[at..at + 8].try_into().unwrap()) as usize
        })
        .collect()
}

/// What BF.LOADCHUNK must answer for a chunk on a filter with these link sizes (COMPAT
/// §7.2); on success the bytes go into `model` (the concatenated bit arrays).
fn model_loadchunk(links: &[usize], model: &mut [u8], iter: i64, data: &[u8]) -> Reply {
    let len = data.len() as i64;
    if iter <= 0 || iter < len {
        return err(BAD_DATA);
    }
    let start = iter - len;
    if start < 1 {
        return err(NO_LINK);
    }
    let mut offset = (start - 1) as usize;
    let mut base = 0;
    for &bytes in links {
        if offset < bytes {
            if data.len() > bytes - offset {
                return err(TOO_BIG);
            }
            model[base + offset..base + offset + data.len()].copy_from_slice(data);
            return Reply::ok();
        }
        offset -= bytes;
        base += bytes;
    }
    err(NO_LINK)
}

/// The reply SCANDUMP must give at `iter` for a filter with this header and bit arrays.
fn model_scandump(header: &[u8], arrays: &[u8], iter: i64) -> Reply {
    if iter == 0 {
        return pair(1, header);
    }
    if iter < 0 {
        return pair(0, b"");
    }
    let mut offset = (iter - 1) as usize;
    let mut base = 0;
    for bytes in link_bytes(header) {
        if offset < bytes {
            let len = MAX_CHUNK.min(bytes - offset);
            let start = base + offset;
            return pair(iter + len as i64, &arrays[start..start + len]);
        }
        offset -= bytes;
        base += bytes;
    }
    pair(0, b"")
}

#[test]
fn scandump_replies_and_errors() {
    let server = Server::start();
    let mut conn = server.raw();
    // The key is looked up before the iterator is parsed.
    expect(&mut conn, "BF.SCANDUMP missing 0", err(NOT_FOUND));
    expect(&mut conn, "BF.SCANDUMP missing abc", err(NOT_FOUND));
    expect(&mut conn, "SET s x", Reply::ok());
    expect(&mut conn, "BF.SCANDUMP s 0", err(WRONGTYPE));
    expect(&mut conn, "BF.SCANDUMP s abc", err(WRONGTYPE));
    expect(&mut conn, "BF.RESERVE m 0.01 10", Reply::ok());
    for bad in ["abc", "1.5", "", "+1", "18446744073709551616"] {
        assert_eq!(
            conn.call(&["BF.SCANDUMP", "m", bad]),
            err(SCANDUMP_NOT_NUMERIC),
            "{bad:?}"
        );
    }
    assert_eq!(conn.last_raw, b"-Second argument must be numeric\r\n");

    // An empty filter dumps too: the header, then zeroes.
    let dump = scandump(&mut conn, "BF.SCANDUMP", "m");
    assert_eq!(dump.len(), 3);
    assert_eq!(dump[0].0, 1);
    assert_eq!(dump[0].1.as_ref().unwrap().len(), 73);
    assert_eq!(dump[1], (17, Some(vec![0; 16])));
    assert_eq!(dump[2], (0, Some(vec![])));

    // Four links of 16, 32, 72 and 160 bytes: one chunk per link, none spans two.
    madd(&mut conn, "m", &items("", 0..100));
    let dump = scandump(&mut conn, "BF.SCANDUMP", "m");
    let header = dump[0].1.clone().unwrap();
    assert_eq!(header.len(), 20 + 53 * 4);
    assert_eq!(link_bytes(&header), vec![16, 32, 72, 160]);
    let iters: Vec<i64> = dump.iter().map(|(it, _)| *it).collect();
    assert_eq!(iters, vec![1, 17, 49, 121, 281, 0]);
    let lens: Vec<usize> = dump
        .iter()
        .map(|(_, d)| d.as_ref().unwrap().len())
        .collect();
    assert_eq!(lens, vec![232, 16, 32, 72, 160, 0]);
    let arrays = bit_arrays(&dump);
    // Any iterator inside a link gives the rest of that link.
    for iter in [5, 16, 20, 48, 100, 200, 280] {
        assert_eq!(
            scandump_at(&mut conn, "m", iter),
            model_scandump(&header, &arrays, iter),
            "iterator {iter}"
        );
    }
    expect(&mut conn, "BF.SCANDUMP m 5", pair(17, &arrays[4..16]));
    // Past the end and negative: [0, ""] — an empty bulk string, not nil.
    for iter in [
        "281",
        "282",
        "100000",
        "9223372036854775807",
        "-1",
        "-9223372036854775808",
    ] {
        assert_eq!(
            conn.call(&["BF.SCANDUMP", "m", iter]),
            pair(0, b""),
            "{iter}"
        );
        assert_eq!(conn.last_raw, b"*2\r\n:0\r\n$0\r\n\r\n");
    }
    // The header reply is an integer and a bulk string.
    call(&mut conn, "BF.SCANDUMP m 0");
    assert!(conn.last_raw.starts_with(b"*2\r\n:1\r\n$232\r\n"));
}

#[test]
fn loadchunk_errors_in_order() {
    let server = Server::start();
    let mut conn = server.raw();
    expect(&mut conn, "BF.RESERVE src 0.01 10", Reply::ok());
    madd(&mut conn, "src", &items("", 0..40));
    let dump = scandump(&mut conn, "BF.SCANDUMP", "src");
    let header = dump[0].1.clone().unwrap();
    expect(&mut conn, "SET s x", Reply::ok());

    // The iterator is parsed first, before the key.
    for key in ["missing", "s", "src"] {
        for bad in ["abc", "1.5", ""] {
            assert_eq!(
                conn.call(&["BF.LOADCHUNK", key, bad, "data"]),
                err(LOADCHUNK_NOT_NUMERIC),
                "{key} {bad:?}"
            );
        }
    }
    // Missing key: only iterator 1 (a header) may create it.
    for iter in [0, 2, -1, 17] {
        assert_eq!(
            loadchunk(&mut conn, "missing", iter, &header),
            err(NOT_FOUND)
        );
    }
    for bad in [&b""[..], b"short", &header[..header.len() - 1]] {
        assert_eq!(loadchunk(&mut conn, "missing", 1, bad), err(BAD_DATA));
    }
    expect(&mut conn, "EXISTS missing", Reply::Int(0));
    // Wrong type, with a good header or a chunk.
    assert_eq!(loadchunk(&mut conn, "s", 1, &header), err(WRONGTYPE));
    assert_eq!(loadchunk(&mut conn, "s", 2, b"x"), err(WRONGTYPE));
    expect(&mut conn, "GET s", Reply::bulk("x"));

    // A header sent to an existing filter is a (bad) chunk; it does not overwrite.
    let before = Snapshot::take(&mut conn, "src");
    assert_eq!(loadchunk(&mut conn, "src", 1, &header), err(BAD_DATA));
    let mut other_header = header.clone();
    other_header[0] ^= 1;
    assert_eq!(loadchunk(&mut conn, "src", 1, &other_header), err(BAD_DATA));
    // Chunk errors (links of 16, 32 and 72 bytes: 120 bytes, positions 1..=120).
    assert_eq!(link_bytes(&header), vec![16, 32, 72]);
    for (iter, len, want) in [
        (0, 1, BAD_DATA),
        (-5, 1, BAD_DATA),
        (i64::MIN, 1, BAD_DATA),
        (4, 5, BAD_DATA),
        (4, 4, NO_LINK),
        (1, 1, NO_LINK),
        (122, 1, NO_LINK),
        (200, 8, NO_LINK),
        (i64::MAX, 8, NO_LINK),
        (18, 17, TOO_BIG),
        (20, 8, TOO_BIG),
        (122, 73, TOO_BIG),
        (50, 48, TOO_BIG),
    ] {
        assert_eq!(
            loadchunk(&mut conn, "src", iter, &vec![0xff; len]),
            err(want),
            "iterator {iter} length {len}"
        );
    }
    assert_eq!(Snapshot::take(&mut conn, "src"), before);

    // In-range chunks are accepted at any offset and in any order, empty ones too.
    let mut model = bit_arrays(&dump);
    let links = link_bytes(&header);
    for (iter, data) in [
        (121, vec![0xaa; 72]),
        (17, vec![0x01, 0x02, 0x03]),
        (49, vec![0x55; 32]),
        (5, vec![]),
        (120, vec![]),
    ] {
        let want = model_loadchunk(&links, &mut model, iter, &data);
        assert_eq!(want, Reply::ok());
        assert_eq!(loadchunk(&mut conn, "src", iter, &data), want, "{iter}");
    }
    let after = scandump(&mut conn, "BF.SCANDUMP", "src");
    assert_eq!(bit_arrays(&after), model);
    assert_eq!(after[0], dump[0], "the header does not change");
}

/// Dumps `key` on `from`, loads it as `to_key` on `to`, and checks both are identical.
fn round_trip(from: &mut RawConnection, key: &str, to: &mut RawConnection, to_key: &str) -> Dump {
    let dump = scandump(from, "BF.SCANDUMP", key);
    loadchunks(to, "BF.LOADCHUNK", to_key, &dump);
    assert_eq!(
        Snapshot::take(to, to_key),
        Snapshot::take(from, key),
        "{key}"
    );
    dump
}

#[test]
fn round_trips_on_the_same_server_and_onto_another() {
    let server = Server::start();
    let other = Server::start();
    let mut conn = server.raw();
    let mut conn2 = other.raw();
    let all = items("item-", 0..1000);
    for (key, reserve, count) in [
        ("a", "0.01 62", 500),
        ("b", "0.01 62 EXPANSION 4", 500),
        ("c", "0.001 100 NONSCALING", 100),
        ("d", "0.1 10 EXPANSION 1", 300),
        ("e", "0.01 1000", 1000),
    ] {
        expect(
            &mut conn,
            &format!("BF.RESERVE {key} {reserve}"),
            Reply::ok(),
        );
        madd(&mut conn, key, &all[..count]);
        // Into a new key while the source still exists, then onto another server.
        round_trip(&mut conn, key, &mut server.raw(), &format!("{key}-copy"));
        assert_all_exist(&mut conn, &format!("{key}-copy"), &all[..count]);
        round_trip(&mut conn, key, &mut conn2, key);
        assert_all_exist(&mut conn2, key, &all[..count]);
        // Back under the same name after DEL.
        let before = Snapshot::take(&mut conn, key);
        expect(&mut conn, &format!("DEL {key}"), Reply::Int(1));
        expect(
            &mut conn,
            &format!("BF.LOADCHUNK {key}"),
            err("ERR wrong number of arguments for 'bf.loadchunk' command"),
        );
        expect(
            &mut conn,
            &format!("BF.LOADCHUNK {key} 1"),
            err("ERR wrong number of arguments for 'bf.loadchunk' command"),
        );
        loadchunks(&mut conn, "BF.LOADCHUNK", key, &before.scandump);
        assert_eq!(Snapshot::take(&mut conn, key), before);
    }
    // A loaded filter is a normal filter: it grows and answers like the original.
    for conn in [&mut conn, &mut conn2] {
        let more = madd(conn, "a", &items("more-", 0..500));
        assert_eq!(more.len(), 500);
    }
    assert_eq!(
        Snapshot::take(&mut conn, "a"),
        Snapshot::take(&mut conn2, "a")
    );

    // Chunks are position-addressed: loading them backwards gives the same filter.
    let dump = scandump(&mut conn, "BF.SCANDUMP", "d");
    let mut reversed = vec![dump[0].clone()];
    reversed.extend(dump[1..dump.len() - 1].iter().rev().cloned());
    loadchunks(&mut conn, "BF.LOADCHUNK", "d-rev", &reversed);
    assert_eq!(
        Snapshot::take(&mut conn, "d-rev"),
        Snapshot::take(&mut conn, "d")
    );
    // Only the header: the same shape with empty bit arrays.
    assert_eq!(
        loadchunk(&mut conn, "hdr", 1, dump[0].1.as_ref().unwrap()),
        Reply::ok()
    );
    let card = call(&mut conn, "BF.CARD d");
    expect(&mut conn, "BF.CARD hdr", card);
    let empty = scandump(&mut conn, "BF.SCANDUMP", "hdr");
    assert!(bit_arrays(&empty).iter().all(|&b| b == 0));
    assert_eq!(empty[0], dump[0]);
}

/// Capacity 64Mi: one link of ~92 MB, dumped in 16 MiB chunks.
#[test]
fn round_trip_of_a_multi_chunk_filter() {
    let server = Server::start();
    let mut conn = server.raw();
    expect(&mut conn, "BF.RESERVE big 0.01 67108864", Reply::ok());
    let all = items("", 0..2000);
    madd(&mut conn, "big", &all);
    let dump = round_trip(&mut conn, "big", &mut server.raw(), "copy");
    let bytes = link_bytes(dump[0].1.as_ref().unwrap());
    assert_eq!(bytes, vec![92_507_504]);
    let lens: Vec<usize> = dump[1..]
        .iter()
        .map(|(_, d)| d.as_ref().unwrap().len())
        .collect();
    let full = bytes[0] / MAX_CHUNK;
    assert_eq!(lens.len(), full + 2);
    assert!(lens[..full].iter().all(|&l| l == MAX_CHUNK));
    assert_eq!(lens[full], bytes[0] % MAX_CHUNK);
    assert_eq!(lens[full + 1], 0);
    assert_eq!(dump[1].0, 1 + MAX_CHUNK as i64);
    assert_all_exist(&mut conn, "copy", &all);
    expect(&mut conn, "BF.EXISTS copy absent", Reply::Int(0));
}

/// test_overall's scandump_invalid.
#[test]
fn invalid_chunks_leave_the_filter_working() {
    let server = Server::start();
    let mut conn = server.raw();
    expect(&mut conn, "BF.ADD bf 1", Reply::Int(1));
    for (iter, data, want) in [
        (i64::MIN, b"1".to_vec(), BAD_DATA),
        (922337203685477588, b"1".to_vec(), NO_LINK),
        (4, vec![b'x'; 37], BAD_DATA),
        (4, b"abcd".to_vec(), NO_LINK),
    ] {
        assert_eq!(loadchunk(&mut conn, "bf", iter, &data), err(want), "{iter}");
    }
    expect(&mut conn, "BF.ADD bf 2", Reply::Int(1));
    expect(
        &mut conn,
        "BF.MEXISTS bf 1 2 3",
        Reply::int_array(&[1, 1, 0]),
    );
    expect(&mut conn, "PING", Reply::Simple("PONG".into()));
}

/// test_overall's scandump_invalid_header, and every header check of COMPAT §7.1.
#[test]
fn invalid_headers_are_refused() {
    let server = Server::start();
    let mut conn = server.raw();
    expect(&mut conn, "BF.RESERVE bf 0.01 5", Reply::ok());
    madd(&mut conn, "bf", &items("", 0..50));
    let card = call(&mut conn, "BF.CARD bf");
    let header = scandump_at(&mut conn, "bf", 0).array()[1].bytes();
    assert_eq!(link_bytes(&header).len(), 4);
    expect(&mut conn, "DEL bf", Reply::Int(1));

    let patch = |f: &dyn Fn(&mut Vec<u8>)| {
        let mut h = header.clone();
        f(&mut h);
        h
    };
    let set_u64 =
        |h: &mut Vec<u8>, at: usize, v: u64| h[at..at + 8].copy_from_slice(&v.to_le_bytes());
    let set_u32 =
        |h: &mut Vec<u8>, at: usize, v: u32| h[at..at + 4].copy_from_slice(&v.to_le_bytes());
    let set_f64 =
        |h: &mut Vec<u8>, at: usize, v: f64| h[at..at + 8].copy_from_slice(&v.to_le_bytes());
    let link0 = 20;
    let cases: Vec<(&str, Vec<u8>)> = vec![
        // the corruptions of RedisBloom's test
        ("zero 72..80", patch(&|h| h[72..80].fill(0))),
        ("options 0xff", patch(&|h| h[12..16].fill(0xff))),
        ("items 0xff", patch(&|h| h[0..4].fill(0xff))),
        (
            "items overflow",
            patch(&|h| {
                h[0..8].fill(0xff);
                h[36..44].fill(0xff);
            }),
        ),
        // huge but consistent bytes/bits: refused, never allocated
        (
            "huge link",
            patch(&|h| {
                h[27] = 0x03;
                h[35] = 0x18;
            }),
        ),
        // the rest of §7.1
        ("19 bytes", header[..19].to_vec()),
        ("empty", vec![]),
        (
            "no links",
            patch(&|h| {
                h.truncate(20);
                set_u32(h, 8, 0);
            }),
        ),
        ("one byte more", patch(&|h| h.push(0))),
        ("one byte less", header[..header.len() - 1].to_vec()),
        ("more links than sent", patch(&|h| set_u32(h, 8, 5))),
        ("options bit 16", patch(&|h| set_u32(h, 12, 5 | 16))),
        ("error 0", patch(&|h| set_f64(h, link0 + 24, 0.0))),
        ("error 1", patch(&|h| set_f64(h, link0 + 24, 1.0))),
        ("error -0.5", patch(&|h| set_f64(h, link0 + 24, -0.5))),
        ("error nan", patch(&|h| set_f64(h, link0 + 24, f64::NAN))),
        ("n2 64", patch(&|h| h[link0 + 52] = 64)),
        ("n2 8 with 128 bits", patch(&|h| h[link0 + 52] = 8)),
        (
            "bits 0",
            patch(&|h| {
                set_u64(h, link0, 0);
                set_u64(h, link0 + 8, 0);
            }),
        ),
        ("bits not bytes*8", patch(&|h| set_u64(h, link0 + 8, 120))),
        ("hashes + 1", patch(&|h| h[link0 + 40] += 1)),
        ("hashes 0", patch(&|h| set_u32(h, link0 + 40, 0))),
        ("bpe changed", patch(&|h| set_f64(h, link0 + 32, 100.0))),
        ("link items + 1", patch(&|h| h[link0 + 16] += 1)),
    ];
    for (name, bad) in &cases {
        assert_eq!(loadchunk(&mut conn, "bf", 1, bad), err(BAD_DATA), "{name}");
        expect(&mut conn, "EXISTS bf", Reply::Int(0));
    }
    // Fields that are not validated: entries, growth.
    let loose = patch(&|h| {
        set_u64(h, link0 + 44, 7);
        set_u32(h, 16, 9);
    });
    assert_eq!(loadchunk(&mut conn, "loose", 1, &loose), Reply::ok());
    expect(&mut conn, "BF.INFO loose EXPANSION", Reply::int_array(&[9]));
    // n2 > 0 with enough bits is fine (mask addressing).
    let masked = patch(&|h| h[link0 + 52] = 6);
    assert_eq!(loadchunk(&mut conn, "masked", 1, &masked), Reply::ok());
    // The untouched header loads.
    assert_eq!(loadchunk(&mut conn, "bf", 1, &header), Reply::ok());
    expect(&mut conn, "BF.CARD bf", card);
    expect(&mut conn, "PING", Reply::Simple("PONG".into()));
}

#[test]
fn random_cursors_and_chunks_are_answered_exactly() {
    let server = Server::start();
    let mut conn = server.raw();
    let mut rng = Rng(0x9e3779b97f4a7c15);

    expect(&mut conn, "BF.RESERVE r 0.01 62", Reply::ok());
    madd(&mut conn, "r", &items("", 0..500));
    let dump = scandump(&mut conn, "BF.SCANDUMP", "r");
    let header = dump[0].1.clone().unwrap();
    let mut model = bit_arrays(&dump);
    let size = model.len() as u64;
    for _ in 0..1500 {
        let iter = rng.range(0, size + 1024) as i64 - 4;
        assert_eq!(
            scandump_at(&mut conn, "r", iter),
            model_scandump(&header, &model, iter),
            "iterator {iter}"
        );
    }

    // A huge second link (expansion 30000): random cursors up to twice the size.
    expect(
        &mut conn,
        "BF.RESERVE x 0.01 10 EXPANSION 30000",
        Reply::ok(),
    );
    madd(&mut conn, "x", &items("", 0..20));
    let xdump = scandump(&mut conn, "BF.SCANDUMP", "x");
    let xheader = xdump[0].1.clone().unwrap();
    let xarrays = bit_arrays(&xdump);
    assert_eq!(link_bytes(&xheader).len(), 2);
    for _ in 0..150 {
        let iter = rng.range(0, 2 * xarrays.len() as u64) as i64;
        assert_eq!(
            scandump_at(&mut conn, "x", iter),
            model_scandump(&xheader, &xarrays, iter),
            "iterator {iter}"
        );
    }

    // Random chunks (0–4 KiB) at random positions: each answer is what COMPAT §7.2 says.
    let links = link_bytes(&header);
    let mut accepted = 0;
    for _ in 0..1500 {
        let len = rng.range(0, 4097) as usize;
        let iter = rng.range(0, size + 8192) as i64 - 16;
        let data = rng.packed_bytes(len);
        let want = model_loadchunk(&links, &mut model, iter, &data);
        accepted += usize::from(want == Reply::ok());
        assert_eq!(loadchunk(&mut conn, "r", iter, &data), want, "{iter}/{len}");
    }
    assert!(accepted > 10, "only {accepted} chunks landed");
    assert_eq!(bit_arrays(&scandump(&mut conn, "BF.SCANDUMP", "r")), model);

    // Big random data (1 KiB – 36 MiB) anywhere: refused, nothing changes.
    for _ in 0..4 {
        let len = rng.range(1024, 36 << 20) as usize;
        let iter = rng.range(0, 2 * len as u64) as i64;
        let data = rng.packed_bytes(len);
        let want = model_loadchunk(&links, &mut model, iter, &data);
        assert_ne!(want, Reply::ok());
        assert_eq!(loadchunk(&mut conn, "r", iter, &data), want, "{iter}/{len}");
    }
    // Random headers never create anything.
    for _ in 0..300 {
        let len = rng.range(0, 400) as usize;
        let data = rng.packed_bytes(len);
        assert_eq!(loadchunk(&mut conn, "fresh", 1, &data), err(BAD_DATA));
    }
    expect(&mut conn, "EXISTS fresh", Reply::Int(0));
    expect(&mut conn, "PING", Reply::Simple("PONG".into()));
    assert_eq!(bit_arrays(&scandump(&mut conn, "BF.SCANDUMP", "r")), model);
}
