#!/usr/bin/env python3
"""Differential fuzzing of CMS.* (not in CI): the same random commands, valid and invalid
(every CMS command, wrong arities, edge numbers, binary items, DUMP, wrong-type keys), sent
to a reference server (RedisBloom) and to redbloom; every raw reply must be equal.
Dimensions stay small: RedisBloom aborts the server on a sketch it cannot allocate.

usage: diff-fuzz-cms.py <reference port> <redbloom port> <protocol 2|3> <seed> <commands>
(RedisBloom 2.4.20 for RESP2, 2.6.x for RESP3, each loaded in its own redis-server).
"""
import random
import socket
import sys

class Conn:
    def __init__(s, port, proto=2):
        s.s = socket.create_connection(("127.0.0.1", port)); s.buf=b""
        if proto == 3: s.call(["HELLO","3"])
    def send(s, argv):
        out=b"*%d\r\n" % len(argv)
        for a in argv:
            a = a if isinstance(a,bytes) else str(a).encode()
            out += b"$%d\r\n%s\r\n" % (len(a), a)
        s.s.sendall(out)
    def readline(s):
        while b"\r\n" not in s.buf:
            d=s.s.recv(65536)
            if not d: raise EOFError
            s.buf+=d
        i=s.buf.index(b"\r\n"); l=s.buf[:i+2]; s.buf=s.buf[i+2:]; return l
    def readn(s,n):
        while len(s.buf)<n:
            d=s.s.recv(65536)
            if not d: raise EOFError
            s.buf+=d
        r=s.buf[:n]; s.buf=s.buf[n:]; return r
    def raw(s):
        l=s.readline(); t=l[:1]
        if t in b"+-:_#,(": return l
        if t in b"$=!":
            n=int(l[1:-2]);
            return l if n<0 else l+s.readn(n+2)
        if t in b"*~>%|":
            n=int(l[1:-2]); k = 2*n if t in b"%|" else n
            return l+b"".join(s.raw() for _ in range(max(k,0)))
        raise ValueError(l)
    def call(s, argv):
        s.send(argv); return s.raw()

pref, ours, proto, seed, n = (int(x) for x in sys.argv[1:6])
rng = random.Random(seed)
a, b = Conn(pref, proto), Conn(ours, proto)
keys = ["k%d" % i for i in range(5)] + ["str"]
items = ["", "a", "b", "item:1", "\x00\xff", "x"*40]
def num():
    return rng.choice(["0","1","2","3","7","100","-1","x","1.5","4294967295","4294967296","9223372036854775807","-9223372036854775808","18446744073709551615","+5","010"," 1", str(rng.randint(0,1000))])
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
        for _ in range(rng.randint(0,4)): out += [rng.choice(items), num()]
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
bad = 0
a.call(["FLUSHALL"]); b.call(["FLUSHALL"])
for i in range(n):
    argv = cmd()
    ra, rb = a.call(argv), b.call(argv)
    if ra != rb:
        bad += 1
        if bad < 10: print("DIFF", argv, ra[:200], rb[:200])
print("seed", seed, "proto", proto, ":", n, "commands,", bad, "differences")
sys.exit(1 if bad else 0)
