//! Replicas and AOF replay reproduce the master's filters byte for byte whatever their own
//! module configs (issue 12): writes replicate their effect — creation with every
//! parameter explicit, then the items that changed the filter — and writes from the
//! master or the AOF are not held to local limits. Also the exact commands a replica and
//! the AOF receive.

use crate::support::Rng;
use crate::support::{call, wait_for_replicas, wait_until, RawConnection, Reply, Server};

/// A value different from the default for every module config, each the most hostile
/// to replaying writes made under the defaults (non-scaling Bloom defaults, one Cuckoo
/// sub-filter, the smallest ceiling).
const OTHER_CONFIGS: &[&str] = &[
    "--bf.bf-error-rate",
    "0.001",
    "--bf.bf-initial-size",
    "1000",
    "--bf.bf-expansion-factor",
    "0",
    "--bf.cf-bucket-size",
    "4",
    "--bf.cf-initial-size",
    "4000",
    "--bf.cf-max-iterations",
    "50",
    "--bf.cf-expansion-factor",
    "2",
    "--bf.cf-max-expansions",
    "1",
    "--bf.max-filter-bytes",
    "1mb",
];

fn words(line: &str) -> Vec<String> {
    line.split(' ').map(String::from).collect()
}

/// A deterministic mix of writes over BF, CF and CBF keys: auto-creation, reservations
/// (some above a 1 MiB ceiling), scaling, no-op adds, deletes, compaction, failing
/// commands, MULTI/EXEC blocks and Lua scripts.
fn workload(rng: &mut Rng, commands: usize) -> Vec<Vec<String>> {
    let mut out: Vec<Vec<String>> = [
        "SET str x",
        "BF.RESERVE huge 0.0001 1000000",
        "CF.RESERVE cfhuge 4000000",
        "CBF.RESERVE cbfhuge 0.01 1000000",
        "BF.RESERVE scaleout 0.001 50000 EXPANSION 8",
        "BF.RESERVE fixed 0.01 20 NONSCALING",
        "CBF.RESERVE cfixed 0.02 20 NONSCALING",
        "BF.INSERT ins CAPACITY 30 ERROR 0.005 EXPANSION 0 ITEMS a b c",
        "CF.RESERVE cffull 8 BUCKETSIZE 1 EXPANSION 0",
    ]
    .iter()
    .map(|line| words(line))
    .collect();
    // Scale-out past the replica's ceiling: a second link of 400000 items.
    for batch in 0..60 {
        let mut madd = words("BF.MADD scaleout");
        madd.extend((0..1000).map(|i| format!("s{batch}-{i}")));
        out.push(madd);
    }
    let item = |rng: &mut Rng| format!("i{}", rng.range(0, 400));
    let key = |rng: &mut Rng, family: &str| format!("{family}:{}", rng.range(0, 12));
    while out.len() < commands {
        let roll = rng.range(0, 100);
        let command: Vec<String> = match roll {
            0..=9 => vec!["BF.ADD".into(), key(rng, "bf"), item(rng)],
            10..=15 => {
                let mut c = vec!["BF.MADD".into(), key(rng, "bf")];
                c.extend((0..rng.range(1, 8)).map(|_| item(rng)));
                c
            }
            16..=19 => {
                let mut c = vec!["BF.INSERT".into(), key(rng, "bf")];
                let options = [
                    "CAPACITY 50",
                    "ERROR 0.02",
                    "EXPANSION 3",
                    "NONSCALING",
                    "CAPACITY 7 NONSCALING",
                    "EXPANSION 0",
                    "",
                ];
                let chosen = options[rng.range(0, options.len() as u64) as usize];
                c.extend(
                    chosen
                        .split(' ')
                        .filter(|w| !w.is_empty())
                        .map(String::from),
                );
                c.push("ITEMS".into());
                c.extend((0..rng.range(1, 12)).map(|_| item(rng)));
                c
            }
            20..=21 => {
                let reservations = [
                    "0.01 10",
                    "0.001 500 EXPANSION 1",
                    "0.05 30 NONSCALING",
                    "0.3 5 EXPANSION 0",
                    "0.1234567 77 EXPANSION 5",
                ];
                let r = reservations[rng.range(0, reservations.len() as u64) as usize];
                let mut c = vec!["BF.RESERVE".into(), key(rng, "bf")];
                c.extend(words(r));
                c
            }
            22..=31 => vec![
                if rng.range(0, 2) == 0 {
                    "CF.ADD"
                } else {
                    "CF.ADDNX"
                }
                .into(),
                key(rng, "cf"),
                item(rng),
            ],
            32..=36 => {
                let name = if rng.range(0, 2) == 0 {
                    "CF.INSERT"
                } else {
                    "CF.INSERTNX"
                };
                let mut c = vec![name.into(), key(rng, "cf")];
                if rng.range(0, 3) == 0 {
                    c.extend(words("CAPACITY 5"));
                }
                c.push("ITEMS".into());
                c.extend((0..rng.range(1, 12)).map(|_| item(rng)));
                c
            }
            37..=38 => {
                let reservations = [
                    "16",
                    "8 BUCKETSIZE 1 EXPANSION 0",
                    "32 BUCKETSIZE 3 MAXITERATIONS 5 EXPANSION 3",
                    "64 EXPANSION 2",
                ];
                let r = reservations[rng.range(0, reservations.len() as u64) as usize];
                let mut c = vec!["CF.RESERVE".into(), key(rng, "cf")];
                c.extend(words(r));
                c
            }
            39..=46 => vec!["CF.DEL".into(), key(rng, "cf"), item(rng)],
            47..=48 => vec!["CF.COMPACT".into(), key(rng, "cf")],
            49..=56 => vec!["CBF.ADD".into(), key(rng, "cbf"), item(rng)],
            57..=60 => {
                let mut c = vec!["CBF.MADD".into(), key(rng, "cbf")];
                c.extend((0..rng.range(1, 8)).map(|_| item(rng)));
                c
            }
            61..=62 => {
                let mut c = vec!["CBF.INSERT".into(), key(rng, "cbf")];
                if rng.range(0, 2) == 0 {
                    c.extend(words("CAPACITY 9 ERROR 0.03 NONSCALING"));
                }
                c.push("ITEMS".into());
                c.extend((0..rng.range(1, 12)).map(|_| item(rng)));
                c
            }
            63 => {
                let mut c = vec!["CBF.RESERVE".into(), key(rng, "cbf")];
                c.extend(words(if rng.range(0, 2) == 0 {
                    "0.01 40 EXPANSION 2"
                } else {
                    "0.004 25 NONSCALING"
                }));
                c
            }
            64..=71 => vec!["CBF.DEL".into(), key(rng, "cbf"), item(rng)],
            72..=75 => vec!["BF.ADD".into(), "fixed".into(), item(rng)],
            76..=77 => vec!["CBF.ADD".into(), "cfixed".into(), item(rng)],
            78..=79 => vec!["CF.ADD".into(), "cffull".into(), item(rng)],
            80..=81 => {
                let mut c = words("CF.INSERT cffull ITEMS");
                c.extend((0..4).map(|_| item(rng)));
                c
            }
            82..=84 => vec!["BF.ADD".into(), "huge".into(), item(rng)],
            85 => vec!["CF.ADD".into(), "cfhuge".into(), item(rng)],
            86 => vec!["CBF.ADD".into(), "cbfhuge".into(), item(rng)],
            // Failing commands.
            87 => words("BF.ADD str x"),
            88 => words("CF.INSERT nothere NOCREATE ITEMS a"),
            89 => words("BF.RESERVE bf:0 2 100"),
            90 => words("CF.RESERVE cf:new 1"),
            91 => words("CBF.DEL nothere a"),
            // A MULTI/EXEC block and Lua scripts (replicated as a whole).
            92..=94 => {
                let (k, i) = (key(rng, "bf"), item(rng));
                out.push(words("MULTI"));
                out.push(vec!["BF.ADD".into(), k.clone(), i]);
                out.push(vec!["CF.ADD".into(), key(rng, "cf"), item(rng)]);
                out.push(vec!["CBF.DEL".into(), key(rng, "cbf"), item(rng)]);
                words("EXEC")
            }
            95..=96 => vec![
                "EVAL".into(),
                "redis.call('BF.ADD', KEYS[1], ARGV[1])".into(),
                "1".into(),
                key(rng, "bf"),
                item(rng),
            ],
            97 => vec![
                "EVAL".into(),
                "redis.call('CF.ADD', KEYS[1], ARGV[1]); \
                 return redis.pcall('CF.DEL', KEYS[1], ARGV[2])"
                    .into(),
                "1".into(),
                key(rng, "cf"),
                item(rng),
                item(rng),
            ],
            _ => vec![
                "EVAL".into(),
                "return redis.pcall('CBF.INSERT', KEYS[1], 'ITEMS', ARGV[1], ARGV[2])".into(),
                "1".into(),
                key(rng, "cbf"),
                item(rng),
                item(rng),
            ],
        };
        out.push(command);
    }
    out
}

