//! Transcripts pinned as literals: steps of a command (space-separated; an argument
//! `hex:…` is those bytes) and its reply written flat — `+X` as X, `-X` as !X, integers
//! and bulk strings as their text, nil as `nil`, arrays as `[a b …]`, a DUMP as the hex
//! of its payload (scripts/fixtures/ writes them so from RedisBloom's replies).
//!
//! On another server than Redis 7.0 (`REDBLOOM_SERVER`: Valkey and Redis ≥ 7.2 print the
//! shortest double that reads back, Redis 7.0 `%.17g`) each word that reads as a double
//! is compared by value (exact still, but for a NaN's sign), and a DUMP but for its RDB
//! version and CRC (the last 10 bytes).

use super::{RawConnection, Reply};

/// A step's arguments as bytes.
pub fn argv(line: &str) -> Vec<Vec<u8>> {
    line.split_whitespace()
        .map(|a| match a.strip_prefix("hex:") {
            Some(h) => hex::decode(h).expect("hex argument"),
            None => a.as_bytes().to_vec(),
        })
        .collect()
}

/// A reply written flat (see the module doc).
pub fn flat(reply: &Reply) -> String {
    match reply {
        Reply::Simple(s) => s.clone(),
        Reply::Error(e) => format!("!{e}"),
        Reply::Int(n) => n.to_string(),
        Reply::Bulk(None) | Reply::Array(None) => "nil".into(),
        Reply::Bulk(Some(b)) => String::from_utf8_lossy(b).into_owned(),
        Reply::Array(Some(items)) => {
            let items: Vec<String> = items.iter().map(flat).collect();
            format!("[{}]", items.join(" "))
        }
    }
}

fn exact_server() -> bool {
    std::env::var("REDBLOOM_SERVER").is_err()
}

/// `text` with every word that reads as a double written one way (off Redis 7.0).
fn comparable(text: &str) -> String {
    if exact_server() {
        return text.to_string();
    }
    text.split(' ')
        .map(|word| {
            let (open, rest) = word.split_at(word.len() - word.trim_start_matches('[').len());
            let core = rest.trim_end_matches(']');
            let close = &rest[core.len()..];
            let value = if core.trim_start_matches('-') == "nan" {
                Some(f64::NAN)
            } else {
                core.parse::<f64>().ok()
            };
            match value {
                Some(v) if v.is_nan() => format!("{open}nan{close}"),
                Some(v) => format!("{open}{v:?}{close}"),
                None => word.to_string(),
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// Runs one step and checks its reply; `what` names the transcript in a failure.
#[track_caller]
pub fn check_step(conn: &mut RawConnection, what: &str, (line, want): (&str, &str)) {
    let reply = conn.call(&argv(line));
    if line.starts_with("DUMP ") {
        let got = hex::encode(reply.bytes());
        if exact_server() {
            assert_eq!(got, want, "{what}: {line}");
        } else {
            assert_eq!(
                got[..got.len() - 20],
                want[..want.len() - 20],
                "{what}: {line}"
            );
        }
        return;
    }
    assert_eq!(
        comparable(&flat(&reply)),
        comparable(want),
        "{what}: {line}"
    );
}

/// Runs every step in order, checking each reply.
#[track_caller]
pub fn check_steps(conn: &mut RawConnection, what: &str, steps: &[(&str, &str)]) {
    for &step in steps {
        check_step(conn, what, step);
    }
}

/// Runs commands that must not answer an error.
#[track_caller]
pub fn run_ok(conn: &mut RawConnection, lines: &[String]) {
    for line in lines {
        let reply = conn.call(&argv(line));
        assert!(!matches!(reply, Reply::Error(_)), "{line}: {reply:?}");
    }
}
