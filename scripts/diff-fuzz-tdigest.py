#!/usr/bin/env python3
"""Differential fuzzing of TDIGEST.* (not in CI): the same random commands, valid and
invalid (every TDIGEST command, wrong arities and keywords, edge numbers, random doubles
with repeats, MERGE with COMPRESSION/OVERRIDE and keys named twice, DUMP, RESTORE of the
other side's payload, wrong-type keys), sent to a reference server (RedisBloom) and to
redbloom; every raw reply must be equal, doubles included (bit for bit, as printed).
Compressions stay below 10^5 or above 3.8·10^17: in between RedisBloom tries to allocate
6 × compression centroids and aborts the server (or overflows its `int` capacity).

usage: diff-fuzz-tdigest.py <reference port> <redbloom port> <protocol 2|3> <seed> <commands>
(RedisBloom 2.4.20 for RESP2, 2.6.x for RESP3, each loaded in its own redis-server).
"""
import importlib.util
import os
import random
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
spec = importlib.util.spec_from_file_location(
    "fixtures", os.path.join(HERE, "fixtures", "redisbloom-tdigest.py"))
fixtures = importlib.util.module_from_spec(spec)
spec.loader.exec_module(fixtures)
Conn = fixtures.Conn

pref, ours, proto, seed, n = (int(x) for x in sys.argv[1:6])
rng = random.Random(seed)
ref, red = Conn(pref, proto), Conn(ours, proto)
keys = ["d%d" % i for i in range(5)] + ["str"]
pool = ["%.17g" % rng.gauss(0, 100) for _ in range(30)] + ["0", "-0", "1", "1", "2", "7", "7"]


def value():
    r = rng.random()
    if r < 0.55:
        return rng.choice(pool)
    if r < 0.85:
        return "%.17g" % rng.uniform(-1e6, 1e6)
    return rng.choice(["1e308", "-1e308", "5e-324", "1.7976931348623157e308", "inf", "-inf",
                       "nan", "x", "", " 1", "0x1p3", "1e309", "+3", "010", str(rng.randint(-50, 50))])


def fraction():
    return rng.choice(["0", "1", "0.5", "0.25", "0.75", "0.1", "0.9", "0.99", "0.001", "-0.1",
                       "1.0000001", "x", "nan", "inf", "%.6f" % rng.random(), "%.17g" % rng.random()])


def compression():
    return rng.choice(["1", "2", "5", "10", "20", "50", "100", "200", "0", "-3", "x", "1.5",
                       "9223372036854775807", "400000000000000000", str(rng.randint(1, 500))])


def rank():
    return rng.choice(["0", "1", "2", "3", "10", "100", "1000", "-1", "x", "1.5",
                       "9223372036854775807", str(rng.randint(0, 3000))])


def cmd():
    c = rng.randrange(20)
    k = rng.choice(keys)
    if c == 0:
        tail = rng.choice([[], [], ["COMPRESSION", compression()], ["compression", compression()],
                           ["COMP", "10"], ["COMPRESSION"], [compression(), "COMPRESSION"]])
        return ["TDIGEST.CREATE", k] + tail
    if c in (1, 2, 3, 4):
        return ["TDIGEST.ADD", k] + [value() for _ in range(rng.choice([0, 1, 5, 30, 200]))]
    if c == 5:
        return ["TDIGEST.RESET", k] + (["x"] if rng.random() < 0.1 else [])
    if c == 6:
        nk = rng.randint(0, 3)
        srcs = [rng.choice(keys) for _ in range(max(0, nk + rng.choice([0, 0, 0, 1, -1])))]
        out = ["TDIGEST.MERGE", k, rng.choice([str(nk), str(nk), str(nk), "x", "-1", "0"])] + srcs
        for extra in rng.sample([["COMPRESSION", compression()], ["OVERRIDE"], ["FOO"], ["COMPRESSION"]],
                                rng.randint(0, 2)):
            out += extra
        return out
    if c in (7, 8):
        return ["TDIGEST.QUANTILE", k] + [fraction() for _ in range(rng.randint(0, 8))]
    if c == 9:
        return ["TDIGEST.CDF", k] + [value() for _ in range(rng.randint(0, 6))]
    if c == 10:
        return [rng.choice(["TDIGEST.RANK", "TDIGEST.REVRANK"]), k] + [value() for _ in range(rng.randint(0, 6))]
    if c == 11:
        return [rng.choice(["TDIGEST.BYRANK", "TDIGEST.BYREVRANK"]), k] + [rank() for _ in range(rng.randint(0, 6))]
    if c == 12:
        return ["TDIGEST.TRIMMED_MEAN", k] + [fraction() for _ in range(rng.choice([2, 2, 2, 1, 3]))]
    if c == 13:
        return [rng.choice(["TDIGEST.MIN", "TDIGEST.MAX"]), k] + (["x"] if rng.random() < 0.1 else [])
    if c in (14, 15):
        return ["TDIGEST.INFO", k] + (["x"] if rng.random() < 0.05 else [])
    if c == 16:
        return ["DUMP", k]
    if c == 17:
        return rng.choice([["DEL", k], ["SET", "str", "v"], ["TYPE", k], ["EXISTS", k]])
    return ["TDIGEST.QUANTILE", k, fraction()]


bad = restores = 0
ref.call(["FLUSHALL"])
red.call(["FLUSHALL"])
for i in range(n):
    argv = cmd()
    ra, rb = ref.call(argv), red.call(argv)
    if ra != rb:
        bad += 1
        if bad < 10:
            print("DIFF", argv[:12], ra[:300], rb[:300])
        continue
    if argv[0] == "DUMP" and ra.startswith(b"$") and not ra.startswith(b"$-1") and rng.random() < 0.3:
        # Each side's payload restored on the other under a new name: both accept it and
        # answer the same.
        payload = ra[ra.index(b"\r\n") + 2:-2]
        replies = [conn.call(["RESTORE", "r:" + argv[1], "0", payload, "REPLACE"]) for conn in (ref, red)]
        if replies != [b"+OK\r\n"] * 2:
            bad += 1
            print("DIFF RESTORE", argv, replies, payload.hex())
            continue
        q = ["TDIGEST.QUANTILE", "r:" + argv[1], "0", "0.5", "0.9"]
        if ref.call(q) != red.call(q) or ref.call(["DUMP", "r:" + argv[1]]) != red.call(["DUMP", "r:" + argv[1]]):
            bad += 1
            print("DIFF after RESTORE", argv)
        restores += 1
print("seed", seed, "proto", proto, ":", n, "commands,", restores, "restores,", bad, "differences")
sys.exit(1 if bad else 0)
