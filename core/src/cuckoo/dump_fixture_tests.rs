//! Replays of RedisBloom 2.4.20's reference fixtures through this core.

use super::*;
use crate::cuckoo::{CuckooHash, CuckooParams, DEFAULT_MAX_EXPANSIONS};
use serde_json::{json, Value};
use std::collections::HashMap;

const BIG: u64 = u64::MAX;

fn fixture(name: &str) -> Value {
    let path = format!(
        "{}/tests/fixtures/redisbloom-2.4.20/{name}",
        env!("CARGO_MANIFEST_DIR")
    );
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    serde_json::from_str(&text).unwrap()
}

fn arg(v: &Value) -> Vec<u8> {
    match v {
        Value::String(s) => s
            .chars()
            .map(|c| u8::try_from(u32::from(c)).expect("latin-1 argument"))
            .collect(),
        Value::Object(o) => hex::decode(o["hex"].as_str().unwrap()).unwrap(),
        other => panic!("bad argv element {other}"),
    }
}

/// Expand an item-set spec to (item bytes, exception key).
fn items(spec: &Value, sets: &Value) -> Vec<(Vec<u8>, String)> {
    let num = |k: &str, d: i64| spec.get(k).and_then(Value::as_i64).unwrap_or(d);
    if let Some(fmt) = spec.get("format").and_then(Value::as_str) {
        let step = num("step", 1);
        let mut out = Vec::new();
        let mut n = num("start", 0);
        while n < num("stop", 0) {
            let s = fmt.replace("{n}", &n.to_string());
            out.push((s.clone().into_bytes(), s));
            n += step;
        }
        out
    } else {
        let set = sets[spec["set"].as_str().unwrap()].as_array().unwrap();
        let start = num("start", 0) as usize;
        let stop = num("stop", set.len() as i64) as usize;
        set[start..stop]
            .iter()
            .map(|h| {
                let h = h.as_str().unwrap();
                (hex::decode(h).unwrap(), h.to_string())
            })
            .collect()
    }
}

/// A test-only stand-in for the Redis layer: just enough of CF.* (2.4.20 replies) to
/// replay the fixtures.
#[derive(Default)]
struct Db {
    keys: HashMap<Vec<u8>, CuckooFilter>,
}

fn err(s: &str) -> Value {
    json!({ "error": s })
}

fn option(argv: &[Vec<u8>], name: &str) -> Option<u16> {
    argv.iter()
        .position(|a| a.eq_ignore_ascii_case(name.as_bytes()))
        .map(|i| std::str::from_utf8(&argv[i + 1]).unwrap().parse().unwrap())
}

impl Db {
    fn insert_one(f: &mut CuckooFilter, item: &[u8], nx: bool) -> Result<bool, CuckooError> {
        let h = CuckooHash::new(item);
        if nx {
            f.insert_if_absent(&h, BIG)
        } else {
            f.insert(&h, BIG).map(|()| true)
        }
    }

