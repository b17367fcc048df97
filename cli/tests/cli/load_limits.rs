//! `redbloom load` at each server setting it honours, on both sides of the boundary: the
//! server's own adds (CF.ADD, BF.ADD one item at a time into a filter reserved alike) find
//! the first item they refuse; `load` of the items before it is byte for byte that
//! filter, and `load` of one more item refuses that very item (exit 1, no key written).

use crate::common::{ok, redbloom, url, write_items};
use crate::support::{RawConnection, Reply, Server, TempDir};

/// `item:0 .. item:{n-1}`.
fn items(n: usize) -> Vec<String> {
    (0..n).map(|i| format!("item:{i}")).collect()
}

/// Reserves `reserve` (its key is argument 1), adds `items` one by one with `add`, and
/// returns the 1-based place of the first item refused and the error, or `None`.
fn first_refused(
    conn: &mut RawConnection,
    reserve: &[&str],
    add: &str,
    items: &[String],
) -> Option<(usize, String)> {
    assert_eq!(conn.call(reserve), Reply::ok(), "{reserve:?}");
    let key = reserve[1];
    let adds: Vec<Vec<String>> = items
        .iter()
        .map(|i| vec![add.to_string(), key.to_string(), i.clone()])
        .collect();
    let replies = conn.pipeline(&adds);
    replies
        .iter()
        .enumerate()
        .find_map(|(at, reply)| match reply {
            Reply::Error(e) => Some((at + 1, e.clone())),
            _ => None,
        })
}

/// The boundary of one setting: the server refuses item `k` of `list` (and adds every item
/// before it); `load` of `list[..k-1]` equals the reference, `load` of `list[..k]` refuses
/// item `k` with exit 1 and leaves no key.
fn load_stops_where_the_server_does(
    server: &Server,
    reference_reserve: &[&str],
    add: &str,
    load_options: &[&str],
    list: &[String],
    refusal: &str,
) -> usize {
    let mut conn = server.raw();
    let u = url(server);
    let (k, error) = first_refused(&mut conn, reference_reserve, add, list)
        .unwrap_or_else(|| panic!("{add}: the server refused none of {} items", list.len()));
    assert_eq!(error, refusal, "{add}");
    // The reference again, of the items before the refused one only (a server's later
    // adds may still find room, as a Cuckoo filter's can).
    assert_eq!(conn.call(&["DEL", reference_reserve[1]]), Reply::Int(1));
    assert_eq!(
        first_refused(&mut conn, reference_reserve, add, &list[..k - 1]),
        None
    );
    let dir = TempDir::new("load-limits");
    let before = dir.0.join("before.txt");
    write_items(&before, list[..k - 1].iter().cloned());
    let through = dir.0.join("through.txt");
    write_items(&through, list[..k].iter().cloned());

    let mut args = vec!["load", &u, "loaded"];
    args.extend(load_options);
    args.extend(["--file", before.to_str().unwrap()]);
    ok(&args);
    let reference = reference_reserve[1];
    assert!(
        conn.call(&["DUMP", "loaded"]).bytes() == conn.call(&["DUMP", reference]).bytes(),
        "{load_options:?}: the load of the {} items the server took differs from its adds",
        k - 1
    );
    assert_eq!(conn.call(&["DEL", "loaded"]), Reply::Int(1));

    let mut args = vec!["load", &u, "loaded"];
    args.extend(load_options);
    args.extend(["--file", through.to_str().unwrap()]);
    let run = redbloom(&args);
    assert_eq!(run.code, Some(1), "{load_options:?}: {}", run.stderr);
    let prefix = format!("redbloom: item {k} of the input: the filter refuses it (");
    assert!(
        run.stderr.starts_with(&prefix) && run.stderr.lines().count() == 1,
        "{load_options:?}: the server refuses item {k}; load said {}",
        run.stderr
    );
    assert_eq!(conn.call(&["EXISTS", "loaded"]), Reply::Int(0));
    conn.call(&["DEL", reference]);
    k
}

/// `cf-max-expansions 2`: 1,200 items into capacity 1,000 — CF.ADD refuses an item once
/// the filter has two sub-filters; `load` refuses the same one.
#[test]
fn cuckoo_load_stops_at_cf_max_expansions_where_cf_add_does() {
    let server = Server::start();
    let mut conn = server.raw();
    assert_eq!(
        conn.call(&["CONFIG", "SET", "bf.cf-max-expansions", "2"]),
        Reply::ok()
    );
    let k = load_stops_where_the_server_does(
        &server,
        &["CF.RESERVE", "ref", "1000"],
        "CF.ADD",
        &["--type", "cf", "--capacity", "1000"],
        &items(1200),
        "Maximum expansions reached",
    );
    // With these items, past 1,000 into the second sub-filter (the list gave 757).
    assert_eq!(k, 758);
}

/// `bf.max-filter-bytes` at its least (1 MiB): the link that would pass it is refused by
/// BF.ADD / CF.ADD and by `load` at the same item, for Bloom and Cuckoo filters (expansion
/// 4, so the third link is the one that does not fit).
#[test]
fn loads_stop_at_max_filter_bytes_where_the_server_does() {
    let server = Server::start();
    let mut conn = server.raw();
    assert_eq!(
        conn.call(&["CONFIG", "SET", "bf.max-filter-bytes", "1048576"]),
        Reply::ok()
    );
    let too_large = conn
        .call(&["BF.RESERVE", "probe", "0.01", "10000000"])
        .error();
    load_stops_where_the_server_does(
        &server,
        &["BF.RESERVE", "ref", "0.000001", "30000", "EXPANSION", "4"],
        "BF.ADD",
        &[
            "--error-rate",
            "0.000001",
            "--capacity",
            "30000",
            "--expansion",
            "4",
        ],
        &items(200_000),
        &too_large,
    );
    let too_large = conn.call(&["CF.RESERVE", "probe", "10000000"]).error();
    load_stops_where_the_server_does(
        &server,
        &["CF.RESERVE", "ref", "50000", "EXPANSION", "4"],
        "CF.ADD",
        &["--type", "cf", "--capacity", "50000", "--expansion", "4"],
        &items(300_000),
        &too_large,
    );
}

/// A non-scaling filter (`--expansion 0`, and `bf-expansion-factor 0` for new filters)
/// refuses the first item past its capacity, as BF.ADD does.
#[test]
fn non_scaling_loads_stop_where_bf_add_does() {
    let server = Server::start();
    let mut conn = server.raw();
    let full = "ERR non scaling filter is full";
    load_stops_where_the_server_does(
        &server,
        &["BF.RESERVE", "ref", "0.01", "1000", "EXPANSION", "0"],
        "BF.ADD",
        &[
            "--error-rate",
            "0.01",
            "--capacity",
            "1000",
            "--expansion",
            "0",
        ],
        &items(1500),
        full,
    );
    assert_eq!(
        conn.call(&["CONFIG", "SET", "bf.bf-expansion-factor", "0"]),
        Reply::ok()
    );
    load_stops_where_the_server_does(
        &server,
        &["BF.RESERVE", "ref", "0.01", "1000"],
        "BF.ADD",
        &["--error-rate", "0.01", "--capacity", "1000"],
        &items(1500),
        full,
    );
}
