//! Every literal error of `src/errors.rs` is asserted somewhere in these tests (issue 23: a
//! changed text no test sees goes unnoticed; issue 37: every family's, CMS's allocation
//! failure included), no error text is written anywhere else in the module, and the
//! replies no other test produced (the configs' and load-time arguments' errors among them).

use crate::support::{call, Reply, Server, TempDir};
use std::path::Path;

/// Errors no command can produce on purpose, and why.
const UNREACHABLE: &[(&str, &str)] = &[
    (
        "COULD_NOT_STORE",
        "the server refused a value for an empty key opened for writing",
    ),
    ("INTERNAL_ERROR", "a handler panicked (a bug)"),
    (
        "CF_MERGE_HUGE",
        "a CF.MERGE of a 4 GiB sub-filter (the core's unit test a_sub_filter_of_4_gib_is_refused)",
    ),
    (
        "SF_TOO_MANY_ITEMS",
        "more than 2^31 distinct items in one SF.BUILD (no server takes that many arguments)",
    ),
    (
        "SF_BUILD_FAILED",
        "64 seeds in a row failed to peel (the core's tests build every size without it)",
    ),
];

/// (name, text) of every `pub const NAME: &str = "text";` of src/errors.rs.
fn error_strings() -> Vec<(String, String)> {
    let source = include_str!("../../src/errors.rs");
    let mut out = Vec::new();
    for (i, _) in source.match_indices("pub const ") {
        let rest = &source[i + "pub const ".len()..];
        let name = &rest[..rest.find(':').unwrap()];
        let open = rest.find('"').unwrap();
        let close = open + 1 + rest[open + 1..].find('"').unwrap();
        assert!(!rest[open + 1..close].contains('\\'), "{name}: an escape");
        out.push((name.to_string(), rest[open + 1..close].to_string()));
    }
    out
}

/// The text of every file under `dir` whose name ends in `suffix`.
fn test_sources(dir: &Path, suffix: &str, out: &mut String) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            test_sources(&path, suffix, out);
        } else if path.to_string_lossy().ends_with(suffix) {
            out.push_str(&std::fs::read_to_string(&path).unwrap());
        }
    }
}

#[test]
fn every_error_string_is_asserted_by_a_test() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut tests = String::new();
    test_sources(&root.join("tests/it"), ".rs", &mut tests);
    // The golden replies the tests compare with, byte for byte (RESP, JSON-escaped).
    let mut golden = String::new();
    test_sources(
        &root.join("core/tests/fixtures"),
        ".commands.json",
        &mut golden,
    );
    let errors = error_strings();
    assert!(errors.len() >= 49, "{} errors read", errors.len());
    let unasserted: Vec<&String> = errors
        .iter()
        .filter(|(name, text)| {
            !tests.contains(&format!("\"{text}\""))
                && !golden.contains(&format!("\"-{text}\\r\\n\""))
                && !UNREACHABLE.iter().any(|(n, _)| n == name)
        })
        .map(|(name, _)| name)
        .collect();
    assert!(unasserted.is_empty(), "no test asserts {unasserted:?}");
    for (name, _) in UNREACHABLE {
        assert!(errors.iter().any(|(n, _)| n == name), "{name} is gone");
    }
}

/// CF's creation error, reachable through the configs: a default capacity of 4 in buckets
/// of 4 (one bucket), which RedisBloom refuses to create, as redbloom does.
#[test]
fn cf_could_not_create_filter() {
    let server = Server::start();
    let mut conn = server.raw();
    assert_eq!(
        call(&mut conn, "CONFIG SET bf.cf-initial-size 4"),
        Reply::ok()
    );
    assert_eq!(
        call(&mut conn, "CONFIG SET bf.cf-bucket-size 4"),
        Reply::ok()
    );
    assert_eq!(
        call(&mut conn, "CF.ADD k a"),
        Reply::err("ERR Could not create filter")
    );
    assert_eq!(call(&mut conn, "EXISTS k"), Reply::Int(0));
}

/// `ERR bad time`: WBF.AT only comes from the master or the AOF, so the reply is seen in
/// the log line of a write the source applied and this server could not.
#[test]
fn wbf_at_with_a_bad_time_in_the_aof_is_logged() {
    let mut server = Server::start_with(&["--appendonly", "yes", "--aof-use-rdb-preamble", "no"]);
    assert_eq!(call(&mut server.raw(), "SET other 1"), Reply::ok());
    server.stop(false);
    let dir = server.dir.join("appendonlydir");
    let incr = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.to_string_lossy().ends_with(".incr.aof"))
        .unwrap();
    let mut aof = std::fs::read(&incr).unwrap();
    aof.extend_from_slice(b"*5\r\n$6\r\nWBF.AT\r\n$1\r\nk\r\n$2\r\n-5\r\n$3\r\nADD\r\n$1\r\nx\r\n");
    std::fs::write(&incr, aof).unwrap();
    server.restart(&[]);
    assert_eq!(call(&mut server.raw(), "EXISTS k"), Reply::Int(0));
    let log = server.log();
    let error = "ERR bad time";
    let line = format!("redbloom: WBF.AT k from the master or the AOF failed here ({error})");
    assert!(log.contains(&line), "{log}");
}

