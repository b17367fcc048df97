//! Reserving a large filter maps memory without touching it (issue 16): the server's RSS
//! grows by a few MiB, not by the filter's size, while used_memory and MEMORY USAGE count
//! the whole allocation; the filter then answers, dumps, copies, saves and reloads exactly.

use crate::support::{call, info_field, RawConnection, Reply, Server};

const MIB: u64 = 1 << 20;
/// Most an empty reserved filter (or a copy, or a dump header load of one) may add to the
/// server's RSS: far below the ~1 GiB each allocates.
const RSS_SLACK: u64 = 64 * MIB;

/// The server's resident set (VmRSS) in bytes.
fn rss(server: &Server) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{}/status", server.pid())).unwrap();
    let kb = status
        .lines()
        .find_map(|line| line.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().strip_suffix("kB"))
        .expect("VmRSS in /proc/<pid>/status");
    kb.trim().parse::<u64>().unwrap() * 1024
}

fn used_memory(conn: &mut RawConnection) -> u64 {
    info_field(conn, "memory", "used_memory").parse().unwrap()
}

/// Runs `command` and checks it added less than [`RSS_SLACK`] to RSS and at least
/// `allocated` bytes to used_memory.
fn assert_lazy(server: &Server, conn: &mut RawConnection, command: &str, allocated: u64) {
    let (rss_before, used_before) = (rss(server), used_memory(conn));
    assert_eq!(call(conn, command), Reply::ok(), "{command}");
    let (rss_after, used_after) = (rss(server), used_memory(conn));
    assert!(
        rss_after < rss_before + RSS_SLACK,
        "{command}: RSS grew from {rss_before} to {rss_after}"
    );
    assert!(
        used_after >= used_before + allocated,
        "{command}: used_memory grew from {used_before} to {used_after} only"
    );
}

fn info(conn: &mut RawConnection, line: &str) -> Vec<(String, Reply)> {
    let items = call(conn, line).array();
    items
        .chunks(2)
        .map(|pair| (pair[0].text(), pair[1].clone()))
        .collect()
}

fn pairs(fields: &[(&str, i64)]) -> Vec<(String, Reply)> {
    fields
        .iter()
        .map(|&(name, value)| (name.to_string(), Reply::Int(value)))
        .collect()
}

/// A BF filter's SCANDUMP, without keeping its all-zero chunks.
#[derive(Debug, PartialEq)]
struct Dump {
    header: (i64, Vec<u8>),
    /// Bytes of every data chunk together.
    data_bytes: usize,
    /// The data chunks holding a set bit, with their cursors.
    non_zero: Vec<(i64, Vec<u8>)>,
}

impl Dump {
    fn take(conn: &mut RawConnection, key: &str) -> Dump {
        let mut chunks = Vec::new();
        let mut data_bytes = 0;
        let mut cursor = 0;
        loop {
            // Taken apart rather than copied: the data chunks add up to a GiB.
            let reply = conn.call(&["BF.SCANDUMP", key, &cursor.to_string()]);
            let Reply::Array(Some(mut reply)) = reply else {
                panic!("BF.SCANDUMP replied {reply:?}");
            };
            let Some(Reply::Bulk(Some(data))) = reply.pop() else {
                panic!("BF.SCANDUMP replied no chunk");
            };
            cursor = reply[0].int();
            if cursor == 0 {
                break;
            }
            if !chunks.is_empty() {
                data_bytes += data.len();
            }
            if chunks.is_empty() || !is_zero(&data) {
                chunks.push((cursor, data));
            }
        }
        let header = chunks.remove(0);
        Dump {
            header,
            data_bytes,
            non_zero: chunks,
        }
    }

    fn set_bits(&self) -> u32 {
        let pages = self.non_zero.iter().flat_map(|(_, data)| data.chunks(PAGE));
        let bytes = pages.filter(|page| !is_zero(page)).flatten();
        bytes.map(|b| b.count_ones()).sum()
    }
}

const PAGE: usize = 4096;

/// Whether `data` is all zero bytes, page by page with memcmp (fast in a debug build).
fn is_zero(data: &[u8]) -> bool {
    static ZEROS: [u8; PAGE] = [0; PAGE];
    data.chunks(PAGE).all(|page| *page == ZEROS[..page.len()])
}

/// BF.RESERVE of 0.01 / 800,000,000: one link of this many bytes of bits ...
const BF_BYTES: i64 = 1_102_775_344;
/// ... and this BF.INFO Size (the bits and the chain's bookkeeping).
const BF_SIZE: i64 = 1_102_775_440;

