//! Known answers of decays below 1: fixed command sequences on Top-Ks of several k, width,
//! depth and decay, whose TOPK.LIST WITHCOUNT, TOPK.COUNT and DUMP bytes are pinned.
//! RedisBloom's replies cannot pin these (it draws with `rand()`, and its fixtures use decay
//! 1 where a draw decides nothing), and replicas and AOF replays only compare redbloom with
//! itself; these literals change when the decay chance, the generator or its start state
//! does. (The generator against SplitMix64's published outputs, and the decay rate against
//! `decay^count`, are unit tests of the core: `topk::decay_tests`.) The literals were
//! recorded from this implementation after those unit tests passed.

use crate::support::dump_payload::{decode, uncompressed_dumps};
use crate::support::{RawConnection, Reply, Server};

/// One Top-K: its TOPK.RESERVE arguments, the rounds of writes, what it answers then.
struct Case {
    /// k, width, depth, decay.
    reserve: [&'static str; 4],
    rounds: usize,
    list: &'static [(&'static str, i64)],
    counts: [i64; 8],
    /// The DUMP payload before its RDB version and CRC (those differ between servers).
    dump_hex: &'static str,
}

/// The items TOPK.COUNT is asked about.
const COUNTED: [&str; 8] = ["h0", "h1", "h2", "h3", "i0", "i5", "i12", "absent"];

/// Round `r`: ten TOPK.ADD items out of 13, then TOPK.INCRBY of a heavy item and a light one.
fn write_round(conn: &mut RawConnection, key: &str, r: usize) {
    let mut add = vec!["TOPK.ADD".to_string(), key.to_string()];
    add.extend((0..10).map(|j| format!("i{}", (r * 7 + j * 3) % 13)));
    assert!(matches!(conn.call(&add), Reply::Array(Some(_))), "{add:?}");
    let incrby = [
        "TOPK.INCRBY".to_string(),
        key.to_string(),
        format!("h{}", r % 4),
        (r * 37 % 50 + 1).to_string(),
        format!("i{}", r % 13),
        "2".to_string(),
    ];
    assert!(matches!(conn.call(&incrby), Reply::Array(Some(_))));
}

fn list_with_count(conn: &mut RawConnection, key: &str) -> Vec<(String, i64)> {
    let reply = conn.call(&["TOPK.LIST", key, "WITHCOUNT"]).array();
    reply
        .chunks(2)
        .map(|pair| (pair[0].text(), pair[1].int()))
        .collect()
}

