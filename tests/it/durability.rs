//! "Never loses an acknowledged item": a writer adds distinct items and records every
//! acknowledged one while the server is SIGKILLed from another thread; after a restart every
//! acknowledged item is there — with the AOF fsynced on every write, and with an RDB taken by
//! SAVE (items acknowledged before SAVE was sent).

use crate::support::resp::encode;
use crate::support::{call, Reply, Server};
use std::io::{BufRead, BufReader, Write};
use std::net::TcpStream;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// Commands the writer sends, each acknowledged by an integer reply (1 for a new item).
const WRITES: [&str; 3] = ["BF.ADD", "CF.ADD", "CBF.ADD"];
/// The key each command of `WRITES` writes to.
const KEYS: [&str; 3] = ["bf", "cf", "cbf"];
/// Commands sent per round trip (pipelined), so fsync-per-write stays quick.
const BATCH: usize = 20;
/// The writer stops here if no kill came first.
const MAX_ITEMS: usize = 100_000;

/// Acknowledged items, in order: (command index in `WRITES`, item number, reply was 1).
type Acked = Arc<Mutex<Vec<(usize, usize, bool)>>>;

/// Writes `item-N` with every command of `WRITES` until the connection dies; each item
/// whose reply arrived is recorded. CF.ADD and CBF.ADD must answer 1; BF.ADD 1, or 0 for
/// a false positive (the item is reported present either way).
fn writer(port: u16, acked: Acked, progress: Arc<AtomicUsize>) {
    let stream = TcpStream::connect(("127.0.0.1", port)).expect("connect");
    stream
        .set_read_timeout(Some(Duration::from_secs(30)))
        .unwrap();
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let mut stream = stream;
    let mut next = 0;
    while next < MAX_ITEMS {
        let batch: Vec<(usize, usize)> = (next..next + BATCH)
            .flat_map(|n| (0..WRITES.len()).map(move |c| (c, n)))
            .collect();
        let mut out = Vec::new();
        for &(c, n) in &batch {
            let key = KEYS[c];
            out.extend(encode(&[WRITES[c], key, &format!("item-{n}")]));
        }
        if stream.write_all(&out).is_err() {
            return;
        }
        for (c, n) in batch {
            let mut line = String::new();
            match reader.read_line(&mut line) {
                Ok(0) | Err(_) => return,
                Ok(_) => {}
            }
            if !line.ends_with("\r\n") {
                return; // cut mid-reply: not acknowledged
            }
            let new = line == ":1\r\n";
            assert!(new || (c == 0 && line == ":0\r\n"), "{c} {n}: {line:?}");
            acked.lock().unwrap().push((c, n, new));
        }
        next += BATCH;
        progress.store(next, Ordering::SeqCst);
    }
}

/// A number of items in [from, from + spread), different on every run.
fn random_count(from: usize, spread: usize) -> usize {
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .subsec_nanos();
    from + nanos as usize % spread
}

/// Every item of `acked` is present (checked in batches with BF.MEXISTS / CF.MEXISTS).
fn assert_all_present(server: &Server, acked: &[(usize, usize, bool)], what: &str) {
    let mut conn = server.raw();
    for (c, command) in ["BF.MEXISTS", "CF.MEXISTS", "CBF.MEXISTS"]
        .into_iter()
        .enumerate()
    {
        let key = KEYS[c];
        let items: Vec<String> = acked
            .iter()
            .filter(|(cmd, _, _)| *cmd == c)
            .map(|(_, n, _)| format!("item-{n}"))
            .collect();
        for chunk in items.chunks(500) {
            let mut argv = vec![command, key];
            argv.extend(chunk.iter().map(String::as_str));
            let found = conn.call(&argv).ints();
            let missing: Vec<&String> = chunk
                .iter()
                .zip(&found)
                .filter(|(_, f)| **f != 1)
                .map(|(i, _)| i)
                .collect();
            assert!(missing.is_empty(), "{what}: {key} lost {missing:?}");
        }
        // The counts cover every add that was acknowledged as new.
        let new = acked
            .iter()
            .filter(|(cmd, _, new)| *cmd == c && *new)
            .count();
        let count = match c {
            0 => conn.call(&["BF.CARD", key]).int(),
            1 => conn.call(&["CF.INFO", key]).array()[7].int(),
            _ => conn.call(&["CBF.CARD", key]).int(),
        };
        assert!(count >= new as i64, "{what}: {key} count {count} < {new}");
    }
}