/// Runs the commands pipelined; returns how many replies were errors (or held errors).
fn run(conn: &mut RawConnection, commands: &[Vec<String>]) -> usize {
    let mut errors = 0;
    for batch in commands.chunks(500) {
        for reply in conn.pipeline(batch) {
            let failed = match &reply {
                Reply::Error(_) => true,
                Reply::Array(Some(items)) => items.iter().any(|r| matches!(r, Reply::Error(_))),
                _ => false,
            };
            errors += usize::from(failed);
        }
    }
    errors
}

/// Every key with what can be observed of it: TYPE, DEBUG DIGEST-VALUE, the family's INFO
/// and the DUMP payload.
fn state(conn: &mut RawConnection) -> Vec<(String, Vec<Reply>)> {
    conn.sorted_keys()
        .into_iter()
        .map(|key| {
            let kind = conn.call(&["TYPE", &key]).text();
            let info = match kind.as_str() {
                "MBbloom--" | "RBblockBF" => conn.call(&["BF.INFO", &key]),
                "MBbloomCF" => conn.call(&["CF.INFO", &key]),
                "RBcountBF" => conn.call(&["CBF.INFO", &key]),
                _ => Reply::nil(),
            };
            let observed = vec![
                Reply::Simple(kind),
                conn.call(&["DEBUG", "DIGEST-VALUE", &key]),
                info,
                conn.call(&["DUMP", &key]),
            ];
            (key, observed)
        })
        .collect()
}

