//! Loaded digests with heavy first and last centroids, answered as RedisBloom 2.4.20
//! answers the same payload. ADD and MERGE keep weight-1 end centroids, so the
//! interpolations between the minimum and the first centroid and between the last
//! centroid and the maximum (CDF, QUANTILE and the ranks built on them) are reached only
//! by a digest loaded from an RDB file or a DUMP: these RESTORE hand-built payloads
//! (compression 5; core/src/tdigest/rdb.rs's layout) and ask every query of
//! [`loaded_edges_golden`](super::loaded_edges_golden), which
//! scripts/fixtures/redisbloom-tdigest-loaded-edges.py recorded from RedisBloom 2.4.20 itself
//! (doubles compared as numbers, bit for bit: Redis 7.0 writes them with `%.17g`, later
//! servers in their shortest form).

use super::loaded_edges_golden::{CAPACITY, COMPRESSION, LOADED};
use crate::support::dump_payload::{
    decode, encode_value, learn_version, restore, seal, uncompressed_dumps, F,
};
use crate::support::{Reply, Server};

/// A digest as RESTORE receives it, and what RedisBloom answered about it.
pub struct Loaded {
    pub name: &'static str,
    pub min: f64,
    pub max: f64,
    pub means: &'static [f64],
    pub weights: &'static [f64],
    /// (command, arguments after the key, RedisBloom's answer).
    pub queries: &'static [(&'static str, &'static [&'static str], Answer)],
}

/// A RESP2 answer: doubles as RedisBloom wrote them (an array, or TRIMMED_MEAN's one
/// double), or integers.
pub enum Answer {
    Doubles(&'static [&'static str]),
    Ints(&'static [i64]),
}

/// The payload's fields: merged centroids only, one compression recorded.
fn fields(d: &Loaded) -> Vec<F> {
    let mut fields = vec![
        F::D(COMPRESSION),
        F::D(d.min),
        F::D(d.max),
        F::U(CAPACITY),
        F::U(d.means.len() as u64),
        F::U(0),
        F::U(1),
        F::D(d.weights.iter().sum()),
        F::D(0.0),
    ];
    fields.extend(d.means.iter().map(|&m| F::D(m)));
    fields.extend(d.weights.iter().map(|&w| F::D(w)));
    fields
}

fn same_double(got: &str, want: &str) -> bool {
    match (got.parse::<f64>(), want.parse::<f64>()) {
        (Ok(a), Ok(b)) => a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan()),
        _ => false,
    }
}

/// Whether `reply` is `want`; the doubles of a reply, as text, otherwise.
fn matches(reply: &Reply, want: &Answer) -> bool {
    match want {
        Answer::Ints(ints) => matches!(reply, Reply::Array(Some(_))) && reply.ints() == *ints,
        Answer::Doubles(doubles) => {
            let texts: Vec<String> = match reply {
                Reply::Bulk(Some(_)) => vec![reply.text()],
                Reply::Array(Some(items)) => items.iter().map(Reply::text).collect(),
                _ => return false,
            };
            texts.len() == doubles.len()
                && texts.iter().zip(*doubles).all(|(g, w)| same_double(g, w))
        }
    }
}

#[test]
fn loaded_digests_with_heavy_end_centroids_answer_as_redisbloom() {
    let server = Server::start();
    let mut conn = server.raw();
    uncompressed_dumps(&mut conn);
    conn.call(&["TDIGEST.CREATE", "real", "COMPRESSION", "5"]);
    conn.call(&["TDIGEST.ADD", "real", "1", "2"]);
    let real = conn.call(&["DUMP", "real"]).bytes();
    learn_version(&real);
    let (id, _) = decode(&real);
    let mut wrong = Vec::new();
    let mut asked = 0;
    for d in LOADED {
        let payload = seal(&encode_value(id, &fields(d)));
        assert_eq!(
            restore(&mut conn, d.name, &payload),
            Reply::ok(),
            "{}",
            d.name
        );
        for (command, args, want) in d.queries {
            let mut argv = vec![*command, d.name];
            argv.extend(*args);
            let reply = conn.call(&argv);
            asked += 1;
            if !matches(&reply, want) {
                wrong.push(format!("{argv:?}: {}", reply.to_json()));
            }
        }
    }
    assert_eq!(asked, 8 * 17);
    assert!(
        wrong.is_empty(),
        "answers other than RedisBloom's:\n{}",
        wrong.join("\n")
    );
}