    fn exec(&mut self, argv: &[Vec<u8>]) -> Value {
        let cmd = String::from_utf8(argv[0].to_ascii_uppercase()).unwrap();
        let key = argv[1].clone();
        let num = |s: &[u8]| -> u64 { std::str::from_utf8(s).unwrap().parse().unwrap() };
        match cmd.as_str() {
            "TYPE" => match self.keys.get(&key) {
                Some(_) => json!("MBbloomCF"),
                None => json!("none"),
            },
            "CF.RESERVE" => {
                if self.keys.contains_key(&key) {
                    return err("ERR item exists");
                }
                let p = CuckooParams {
                    capacity: num(&argv[2]),
                    bucket_size: option(argv, "BUCKETSIZE").unwrap_or(2),
                    max_iterations: option(argv, "MAXITERATIONS").unwrap_or(20),
                    expansion: option(argv, "EXPANSION").unwrap_or(1),
                };
                self.keys.insert(key, CuckooFilter::new(p, BIG).unwrap());
                json!("OK")
            }
            "CF.ADD" | "CF.ADDNX" => {
                let f = self
                    .keys
                    .entry(key)
                    .or_insert_with(|| CuckooFilter::new(CuckooParams::default(), BIG).unwrap());
                if f.num_filters() >= DEFAULT_MAX_EXPANSIONS {
                    return err("Maximum expansions reached");
                }
                match Self::insert_one(f, &argv[2], cmd.ends_with('X')) {
                    Ok(true) => json!(1),
                    Ok(false) => json!(0),
                    Err(CuckooError::NoSpace) => err("Filter is full"),
                    Err(_) => err("Memory allocation failure"),
                }
            }
            "CF.INSERT" | "CF.INSERTNX" => {
                let mut capacity = 1024;
                let mut i = 2;
                while !argv[i].eq_ignore_ascii_case(b"ITEMS") {
                    if argv[i].eq_ignore_ascii_case(b"CAPACITY") {
                        capacity = num(&argv[i + 1]);
                        i += 1;
                    }
                    i += 1;
                }
                let f = self.keys.entry(key).or_insert_with(|| {
                    CuckooFilter::new(
                        CuckooParams {
                            capacity,
                            ..Default::default()
                        },
                        BIG,
                    )
                    .unwrap()
                });
                if f.num_filters() >= DEFAULT_MAX_EXPANSIONS {
                    return err("Maximum expansions reached");
                }
                let nx = cmd.ends_with('X');
                let replies: Vec<Value> = argv[i + 1..]
                    .iter()
                    .map(|it| match Self::insert_one(f, it, nx) {
                        Ok(true) => json!(1),
                        Ok(false) => json!(0),
                        Err(_) => json!(-1),
                    })
                    .collect();
                json!(replies)
            }
            "CF.DEL" => match self.keys.get_mut(&key) {
                Some(f) => json!(u8::from(f.delete(&CuckooHash::new(&argv[2])))),
                None => err("Not found"),
            },
            "CF.COMPACT" => match self.keys.get_mut(&key) {
                Some(f) => {
                    f.compact(true);
                    json!("OK")
                }
                None => err("Cuckoo filter was not found"),
            },
            "CF.EXISTS" | "CF.MEXISTS" | "CF.COUNT" => {
                let f = self.keys.get(&key);
                let one = |it: &[u8]| -> u64 {
                    let h = CuckooHash::new(it);
                    match f {
                        None => 0,
                        Some(f) if cmd == "CF.COUNT" => f.count(&h),
                        Some(f) => u64::from(f.contains(&h)),
                    }
                };
                if cmd == "CF.MEXISTS" {
                    json!(argv[2..].iter().map(|a| one(a)).collect::<Vec<_>>())
                } else {
                    json!(one(&argv[2]))
                }
            }
            "CF.INFO" => {
                let f = &self.keys[&key];
                json!([
                    "Size",
                    f.mem_usage(),
                    "Number of buckets",
                    f.num_buckets(),
                    "Number of filters",
                    f.num_filters(),
                    "Number of items inserted",
                    f.num_items(),
                    "Number of items deleted",
                    f.num_deletes(),
                    "Bucket size",
                    f.bucket_size(),
                    "Expansion rate",
                    f.expansion(),
                    "Max iterations",
                    f.max_iterations()
                ])
            }
            "CF.DEBUG" => json!(self.keys[&key].debug_string()),
            other => panic!("unsupported command {other}"),
        }
    }

    /// Run one manifest record (literal or `each`), asserting every reply.
    fn run(&mut self, rec: &Value, sets: &Value, ctx: &str) -> usize {
        if let Some(argv) = rec.get("argv") {
            let argv: Vec<Vec<u8>> = argv.as_array().unwrap().iter().map(arg).collect();
            let got = self.exec(&argv);
            assert_eq!(got, rec["reply"], "{ctx}: {}", rec["argv"]);
            return 1;
        }
        let template = rec["each"].as_array().unwrap();
        let list = items(&rec["items"], sets);
        assert_eq!(list.len() as u64, rec["count"].as_u64().unwrap(), "{ctx}");
        for (item, name) in &list {
            let argv: Vec<Vec<u8>> = template
                .iter()
                .map(|t| if t == "{item}" { item.clone() } else { arg(t) })
                .collect();
            let want = rec["exceptions"].get(name).unwrap_or(&rec["default"]);
            assert_eq!(&self.exec(&argv), want, "{ctx}: {} {name}", template[0]);
        }
        list.len()
    }
}