fn assert_same_state(master: &[(String, Vec<Reply>)], other: &[(String, Vec<Reply>)]) {
    let names = |s: &[(String, Vec<Reply>)]| s.iter().map(|(k, _)| k.clone()).collect::<Vec<_>>();
    assert_eq!(names(master), names(other), "key sets differ");
    for ((key, want), (_, got)) in master.iter().zip(other) {
        // Never print payloads of megabytes: name the key and the field.
        for (field, (w, g)) in ["TYPE", "DIGEST-VALUE", "INFO", "DUMP"]
            .iter()
            .zip(want.iter().zip(got))
        {
            if w != g {
                let short = |r: &Reply| match r {
                    Reply::Bulk(Some(b)) => crate::support::bf::digest(b),
                    other => format!("{other:?}"),
                };
                panic!("{key}: {field} differs: {} vs {}", short(w), short(g));
            }
        }
    }
}

/// What the master did is sure to exercise what the test is about.
fn assert_workload_meaningful(conn: &mut RawConnection, errors: usize) {
    assert!(errors > 100, "only {errors} failing commands");
    let filters = |conn: &mut RawConnection, command: &str, key: &str, label: &str| {
        let info = conn.call(&[command, key]).array();
        let pair = info.chunks(2).find(|pair| pair[0].text() == label);
        pair.expect(label)[1].int()
    };
    assert_eq!(filters(conn, "BF.INFO", "scaleout", "Number of filters"), 2);
    let grown = (0..12)
        .filter(|k| {
            let key = format!("cf:{k}");
            conn.call(&["EXISTS", &key]).int() == 1
                && filters(conn, "CF.INFO", &key, "Number of filters") > 1
        })
        .count();
    assert!(grown > 0, "no Cuckoo filter grew");
    assert!(filters(conn, "BF.INFO", "huge", "Size") > 1 << 20);
}

