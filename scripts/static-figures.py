#!/usr/bin/env python3
"""The figures of docs/static.md: memory, false positives and server CPU per item of a
static filter (SF: the ribbon, and encoding 1's binary fuse filter, `ENCODING FUSE`)
against BF, BF NONSCALING, CF and a plain SET, all holding the same N items
("user:<i>"), on one fresh server with the release module; then both SF encodings at
0.001 and 0.0001.

    scripts/static-figures.py /path/to/libredbloom.so [N] [redis-server]

Server CPU per item is INFO commandstats' usec over the items the commands carried. With
STATIC_CHART=DIR (matplotlib installed) it also writes DIR/static-memory.csv and
DIR/static-memory.svg: the bits per item of each structure, the chart of docs/static.md.
"""
import os, sys

import resp_server
from resp_server import usec

module = sys.argv[1]
n = int(sys.argv[2]) if len(sys.argv) > 2 else 1_000_000
server_bin = sys.argv[3] if len(sys.argv) > 3 else "redis-server"

def start():
    return resp_server.start(server_bin, module, 23000)

items = ["user:%d" % i for i in range(n)]
proc, c = start()
try:
    c.call("CONFIG", "SET", "bf.max-filter-bytes", str(1 << 40))
    c.call("SF.BUILD", "sf", "0.01", "ITEMS", *items)
    build_usec = usec(c, "sf.build")
    c.call("SF.BUILD", "sffuse", "0.01", "ENCODING", "FUSE", "ITEMS", *items)
    fuse_usec = usec(c, "sf.build") - build_usec
    c.call("BF.RESERVE", "bf", "0.01", n)
    c.call("BF.RESERVE", "bfns", "0.01", n, "NONSCALING")
    c.call("CF.RESERVE", "cf", n)
    for i in range(0, n, 1000):
        batch = items[i:i + 1000]
        for key in ("bf", "bfns"):
            c.send("BF.MADD", key, *batch)
        c.send("CF.INSERT", "cf", "ITEMS", *batch)
        c.send("SADD", "set", *batch)
        for _ in range(4):
            c.read()
    print("N = %d, error rate 0.01" % n)
    print("SF.BUILD: %.0f ms of server CPU, %.1f M items/s" % (build_usec / 1000, n / build_usec))
    print("SF.BUILD ENCODING FUSE: %.0f ms of server CPU, %.1f M items/s" % (fuse_usec / 1000, n / fuse_usec))
    memory = []
    for key, name in (("sf", "SF"), ("sffuse", "SF fuse (enc. 1)"), ("bf", "BF"), ("bfns", "BF NONSCALING"), ("cf", "CF"), ("set", "SET")):
        m = c.call("MEMORY", "USAGE", key, "SAMPLES", "0")
        memory.append((name, m, m * 8 / n))
        print("%-14s MEMORY USAGE %11d bytes  %6.2f bits/item" % (name, m, m * 8 / n))
    # False positives on N absent items, and server CPU per query item (batches of 100).
    queries = ["absent:%d" % i for i in range(n)]
    for key, cmd, name in (("sf", "SF.MEXISTS", "SF"), ("sffuse", "SF.MEXISTS", "SF fuse"), ("bf", "BF.MEXISTS", "BF"), ("cf", "CF.MEXISTS", "CF")):
        before = usec(c, cmd.lower())
        hits = 0
        for i in range(0, n, 100):
            c.send(cmd, key, *queries[i:i + 100])
            if (i // 100) % 50 == 49:
                for _ in range(50):
                    hits += sum(int(x) for x in c.read())
        spent = usec(c, cmd.lower()) - before
        print("%-7s FP %.4f %%  %s x100: %.1f ns of server CPU per item" % (name, 100.0 * hits / n, cmd, 1000.0 * spent / n))
    before = usec(c, "sismember")
    for i in range(0, n // 10):
        c.send("SISMEMBER", "set", queries[i])
        if i % 1000 == 999:
            for _ in range(1000):
                c.read()
    print("SET SISMEMBER: %.1f ns of server CPU per item (single commands)" % (1000.0 * (usec(c, "sismember") - before) / (n // 10)))
    # Both SF encodings at smaller rates: memory and false positives on N absent items.
    for rate in ("0.001", "0.0001"):
        for extra, name in (((), "SF"), (("ENCODING", "FUSE"), "SF fuse")):
            c.call("SF.BUILD", "r", rate, *extra, "ITEMS", *items)
            m = c.call("MEMORY", "USAGE", "r", "SAMPLES", "0")
            hits = 0
            for i in range(0, n, 1000):
                hits += sum(int(x) for x in c.call("SF.MEXISTS", "r", *queries[i:i + 1000]))
            print("%-7s at %s: MEMORY USAGE %d bytes, %.2f bits/item, FP %.4f %%" % (name, rate, m, m * 8 / n, 100.0 * hits / n))
            c.call("DEL", "r")
    # FROM: the largest source built in the command, and its main-thread time (larger ones
    # build in a forked child: make bench-stall measures those).
    c.call("SADD", "src", *items[:20_000])
    before = usec(c, "sf.build")
    c.call("SF.BUILD", "fromsrc", "0.01", "FROM", "src")
    print("SF.BUILD FROM a 20000-member SET: %.1f ms on the main thread" % ((usec(c, "sf.build") - before) / 1000))
finally:
    proc.terminate()
    proc.wait()

def chart(out, rows):
    import math, matplotlib
    matplotlib.use("svg")
    import matplotlib.pyplot as plt
    plt.rcParams["svg.fonttype"] = "none"
    with open(os.path.join(out, "static-memory.csv"), "w") as f:
        f.write("structure,bytes,bits per item\n")
        for name, m, bits in rows:
            f.write("%s,%d,%.2f\n" % (name, m, bits))
    fig, ax = plt.subplots(figsize=(7, 3.6))
    names = [name for name, _, _ in rows]
    bits = [b for _, _, b in rows]
    bars = ax.barh(names[::-1], bits[::-1], color=["#888888", "#d08c3c", "#6a9fd4", "#3c78b4", "#8fbc8f", "#2e8b57"])
    for bar, b in zip(bars, bits[::-1]):
        ax.annotate("%.2f" % b, (bar.get_width(), bar.get_y() + bar.get_height() / 2),
                    textcoords="offset points", xytext=(4, -3), fontsize=8)
    bound = -math.log2(0.01)
    ax.axvline(bound, color="grey", linestyle=":", linewidth=0.8,
               label="information-theoretic bound at 1 %%: %.2f bits" % bound)
    ax.set_xscale("log")
    ax.set_xlim(4, max(bits) * 2.5)
    ax.set_xlabel("MEMORY USAGE, bits per item (log scale)")
    ax.set_title("%s items at error rate 0.01 (the SET: the items themselves)" % format(n, ","))
    ax.grid(alpha=0.3, axis="x", which="both")
    ax.legend(fontsize=7, loc="upper right")
    fig.tight_layout()
    fig.savefig(os.path.join(out, "static-memory.svg"), metadata={"Date": None})

if os.environ.get("STATIC_CHART"):
    chart(os.environ["STATIC_CHART"], memory)