/// The module's code (tests left out: from `#[cfg(test)]` on) with a string literal as
/// the argument of `Str(`, `String(` or `Err(`: an error text written outside
/// src/errors.rs, which the coverage test above would not see. `src/api/` (the raw layer's
/// module-load failures on servers without an API) is left out.
fn literal_errors(dir: &Path, out: &mut Vec<String>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.to_string_lossy().to_string();
        if path.is_dir() {
            if !name.ends_with("/api") {
                literal_errors(&path, out);
            }
            continue;
        }
        if !name.ends_with(".rs") || name.ends_with("/errors.rs") || name.ends_with("tests.rs") {
            continue;
        }
        let text = std::fs::read_to_string(&path).unwrap();
        let code = &text[..text.find("#[cfg(test)]").unwrap_or(text.len())];
        for call in ["Str(", "String(", "Err("] {
            for (at, _) in code.match_indices(call) {
                let after = code[at + call.len()..].trim_start();
                if after.starts_with('"') {
                    let line = code[..at].lines().count();
                    out.push(format!("{name}:{line}"));
                }
            }
        }
    }
}

#[test]
fn no_error_text_is_written_outside_errors_rs() {
    let mut found = Vec::new();
    literal_errors(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("src"),
        &mut found,
    );
    assert!(found.is_empty(), "literal error texts at {found:?}");
}

/// CONFIG SET of a bad default error rate: the server's own error around the module's text.
#[test]
fn config_set_errors_carry_the_module_s_text() {
    let server = Server::start();
    let mut conn = server.raw();
    for (value, text) in [
        ("abc", "Invalid value for `bf-error-rate`"),
        (
            "1.5",
            "Value for `bf-error-rate` must be in the range (0.000000, 1.000000)",
        ),
        (
            "0",
            "Value for `bf-error-rate` must be in the range (0.000000, 1.000000)",
        ),
    ] {
        let reply = conn.call(&["CONFIG", "SET", "bf.bf-error-rate", value]);
        assert!(reply.error().contains(text), "{value}: {reply:?}");
    }
    assert_eq!(
        call(&mut conn, "CONFIG GET bf.bf-error-rate").array()[1],
        Reply::bulk("0.01")
    );
}

/// The log of a server that refused to load the module with `args`.
fn refused_load(args: &[&str]) -> String {
    let dir = TempDir::new("loadargs");
    let port = crate::support::server::free_port().to_string();
    let status = std::process::Command::new(crate::support::server_binary())
        .args(["--port", &port, "--bind", "127.0.0.1", "--save", ""])
        .arg("--dir")
        .arg(&dir.0)
        .args(["--logfile", "server.log", "--loadmodule"])
        .arg(crate::support::module_path())
        .args(args)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .expect("run the server");
    assert!(!status.success(), "the server started with {args:?}");
    std::fs::read_to_string(dir.0.join("server.log")).expect("server log")
}

/// Each bad load-time argument stops the server, its error in the log.
#[test]
fn bad_load_arguments_are_named_in_the_log() {
    for (args, text) in [
        (&["ERROR_RATE"][..], "Invalid number of arguments passed"),
        (&["ERROR_RATE", "x"], "Invalid argument for 'ERROR_RATE'"),
        (&["ERROR_RATE", "0"], "ERROR_RATE must be > 0"),
        (&["bf-error-rate", "1"], "ERROR_RATE must be < 1"),
        (
            &["INITIAL_SIZE", "many"],
            "Invalid argument for 'INITIAL_SIZE'",
        ),
        (&["INITIAL_SIZE", "0"], "INITIAL_SIZE must be > 0"),
        (
            &["CF_MAX_EXPANSIONS", "y"],
            "Invalid argument for 'CF_MAX_EXPANSIONS'",
        ),
        (
            &["cf-max-expansions", "0"],
            "CF_MAX_EXPANSIONS must be an integer >= 1",
        ),
    ] {
        let log = refused_load(args);
        assert!(log.contains(text), "{args:?}: {log}");
    }
}