const CASES: [Case; 4] = [
    Case {
        reserve: ["3", "4", "2", "0.5"],
        rounds: 30,
        list: &[("h1", 248), ("h2", 133), ("h3", 92)],
        counts: [0, 248, 133, 92, 30, 0, 0, 0],
        dump_hex: concat!(
            "07814e8a4af9360f100002030204020204000000000000e03f05404038c87fe11800000055f22c69",
            "7e000000de89929ef80000006b01c4ec1d00000055f22c6985000000de89929ef70000005183bb27",
            "1e000000c97b3d6e5c000000054048c97b3d6e02000000988db74c104083b15c0000000000000055",
            "f22c690200000000000000000000008500000000000000de89929e020000000000000000000000f8",
            "0000000000000005036833000503683200050368310000",
        ),
    },
    Case {
        reserve: ["5", "8", "3", "0.9"],
        rounds: 40,
        list: &[
            ("h0", 370),
            ("h1", 290),
            ("h3", 228),
            ("h2", 160),
            ("i0", 31),
        ],
        counts: [370, 290, 160, 228, 31, 0, 0, 0],
        dump_hex: concat!(
            "07814e8a4af9360f100002050208020304cdccccccccccec3f0540c05183bb271f00000055f22c69",
            "a0000000de89929e2101000000000000000000005094eaa101000000c97b3d6ee00000003f869f1a",
            "6e010000a946d559010000003f869f1a720100005094eaa1010000006de6c1e31900000038373326",
            "1600000055f22c69a0000000de89929e210100005183bb2717000000c97b3d6ee40000003f869f1a",
            "7101000038c87fe1180000005183bb271200000055f22c699d0000000000000000000000657daba3",
            "02000000c97b3d6edb000000de89929e220100000540785183bb27020000004d77d56a7a3730df1f",
            "00000000000000c97b3d6e020000000000000000000000e40000000000000055f22c690200000000",
            "00000000000000a0000000000000003f869f1a0200000000000000000000007201000000000000de",
            "89929e02000000000000000000000022010000000000000503693000050368330005036832000503",
            "683000050368310000",
        ),
    },
    Case {
        reserve: ["4", "3", "4", "0.75"],
        rounds: 25,
        list: &[("h1", 198), ("h2", 120), ("h3", 41), ("i5", 4)],
        counts: [0, 198, 120, 41, 0, 0, 0, 0],
        dump_hex: concat!(
            "07814e8a4af9360f100002040203020404000000000000e83f05406055f22c6978000000c97b3d6e",
            "24000000de89929ec6000000c97b3d6e28000000de89929ec3000000657daba302000000de89929e",
            "c40000005094eaa10100000055f22c6978000000de89929ec3000000c97b3d6e2900000055f22c69",
            "780000000540602d66c4ed0200000023e8ace083e321b8040000000000000055f22c690200000000",
            "000000000000007800000000000000c97b3d6e0200000000000000000000002900000000000000de",
            "89929e020000000000000000000000c6000000000000000503693500050368320005036833000503",
            "68310000",
        ),
    },
    Case {
        reserve: ["2", "16", "1", "0.99"],
        rounds: 50,
        list: &[("h0", 446), ("h1", 338)],
        counts: [446, 338, 168, 287, 2, 0, 0, 0],
        dump_hex: concat!(
            "07814e8a4af9360f100002020210020104ae47e17a14aeef3f0540805183bb270200000000000000",
            "00000000de89929e5201000000000000000000005b2540a2010000006de6c1e32e00000000000000",
            "00000000657daba32c000000000000000000000055f22c69a8000000383733262f00000000000000",
            "000000005094eaa12e000000c97b3d6e1f0100003f869f1abe010000a946d559010000000530de89",
            "929e020000002340cc8c891754fc52010000000000003f869f1a020000000000000000000000be01",
            "0000000000000503683100050368300000",
        ),
    },
];

/// What the Top-K of `case` answers after its writes: LIST WITHCOUNT, COUNT, the DUMP value.
fn answers(
    conn: &mut RawConnection,
    key: &str,
    case: &Case,
) -> (Vec<(String, i64)>, Vec<i64>, String) {
    let mut reserve = vec!["TOPK.RESERVE", key];
    reserve.extend(case.reserve);
    assert_eq!(conn.call(&reserve), Reply::ok(), "{reserve:?}");
    for r in 0..case.rounds {
        write_round(conn, key, r);
    }
    let list = list_with_count(conn, key);
    let mut count = vec!["TOPK.COUNT", key];
    count.extend(COUNTED);
    let counts = conn.call(&count).ints();
    let dump = conn.call(&["DUMP", key]).bytes();
    decode(&dump);
    (list, counts, hex::encode(&dump[..dump.len() - 10]))
}

#[test]
fn decays_below_one_give_the_known_answers() {
    let server = Server::start();
    let mut conn = server.raw();
    uncompressed_dumps(&mut conn);
    let got: Vec<_> = (0..CASES.len())
        .map(|i| answers(&mut conn, &format!("topk{i}"), &CASES[i]))
        .collect();
    for (case, (list, counts, dump)) in CASES.iter().zip(&got) {
        let what = format!("TOPK.RESERVE {}", case.reserve.join(" "));
        println!("{what}\nlist {list:?}\ncounts {counts:?}\ndump {dump}");
    }
    for (case, (list, counts, dump)) in CASES.iter().zip(got) {
        let what = format!("TOPK.RESERVE {}", case.reserve.join(" "));
        let want: Vec<(String, i64)> = case.list.iter().map(|&(s, c)| (s.to_string(), c)).collect();
        assert_eq!(list, want, "{what}: TOPK.LIST WITHCOUNT");
        assert_eq!(counts, case.counts, "{what}: TOPK.COUNT {COUNTED:?}");
        assert_eq!(dump, case.dump_hex, "{what}: DUMP");
    }
}