fn assert_clean_log(server: &Server) {
    let log = server.log();
    for bad in ["CRITICAL", "sending an error", "redbloom: "] {
        assert!(
            !log.contains(bad),
            "{bad:?} in the log:\n{}",
            log.lines()
                .filter(|l| l.contains(bad))
                .take(5)
                .collect::<Vec<_>>()
                .join("\n")
        );
    }
}

#[test]
fn replica_with_other_configs_holds_identical_filters() {
    let master = Server::start();
    let port = master.port.to_string();
    let mut args = vec!["--replicaof", "127.0.0.1", &port];
    args.extend_from_slice(OTHER_CONFIGS);
    let replica = Server::start_with(&args);
    let mut rconn = replica.raw();
    wait_until("replica sync", || {
        rconn
            .call(&["INFO", "replication"])
            .text()
            .contains("master_link_status:up")
    });
    assert_eq!(
        rconn
            .call(&["CONFIG", "GET", "bf.max-filter-bytes"])
            .array()[1],
        Reply::bulk("1048576")
    );
    let mut conn = master.raw();
    let commands = workload(&mut Rng(0x5eed_1234), 12_000);
    assert!(commands.len() >= 12_000);
    let errors = run(&mut conn, &commands);
    wait_for_replicas(&mut conn, 1);
    assert_workload_meaningful(&mut conn, errors);
    assert_same_state(&state(&mut conn), &state(&mut rconn));
    assert_eq!(
        conn.call(&["DEBUG", "DIGEST"]),
        rconn.call(&["DEBUG", "DIGEST"])
    );
    assert_clean_log(&replica);
}

#[test]
fn aof_replayed_under_other_configs_restores_identical_filters() {
    let mut server = Server::start_with(&[
        "--appendonly",
        "yes",
        "--aof-use-rdb-preamble",
        "no",
        "--auto-aof-rewrite-percentage",
        "0",
    ]);
    let mut conn = server.raw();
    let commands = workload(&mut Rng(0xa0f_5eed), 6_000);
    let errors = run(&mut conn, &commands);
    assert_workload_meaningful(&mut conn, errors);
    let before = state(&mut conn);
    drop(conn);
    server.restart(OTHER_CONFIGS);
    let mut conn = server.raw();
    assert_eq!(
        conn.call(&["CONFIG", "GET", "bf.cf-max-expansions"])
            .array()[1],
        Reply::bulk("1")
    );
    assert_same_state(&before, &state(&mut conn));
    assert_clean_log(&server);
}

/// The commands of the AOF's incremental file, in order (each an array of bulk strings).
pub(crate) fn aof_commands(server: &Server) -> Vec<Vec<Vec<u8>>> {
    let dir = server.dir.join("appendonlydir");
    let incr = std::fs::read_dir(&dir)
        .expect("appendonlydir")
        .map(|e| e.unwrap().path())
        .find(|p| p.to_string_lossy().ends_with(".incr.aof"))
        .expect("an incremental AOF file");
    let data = std::fs::read(incr).unwrap();
    let mut at = 0;
    let line = |at: &mut usize| {
        let end = *at + data[*at..].windows(2).position(|w| w == b"\r\n").unwrap();
        let text = String::from_utf8(data[*at..end].to_vec()).unwrap();
        *at = end + 2;
        text
    };
    let mut out = Vec::new();
    while at < data.len() {
        let count: usize = line(&mut at).strip_prefix('*').unwrap().parse().unwrap();
        let mut command = Vec::new();
        for _ in 0..count {
            let len: usize = line(&mut at).strip_prefix('$').unwrap().parse().unwrap();
            command.push(data[at..at + len].to_vec());
            at += len + 2;
        }
        out.push(command);
    }
    out
}

