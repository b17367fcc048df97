#!/usr/bin/env python3
"""Differential fuzzing of BF.* and CF.* (not in CI): random commands, valid and invalid
(every BF/CF command RedisBloom has, their options, wrong arities, edge numbers, binary
items, SCANDUMP cursors, LOADCHUNK of bad chunks, DUMP, wrong-type keys),
sent to a reference server (RedisBloom) and to redbloom; the replies are compared byte for
byte and the differing ones grouped by kind (scripts/difffuzz.py).

Against RedisBloom 2.4.20 (RESP2) and 2.6.x (RESP3) the replies differ only where compat.md
says redbloom decides otherwise (the ceiling, BF's EXPANSION range: decisions 3f and 4a); against
RedisBloom 8.2.x (the module of Redis 8) the differences are the ones docs/differences.md
lists ("Against RedisBloom 8.2.3"): redbloom keeps 2.4.20's behaviour.

usage: diff-fuzz-bf-cf.py <reference port> <redbloom port> <protocol 2|3> <seed> <commands>
Sizes stay below a few hundred MiB, allocated lazily, so both servers stay up.
"""
import os
import random
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from difffuzz import report, run  # noqa: E402

ref_port, our_port, protocol, seed, n = (int(x) for x in sys.argv[1:6])
rng = random.Random(seed)
KEYS = ["b0", "b1", "c0", "c1", "str"]
ITEMS = ["", "a", "b", "item:1", "\x00\xff", "x" * 40, "7"]


def pick(*choices):
    return rng.choice(choices)


def count():
    return pick("0", "1", "2", "3", "100", "1000", "65535", "65536", "-1", "x", "1.5", "+5",
                "010", "1073741824", "1073741825", "4294967296", "9223372036854775807",
                str(rng.randint(1, 5000)))


def rate():
    return pick("0", "1", "0.5", "0.25", "0.26", "0.01", "0.001", "1e-9", "-0.1", "x", "inf",
                "nan", "0.999", "%.4f" % rng.uniform(0.0001, 0.9))


def items(lo=0, hi=5):
    return [rng.choice(ITEMS) for _ in range(rng.randint(lo, hi))]


def options(table):
    out = []
    for name, value in table:
        if rng.random() < 0.35:
            out += [name] + ([value()] if value else [])
    return out


def bf():
    k = pick("b0", "b1", "c0", "str")
    c = rng.randrange(12)
    if c == 0:
        big = rng.random() < 0.05
        return ["BF.RESERVE", k, "0.5" if big else rate(), "1073741825" if big else count()] + \
            options([("EXPANSION", count), ("NONSCALING", None)])
    if c == 1:
        return ["BF.ADD", k] + items(1, 1) + (["extra"] if rng.random() < 0.05 else [])
    if c == 2:
        return ["BF.MADD", k] + items(0, 6)
    if c == 3:
        opts = options([("CAPACITY", count), ("ERROR", rate), ("EXPANSION", count),
                        ("NOCREATE", None), ("NONSCALING", None)])
        return ["BF.INSERT", k] + opts + (["ITEMS"] + items(0, 4) if rng.random() < 0.9 else [])
    if c == 4:
        return ["BF.EXISTS", k] + items(1, 1) + (["extra"] if rng.random() < 0.05 else [])
    if c == 5:
        return ["BF.MEXISTS", k] + items(0, 6)
    if c == 6:
        return ["BF.INFO", k] + ([pick("CAPACITY", "SIZE", "FILTERS", "ITEMS", "EXPANSION",
                                       "capacity", "BOGUS")] if rng.random() < 0.5 else [])
    if c == 7:
        return ["BF.CARD", k]
    if c == 8:
        return ["BF.SCANDUMP", k, pick("0", "1", "-1", "x", "2", str(rng.randint(0, 10**6)))]
    if c == 9:
        return ["BF.LOADCHUNK", k, pick("0", "1", "x", "-1"), pick("", "abc", "\x00" * 30)]
    if c == 10:
        return ["BF.DEBUG", k]
    return ["BF.MADD", k] + ["i%d" % rng.randint(0, 400) for _ in range(rng.randint(1, 60))]


def cf():
    k = pick("c0", "c1", "b0", "str")
    c = rng.randrange(14)
    if c == 0:
        big = rng.random() < 0.05
        return ["CF.RESERVE", k, "1073741825" if big else count()] + options(
            [("BUCKETSIZE", count), ("MAXITERATIONS", count), ("EXPANSION", count)])
    if c in (1, 2):
        return [pick("CF.ADD", "CF.ADDNX"), k] + items(1, 1) + (["x"] if rng.random() < 0.05 else [])
    if c == 3:
        opts = options([("CAPACITY", count), ("NOCREATE", None)])
        return [pick("CF.INSERT", "CF.INSERTNX"), k] + opts + \
            (["ITEMS"] + items(0, 4) if rng.random() < 0.9 else [])
    if c in (4, 5):
        return [pick("CF.EXISTS", "CF.COUNT", "CF.DEL"), k] + items(1, 1)
    if c == 6:
        return ["CF.MEXISTS", k] + items(0, 6)
    if c == 7:
        return ["CF.INFO", k]
    if c == 8:
        return ["CF.SCANDUMP", k, pick("0", "1", "-1", "x", str(rng.randint(0, 10**6)))]
    if c == 9:
        return ["CF.LOADCHUNK", k, pick("0", "1", "x", "-1"), pick("", "abc", "\x00" * 30)]
    if c == 10:
        return [pick("CF.COMPACT", "CF.DEBUG"), k]
    return ["CF.INSERT", k, "ITEMS"] + ["i%d" % rng.randint(0, 400) for _ in range(rng.randint(1, 40))]


def other():
    k = rng.choice(KEYS)
    return pick(["DUMP", k], ["DEL", k], ["SET", "str", "v"], ["TYPE", k], ["EXISTS", k])


def commands():
    for _ in range(n):
        r = rng.random()
        yield bf() if r < 0.45 else cf() if r < 0.9 else other()


sent, differing, kinds = run(ref_port, our_port, protocol, commands())
report(f"seed {seed} protocol {protocol}", sent, differing, kinds)
