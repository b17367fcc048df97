#!/usr/bin/env python3
"""Differential fuzzing of TOPK.* (not in CI): the same random commands, valid and invalid
(every TOPK command, wrong arities, edge numbers, WITHCOUNT's spellings, wrong-type keys),
sent to a reference server (RedisBloom) and to redbloom.

Adds decay at random (RedisBloom draws with rand(), redbloom with the generator held in the
value), so after every TOPK write on a key both servers are given the same value again:
the DUMP of one is RESTOREd into the other, the direction chosen at random (so RedisBloom
loads redbloom's payloads as often as the reverse). Every read (QUERY, COUNT, LIST, INFO)
and every error must then be byte for byte equal. Write replies that differ are counted
apart when they are explained:
  random  a valid TOPK.ADD / TOPK.INCRBY whose expelled items differ (the draws differ);
  incrby  TOPK.INCRBY with a bad increment: RedisBloom announces an array and sends one
          error in it (read here up to that error), redbloom sends the error alone.
Anything else is a difference.

Items hold no NUL, CR or LF and are never empty: RedisBloom cuts items at a NUL, breaks the
protocol on CR LF in RESP2, and crashes on TOPK.LIST of an empty item after a reload
(docs/differences.md). Dimensions stay small: RedisBloom aborts on what it cannot allocate.

usage: diff-fuzz-topk.py <reference port> <redbloom port> <protocol 2|3> <seed> <commands>
(RedisBloom 2.4.20 for RESP2, 2.6.x for RESP3, each loaded in its own redis-server).
"""
import os
import random
import sys
from collections import Counter

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from difffuzz import Conn, first_line  # noqa: E402

pref, ours, proto, seed, n = (int(x) for x in sys.argv[1:6])
rng = random.Random(seed)
a, b = Conn(pref, proto), Conn(ours, proto)
for c in (a, b):
    c.call(["CONFIG", "SET", "rdbcompression", "no"])
keys = ["k%d" % i for i in range(4)] + ["str"]
items = ["a", "b", "c", "item:1", "item:2", "x" * 40, "\xe9\xff", "with space"] + \
        ["i%d" % i for i in range(30)]


def num():
    return rng.choice(["0", "1", "2", "3", "7", "100", "99999", "100000", "100001", "-1", "x",
                       "1.5", "", "4294967295", "9223372036854775807", "+5", "010", " 1",
                       str(rng.randint(0, 300))])


def dim():
    return rng.choice(["0", "1", "2", "3", "5", "8", "-3", "x", "1.5", "4294967296", "",
                       str(rng.randint(1, 40))])


def decay():
    return rng.choice(["0", "1", "0.5", "0.9", "0.925", "1.0000001", "-0.1", "abc", "inf",
                       "nan", "1e-300", "%.4f" % rng.uniform(0.01, 1)])


def withcount():
    return rng.choice(["WITHCOUNT", "withcount", "WiThCoUnT", "with", "W", "", "withcounts",
                       "count", "x"])


def cmd():
    c = rng.randrange(12)
    k = rng.choice(keys)
    if c == 0:
        args = [dim()] if rng.random() < 0.4 else [dim(), dim(), dim(), decay()]
        if rng.random() < 0.05:
            args = args[:rng.randrange(len(args) + 1)] + ["extra"] * rng.randrange(3)
        return ["TOPK.RESERVE", k] + args
    if c in (1, 2):
        return ["TOPK.ADD", k] + [rng.choice(items) for _ in range(rng.randint(0, 6))]
    if c in (3, 4):
        out = ["TOPK.INCRBY", k]
        for _ in range(rng.randint(0, 4)):
            good = rng.random() < 0.85
            out += [rng.choice(items), str(rng.randint(0, 200)) if good else num()]
        if rng.random() < 0.1:
            out.append("dangling")
        return out
    if c in (5, 6):
        return ["TOPK.QUERY", k] + [rng.choice(items) for _ in range(rng.randint(0, 5))]
    if c == 7:
        return ["TOPK.COUNT", k] + [rng.choice(items) for _ in range(rng.randint(0, 5))]
    if c == 8:
        return ["TOPK.LIST", k] + ([withcount()] if rng.random() < 0.6 else []) + \
            (["x"] if rng.random() < 0.05 else [])
    if c == 9:
        return ["TOPK.INFO", k] + (["x"] if rng.random() < 0.1 else [])
    if c == 10:
        return rng.choice([["DEL", k], ["SET", "str", "v"], ["TYPE", k], ["EXISTS", k]])
    return ["TOPK.LIST", k, "WITHCOUNT"]


def enc(argv):
    return [a.encode("latin-1") if isinstance(a, str) else a for a in argv]


def read_reply(conn, argv):
    """The raw reply; for RedisBloom's broken TOPK.INCRBY, up to its error element."""
    if argv[0].upper() != b"TOPK.INCRBY":
        return conn.call(argv), False
    return conn.call_cut_at_error(argv)


def error_line(reply):
    at = reply.rfind(b"\r\n-")
    return reply[at + 2:] if at >= 0 else None


def is_topk(conn, key):
    return conn.call(["TYPE", key]) == b"+TopK-TYPE\r\n"


counts = {"same": 0, "random": 0, "incrby": 0, "synced_to_ours": 0, "synced_to_reference": 0}
bad, kinds = 0, Counter()
a.call(["FLUSHALL"])
b.call(["FLUSHALL"])
for i in range(n):
    argv = cmd()
    ra, broken = read_reply(a, enc(argv))
    rb = b.call(enc(argv))
    name = argv[0].upper()
    writes = name in ("TOPK.ADD", "TOPK.INCRBY", "TOPK.RESERVE")
    if ra == rb:
        counts["same"] += 1
    elif broken and name == "TOPK.INCRBY" and rb == error_line(ra):
        counts["incrby"] += 1
    elif (name in ("TOPK.ADD", "TOPK.INCRBY") and ra.startswith(b"*") and rb.startswith(b"*")
          and ra.split(b"\r\n")[0] == rb.split(b"\r\n")[0]):
        counts["random"] += 1
    else:
        bad += 1
        kind = (name, first_line(ra), first_line(rb))
        kinds[kind] += 1
        if kinds[kind] <= 3:
            print("DIFF", argv, ra[:200], rb[:200])
    if writes and len(argv) > 1 and is_topk(a, argv[1]):
        key = argv[1]
        src, dst, which = (a, b, "synced_to_ours") if rng.random() < 0.5 else \
            (b, a, "synced_to_reference")
        dump = src.call(["DUMP", key])
        payload = dump[dump.index(b"\r\n") + 2:-2]
        got = dst.call([b"RESTORE", key.encode(), b"0", payload, b"REPLACE"])
        if got != b"+OK\r\n":
            bad += 1
            print("RESTORE failed", which, key, got)
        counts[which] += 1
print("seed", seed, "proto", proto, ":", n, "commands,", bad, "differences;",
      ", ".join("%s %d" % kv for kv in counts.items()))
for (command, theirs, mine), count in kinds.most_common():
    print(f"  {count:6}  {command}: reference {theirs!r} / redbloom {mine!r}")
sys.exit(1 if bad else 0)
