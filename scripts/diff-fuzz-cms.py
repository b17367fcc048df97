#!/usr/bin/env python3
"""Differential fuzzing of CMS.* (not in CI): the same random commands, valid and invalid
(every CMS command, wrong arities, edge numbers, binary items, DUMP, wrong-type keys), sent
to a reference server (RedisBloom) and to redbloom; every raw reply must be equal.
Dimensions stay small: RedisBloom aborts the server on a sketch it cannot allocate.
Increments are never negative: redbloom takes them as RedisBloom 8.12 does, where 2.4.20
and 2.6 refuse them (docs/compat.md, "Count-Min Sketch"); weights still are.

usage: diff-fuzz-cms.py <reference port> <redbloom port> <protocol 2|3> <seed> <commands>
(RedisBloom 2.4.20 for RESP2, 2.6.x for RESP3, each loaded in its own redis-server).
"""
import os
import random
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from difffuzz import report, run  # noqa: E402

pref, ours, proto, seed, n = (int(x) for x in sys.argv[1:6])
rng = random.Random(seed)
keys = ["k%d" % i for i in range(5)] + ["str"]
items = ["", "a", "b", "item:1", "\x00\xff", "x"*40]
def num():
    return rng.choice(["0","1","2","3","7","100","-1","x","1.5","4294967295","4294967296","9223372036854775807","-9223372036854775808","18446744073709551615","+5","010"," 1", str(rng.randint(0,1000))])
def increment():
    while True:
        n = num()
        if not n.startswith("-"):
            return n
def dim():
    return rng.choice(["0","1","2","5","10","64","-3","x","9223372036854775807","4611686018427387904", str(rng.randint(1,300))])
def prob():
    return rng.choice(["0","1","0.5","0.01","0.001","0.125","0.3","-0.1","abc","inf","nan","1e-50","0.999999999", "%.6f" % rng.uniform(0.001,0.99)])
def cmd():
    c = rng.randrange(10)
    k = rng.choice(keys)
    if c == 0: return ["CMS.INITBYDIM", k, dim(), dim()] + ([dim()] if rng.random()<0.05 else [])
    if c == 1: return ["CMS.INITBYPROB", k, prob(), prob()]
    if c in (2,3):
        out = ["CMS.INCRBY", k]
        for _ in range(rng.randint(0,4)): out += [rng.choice(items), increment()]
        if rng.random() < 0.1: out.append("dangling")
        return out
    if c in (4,5): return ["CMS.QUERY", k] + [rng.choice(items) for _ in range(rng.randint(0,4))]
    if c == 6:
        nk = rng.randint(0,3); srcs=[rng.choice(keys) for _ in range(nk + rng.choice([0,0,0,1,-1]) if nk else 0)]
        out = ["CMS.MERGE", k, rng.choice([str(nk), str(nk), "x", "-1", "0"])] + srcs
        if rng.random() < 0.5: out += ["WEIGHTS"] + [num() for _ in range(nk + rng.choice([0,0,0,1,-1]) if nk else 0)]
        return out
    if c == 7: return ["CMS.INFO", k] + (["x"] if rng.random() < 0.1 else [])
    if c == 8: return rng.choice([["DUMP", k], ["DEL", k], ["SET", "str", "v"], ["TYPE", k]])
    return ["CMS.INFO", k]
sent, bad, kinds = run(pref, ours, proto, (cmd() for _ in range(n)))
report(f"seed {seed} proto {proto}", sent, bad, kinds)
sys.exit(1 if bad else 0)