fn transcript_of(f: &CuckooFilter) -> Vec<Value> {
    let mut out = Vec::new();
    let mut it = 0;
    loop {
        match scandump(f, it).unwrap() {
            ScanDump::Header(h) => {
                out.push(json!([1, hex::encode(h)]));
                it = 1;
            }
            ScanDump::Chunk(next, data) => {
                out.push(json!([next, hex::encode(data)]));
                it = next;
            }
            ScanDump::End => {
                out.push(json!([0, null]));
                return out;
            }
        }
    }
}

/// Replay, query, dump and load every CF key of one fixture group; returns the number
/// of keys checked.
fn check_group(group: &str) -> usize {
    let manifest = fixture(&format!("{group}.manifest.json"));
    let scans = fixture(&format!("{group}.scandump.json"));
    let sets = &manifest["item_sets"];
    let mut checked = 0;
    for k in manifest["keys"].as_array().unwrap() {
        if k["kind"] != "cf" {
            continue;
        }
        let name = k["key"].as_str().unwrap();
        let mut db = Db::default();
        for op in k["ops"].as_array().unwrap() {
            db.run(op, sets, &format!("{name} op"));
        }
        let mut queries = 0;
        for q in k["queries"].as_array().unwrap() {
            queries += db.run(q, sets, &format!("{name} query"));
        }
        assert!(queries > 100, "{name}");
        let f = db.keys[name.as_bytes()].clone();

        // RDB path: the fields and sub-filters RDB save writes rebuild the same filter.
        let rebuilt = CuckooFilter::from_parts(
            CuckooParts {
                num_buckets: f.num_buckets(),
                num_items: f.num_items(),
                num_deletes: f.num_deletes(),
                bucket_size: u64::from(f.bucket_size()),
                max_iterations: u64::from(f.max_iterations()),
                expansion: u64::from(f.expansion()),
            },
            f.sub_filters()
                .iter()
                .map(|s| (s.buckets(), s.data().to_vec()))
                .collect(),
        )
        .unwrap();
        assert_eq!(rebuilt, f, "{name} from_parts");

        // SCANDUMP transcript, byte for byte.
        let want = scans["keys"][name]["replies"].as_array().unwrap();
        assert_eq!(&transcript_of(&f), want, "{name} transcript");

        // LOADCHUNK the transcript into a fresh filter.
        if want.len() > 1 {
            let h = hex::decode(want[0][1].as_str().unwrap()).unwrap();
            assert_eq!(h.len(), HEADER_LEN);
            let mut g = filter_from_header(&h, BIG).unwrap();
            for r in &want[1..want.len() - 1] {
                let data = hex::decode(r[1].as_str().unwrap()).unwrap();
                load_chunk(&mut g, r[0].as_i64().unwrap(), &data).unwrap();
            }
            assert_eq!(g, f, "{name} loaded");
            let mut loaded = Db::default();
            loaded.keys.insert(name.as_bytes().to_vec(), g);
            for q in k["queries"].as_array().unwrap() {
                loaded.run(q, sets, &format!("{name} loaded query"));
            }
        } else {
            // Empty filter: SCANDUMP cannot carry it, the AOF form (header + chunks) can.
            assert_eq!(f.num_items(), 0);
            let mut g = filter_from_header(&header(&f), BIG).unwrap();
            let mut pos = 1;
            while let Some((next, data)) = chunk(&f, pos) {
                load_chunk(&mut g, next, data).unwrap();
                pos = next;
            }
            assert_eq!(g, f);
        }
        checked += 1;
    }
    checked
}

#[test]
fn cuckoo_group_matches_redisbloom() {
    // cf:default, cf:grown, cf:compacted, cf:noexp, cf:empty.
    assert_eq!(check_group("cuckoo"), 5);
}

#[test]
fn mixed_group_matches_redisbloom() {
    // cf:bin (binary items), cf:insert.
    assert_eq!(check_group("mixed"), 2);
}