#[test]
fn a_reserved_gigabyte_filter_is_not_resident_and_works() {
    let server = Server::start();
    let mut conn = server.raw();

    assert_lazy(
        &server,
        &mut conn,
        "BF.RESERVE big 0.01 800000000",
        BF_BYTES as u64,
    );
    assert!(call(&mut conn, "MEMORY USAGE big").int() >= BF_BYTES);
    let bf_info = pairs(&[
        ("Capacity", 800_000_000),
        ("Size", BF_SIZE),
        ("Number of filters", 1),
        ("Number of items inserted", 0),
        ("Expansion rate", 2),
    ]);
    assert_eq!(info(&mut conn, "BF.INFO big"), bf_info);

    // A Cuckoo filter of 2^29 buckets (1 GiB) and a counting filter of 1 GiB of counters.
    assert_lazy(&server, &mut conn, "CF.RESERVE cf 1000000000", 1 << 30);
    assert_eq!(call(&mut conn, "CF.ADD cf a"), Reply::Int(1));
    assert_eq!(call(&mut conn, "CF.EXISTS cf a"), Reply::Int(1));
    assert_eq!(call(&mut conn, "CF.EXISTS cf b"), Reply::Int(0));
    assert_lazy(
        &server,
        &mut conn,
        "CBF.RESERVE cbf 0.01 200000000",
        1_000_000_000,
    );
    assert_eq!(call(&mut conn, "CBF.ADD cbf a"), Reply::Int(1));
    assert_eq!(call(&mut conn, "CBF.EXISTS cbf a"), Reply::Int(1));
    assert_eq!(call(&mut conn, "CBF.EXISTS cbf b"), Reply::Int(0));
    assert_eq!(call(&mut conn, "DEL cf cbf"), Reply::Int(2));

    // The Bloom filter answers; setting bits makes only their pages resident.
    let rss_before = rss(&server);
    assert_eq!(
        call(&mut conn, "BF.MADD big a b c"),
        Reply::int_array(&[1, 1, 1])
    );
    assert_eq!(
        call(&mut conn, "BF.MEXISTS big a b c d"),
        Reply::int_array(&[1, 1, 1, 0])
    );
    assert!(rss(&server) < rss_before + RSS_SLACK);

    let header = conn.call(&["BF.SCANDUMP", "big", "0"]).array();
    let mut bf_info = bf_info;
    bf_info[3].1 = Reply::Int(3);

    // COPY writes only the pages that hold bits.
    let rss_before = rss(&server);
    assert_eq!(call(&mut conn, "COPY big copied"), Reply::Int(1));
    assert!(rss(&server) < rss_before + RSS_SLACK);
    assert_eq!(
        call(&mut conn, "BF.MEXISTS copied a b c d"),
        Reply::int_array(&[1, 1, 1, 0])
    );
    assert_eq!(info(&mut conn, "BF.INFO copied"), bf_info);
    assert_eq!(call(&mut conn, "DEL copied"), Reply::Int(1));

    // Saved and loaded back: the same replies. (Uncompressed: LZF over a GiB of zeros
    // would take most of this test's time.)
    assert_eq!(call(&mut conn, "CONFIG SET rdbcompression no"), Reply::ok());
    // A load keeps the buffer the server read: the whole filter becomes resident
    // (docs/benchmarks.md, docs/operations.md), unlike a reservation or a COPY.
    let rss_before = rss(&server);
    assert_eq!(call(&mut conn, "DEBUG RELOAD"), Reply::ok());
    assert!(
        rss(&server) > rss_before + BF_BYTES as u64 * 9 / 10,
        "DEBUG RELOAD of a 1 GiB filter left RSS below its size"
    );
    assert_eq!(info(&mut conn, "BF.INFO big"), bf_info);
    assert_eq!(
        call(&mut conn, "BF.MEXISTS big a b c d"),
        Reply::int_array(&[1, 1, 1, 0])
    );

    // The dump: the same header, then every byte of the bit array, zero but for the
    // 3 × 8 bits just set (8 hashes at the first link's error, 0.01 / 2).
    let dump = Dump::take(&mut conn, "big");
    assert_eq!(dump.header, (header[0].int(), header[1].bytes()));
    assert_eq!(dump.data_bytes as i64, BF_BYTES);
    assert_eq!(dump.set_bits(), 3 * 8);

    // Loaded from the header and only the chunks holding bits, the copy is as lazy and
    // the same filter.
    let rss_before = rss(&server);
    for (cursor, data) in std::iter::once(&dump.header).chain(&dump.non_zero) {
        let cursor = cursor.to_string();
        let args = [
            b"BF.LOADCHUNK".as_slice(),
            b"restored",
            cursor.as_bytes(),
            data,
        ];
        assert_eq!(conn.call(&args), Reply::ok());
    }
    assert!(rss(&server) < rss_before + RSS_SLACK);
    assert_eq!(
        call(&mut conn, "BF.MEXISTS restored a b c d"),
        Reply::int_array(&[1, 1, 1, 0])
    );
    assert_eq!(info(&mut conn, "BF.INFO restored"), bf_info);
}