/// Runs the writer, SIGKILLs the server once `items` items were written and `before_kill`
/// returned (while the writer goes on), and returns what was acknowledged and the mark
/// `before_kill` returned.
fn write_then_kill(
    server: &Server,
    items: usize,
    before_kill: impl FnOnce(&Acked) -> usize,
) -> (Vec<(usize, usize, bool)>, usize) {
    let acked: Acked = Arc::new(Mutex::new(Vec::new()));
    let progress = Arc::new(AtomicUsize::new(0));
    let port = server.port;
    let handle = {
        let (acked, progress) = (acked.clone(), progress.clone());
        std::thread::spawn(move || writer(port, acked, progress))
    };
    crate::support::wait_until("the writer to progress", || {
        progress.load(Ordering::SeqCst) >= items
    });
    let mark = before_kill(&acked);
    Server::kill_pid(server.pid());
    handle.join().expect("writer");
    let acked = acked.lock().unwrap().clone();
    assert!(!acked.is_empty());
    assert!(
        acked.len() < MAX_ITEMS * WRITES.len(),
        "the kill came after the last write"
    );
    (acked, mark)
}

/// A scaling Bloom filter, a scaling counting Bloom filter, and a Cuckoo filter that grows
/// geometrically (the default
/// expansion 1 would reach the max-expansions limit within MAX_ITEMS).
fn create_filters(server: &Server) {
    let mut conn = server.raw();
    assert_eq!(call(&mut conn, "BF.RESERVE bf 0.001 1000"), Reply::ok());
    assert_eq!(
        call(&mut conn, "CF.RESERVE cf 1000 EXPANSION 2"),
        Reply::ok()
    );
    assert_eq!(call(&mut conn, "CBF.RESERVE cbf 0.001 1000"), Reply::ok());
}

#[test]
fn acknowledged_items_survive_sigkill_with_appendfsync_always() {
    let args = ["--appendonly", "yes", "--appendfsync", "always"];
    let mut server = Server::start_with(&args);
    create_filters(&server);
    let (acked, _) = write_then_kill(&server, random_count(1000, 3000), |_| 0);
    eprintln!("AOF: {} acknowledged", acked.len());
    server.restart_after_kill(&[]);
    assert_all_present(&server, &acked, "AOF");
    // The restarted server keeps working on the same filters.
    let mut conn = server.raw();
    assert_eq!(call(&mut conn, "BF.ADD bf after-restart"), Reply::Int(1));
    assert_eq!(call(&mut conn, "CF.ADD cf after-restart"), Reply::Int(1));
    assert_eq!(call(&mut conn, "CBF.ADD cbf after-restart"), Reply::Int(1));
    // And a second kill right after an AOF rewrite loses nothing either.
    assert_eq!(
        call(&mut conn, "BGREWRITEAOF"),
        Reply::Simple("Background append only file rewriting started".into())
    );
    crate::support::wait_for_aof_rewrite(&mut conn);
    let (more, _) = write_then_kill(&server, random_count(500, 1000), |_| 0);
    server.restart_after_kill(&[]);
    assert_all_present(&server, &acked, "AOF after rewrite (first round)");
    assert_all_present(&server, &more, "AOF after rewrite (second round)");
}

#[test]
fn items_acknowledged_before_save_survive_sigkill() {
    let mut server = Server::start();
    create_filters(&server);
    let (acked, mark) = write_then_kill(&server, random_count(1000, 2000), |acked| {
        // Everything acknowledged before SAVE is sent was executed before it.
        let mark = acked.lock().unwrap().len();
        let mut conn = server.raw();
        assert_eq!(conn.call(&["SAVE"]), Reply::ok());
        // Let more writes land after the snapshot; they may be lost.
        let now = acked.lock().unwrap().len();
        crate::support::wait_until("writes after SAVE", || {
            acked.lock().unwrap().len() > now + 100
        });
        mark
    });
    assert!(mark > 0 && mark < acked.len(), "{mark} of {}", acked.len());
    eprintln!("RDB: {} acknowledged, {mark} before SAVE", acked.len());
    server.restart_after_kill(&[]);
    assert_all_present(&server, &acked[..mark], "RDB");
    let mut conn = server.raw();
    assert_eq!(
        call(&mut conn, "DEBUG RELOAD"),
        Reply::ok(),
        "the loaded filters save and load again"
    );
    assert_all_present(&server, &acked[..mark], "RDB after DEBUG RELOAD");
}