pub(crate) fn text(command: &[Vec<u8>]) -> String {
    command
        .iter()
        .map(|a| String::from_utf8_lossy(a).into_owned())
        .collect::<Vec<_>>()
        .join(" ")
}

/// The exact stream of one auto-creating write per family, as the AOF (fed by the same
/// propagation as the replicas) records it; a second, no-op write adds nothing.
#[test]
fn exact_replicated_commands() {
    let server = Server::start_with(&[
        "--appendonly",
        "yes",
        "--aof-use-rdb-preamble",
        "no",
        "--appendfsync",
        "always",
    ]);
    let mut conn = server.raw();
    let lines = [
        ("BF.ADD k a", Reply::Int(1)),
        ("BF.ADD k a", Reply::Int(0)),
        ("BF.MADD k a b a", Reply::int_array(&[0, 1, 0])),
        ("BF.ADD k c", Reply::Int(1)),
        ("CF.ADD c x", Reply::Int(1)),
        ("CF.ADDNX c x", Reply::Int(0)),
        ("CF.DEL c nothere", Reply::Int(0)),
        ("CF.INSERT c NOCREATE ITEMS y z", Reply::int_array(&[1, 1])),
        (
            "CF.INSERTNX c2 CAPACITY 10 ITEMS x y x",
            Reply::int_array(&[1, 1, 0]),
        ),
        ("CF.DEL c2 y", Reply::Int(1)),
        ("CF.COMPACT c2", Reply::ok()),
        (
            "CBF.INSERT n CAPACITY 3 ERROR 0.1 ITEMS p p",
            Reply::int_array(&[1, 1]),
        ),
        ("CBF.DEL n q", Reply::Int(0)),
        ("BF.RESERVE r 0.25 7 EXPANSION 3", Reply::ok()),
        (
            "CF.RESERVE r2 64 BUCKETSIZE 3 MAXITERATIONS 9 EXPANSION 3",
            Reply::ok(),
        ),
    ];
    for (line, want) in &lines {
        assert_eq!(&call(&mut conn, line), want, "{line}");
    }
    let header = call(&mut conn, "BF.RESERVE ns 0.01 10 NONSCALING");
    assert_eq!(header, Reply::ok());
    let ns_header = conn.call(&["BF.SCANDUMP", "ns", "0"]).array()[1].bytes();
    // SELECT is the server's (Redis writes it before MULTI, Valkey after).
    let got: Vec<String> = aof_commands(&server)
        .iter()
        .map(|c| text(c))
        .filter(|c| c != "SELECT 0")
        .collect();
    let mut want: Vec<String> = [
        "MULTI",
        "BF.RESERVE k 0.01 100 EXPANSION 2",
        "BF.MADD k a",
        "EXEC",
        "BF.MADD k b",
        // Every item applied to an existing filter: the command as received.
        "BF.ADD k c",
        "MULTI",
        "CF.RESERVE c 1024 BUCKETSIZE 2 MAXITERATIONS 20 EXPANSION 1",
        "CF.ADD c x",
        "EXEC",
        "CF.INSERT c NOCREATE ITEMS y z",
        "MULTI",
        "CF.RESERVE c2 10 BUCKETSIZE 2 MAXITERATIONS 20 EXPANSION 1",
        "CF.ADD c2 x",
        "CF.ADD c2 y",
        "EXEC",
        "CF.DEL c2 y",
        "CF.COMPACT c2",
        "MULTI",
        "CBF.RESERVE n 0.1 3 EXPANSION 2",
        "CBF.MADD n p p",
        "EXEC",
        "BF.RESERVE r 0.25 7 EXPANSION 3",
        "CF.RESERVE r2 64 BUCKETSIZE 3 MAXITERATIONS 9 EXPANSION 3",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    want.push(format!(
        "BF.LOADCHUNK ns 1 {}",
        String::from_utf8_lossy(&ns_header)
    ));
    assert_eq!(got, want);
}

/// Filters above the ceiling of the server that loads the AOF are restored; its own
/// clients stay held to that ceiling.
#[test]
fn loaded_writes_ignore_the_local_ceiling_clients_do_not() {
    let mut server = Server::start_with(&["--appendonly", "yes", "--aof-use-rdb-preamble", "no"]);
    let mut conn = server.raw();
    assert_eq!(
        call(&mut conn, "CF.RESERVE big 4000000 EXPANSION 2"),
        Reply::ok()
    );
    assert_eq!(
        call(&mut conn, "BF.RESERVE big2 0.0001 1000000"),
        Reply::ok()
    );
    let dumps = [conn.call(&["DUMP", "big"]), conn.call(&["DUMP", "big2"])];
    drop(conn);
    server.restart(&["--bf.max-filter-bytes", "1mb"]);
    let mut conn = server.raw();
    assert_eq!(
        [conn.call(&["DUMP", "big"]), conn.call(&["DUMP", "big2"])],
        dumps
    );
    assert_eq!(
        call(&mut conn, "BF.RESERVE big3 0.0001 1000000"),
        Reply::err("ERR filter would exceed the max-filter-bytes limit")
    );
    assert_clean_log(&server);
}

/// Writes that fail on the master after changing something (a key created, some items
/// added before a scale-out is refused) leave the replica exactly as the master, although
/// the replica's own limits would have let the command do more.
#[test]
fn failed_writes_leave_master_and_replica_alike() {
    let master = Server::start_with(&[
        "--bf.max-filter-bytes",
        "1mb",
        "--bf.cf-max-expansions",
        "1",
    ]);
    let replica = crate::support::start_replica(&master);
    let mut conn = master.raw();
    // Created, then refused: one sub-filter is already the maximum here.
    assert_eq!(
        call(&mut conn, "CF.ADD cnew x"),
        Reply::err("Maximum expansions reached")
    );
    assert_eq!(call(&mut conn, "EXISTS cnew"), Reply::Int(1));
    // A non-scaling filter created full-to-be: the first item fits, the rest do not.
    assert_eq!(
        call(&mut conn, "BF.INSERT ns CAPACITY 1 NONSCALING ITEMS a b c"),
        Reply::Array(Some(vec![
            Reply::Int(1),
            Reply::err("ERR non scaling filter is full")
        ]))
    );
    // Scale-out refused by the master's ceiling (the replica's would allow it).
    for (family, key) in [("BF", "grow"), ("CBF", "cgrow")] {
        assert_eq!(
            call(
                &mut conn,
                &format!("{family}.RESERVE {key} 0.01 20000 EXPANSION 64")
            ),
            Reply::ok()
        );
        let mut madd = vec![format!("{family}.MADD"), key.to_string()];
        madd.extend((0..20_100).map(|i| format!("g{i}")));
        let replies = conn.call(&madd).array();
        let refused = replies
            .iter()
            .filter(|r| **r == Reply::err("ERR filter would exceed the max-filter-bytes limit"))
            .count();
        assert!(refused > 50, "{family}: {refused} refused");
    }
    wait_for_replicas(&mut conn, 1);
    let mut rconn = replica.raw();
    assert_same_state(&state(&mut conn), &state(&mut rconn));
    assert_eq!(
        call(&mut rconn, "BF.INFO grow FILTERS"),
        Reply::int_array(&[1])
    );
    assert_clean_log(&replica);
}
