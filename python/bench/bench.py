"""Side-by-side speed of redbloom's Python package (python/bench/bench.py; docs/benchmarks.md).

Installs the libraries it compares with from PyPI into the running interpreter's
environment (rbloom 1.5.4, pybloom-live 4.0.0, fastbloom-rs 0.5.10; `make run` never does),
then, in one run, interleaved round by round, medians:

1. local filters: ns per item of adds and lookups in batches of 1,000 and one call per item;
2. a sharded filter through a 3-master cluster against redis-py's own `bf().madd` /
   `bf().mexists` on one key of the same cluster (items/s);
3. a 10M-item local filter's memory in a fresh process: the native heap it holds (the
   extension counts its allocations) and its Python object, against BF.INFO's size, and
   what the process' resident size grew by;
4. a LocalCopy's lookups/s in-process (a pulled filter answering here).

Run from the repository root with the package installed: `.venv/bin/python python/bench/bench.py
[local] [sharded] [memory] [copy]` (all four by default).
"""

import gc
import os
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PINS = ["rbloom==1.5.4", "pybloom-live==4.0.0", "fastbloom-rs==0.5.10"]

subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
                *PINS], check=True)

import fastbloom_rs  # noqa: E402
import pybloom_live  # noqa: E402
import rbloom  # noqa: E402

import redbloom  # noqa: E402

CAPACITY = 1_000_000
RATE = 0.01
BATCH = 1000
ROUNDS = 7
N = 100_000  # items per round and library
ITEMS = ["item:%d" % i for i in range(N)]
PROBES = ["probe:%d" % i for i in range(N)]


def batches(xs):
    return [xs[i:i + BATCH] for i in range(0, len(xs), BATCH)]


# Each library: make, add a batch, look a batch up (a list of bools), add one, look one up.
LIBS = {
    "redbloom": (lambda: redbloom.BloomFilter(CAPACITY, RATE),
                 lambda f, b: f.add_many(b), lambda f, b: f.contains_many(b),
                 lambda f, x: f.add(x), lambda f, x: x in f),
    "rbloom": (lambda: rbloom.Bloom(CAPACITY, RATE),
               lambda f, b: f.update(b), lambda f, b: [x in f for x in b],
               lambda f, x: f.add(x), lambda f, x: x in f),
    "fastbloom-rs": (lambda: fastbloom_rs.FilterBuilder(CAPACITY, RATE).build_bloom_filter(),
                     lambda f, b: f.add_str_batch(b), lambda f, b: f.contains_str_batch(b),
                     lambda f, x: f.add_str(x), lambda f, x: f.contains_str(x)),
    "pybloom-live": (lambda: pybloom_live.BloomFilter(CAPACITY, RATE),
                     lambda f, b: [f.add(x) for x in b], lambda f, b: [x in f for x in b],
                     lambda f, x: f.add(x), lambda f, x: x in f),
}


def timed(fn):
    """ns per item of `fn`, in this thread's CPU time: every library here works on the
    calling thread for these batches (redbloom releases the GIL and may use threads only
    from 8,192 items), and CPU time does not count the time the shared machine's other
    work takes the core away."""
    gc.disable()
    t = time.thread_time_ns()
    fn()
    took = time.thread_time_ns() - t
    gc.enable()
    return took / N


def local_round(name, results, items_b, probes_b):
    make, add_b, has_b, add_1, has_1 = LIBS[name]
    f = make()
    results[name]["add x1000"].append(timed(lambda: [add_b(f, b) for b in items_b]))
    results[name]["contains x1000"].append(timed(lambda: [has_b(f, b) for b in probes_b]))
    g = make()
    results[name]["add x1"].append(timed(lambda: [add_1(g, x) for x in ITEMS]))
    results[name]["contains x1"].append(timed(lambda: [has_1(g, x) for x in PROBES]))


def local():
    kinds = ["add x1000", "contains x1000", "add x1", "contains x1"]
    results = {n: {k: [] for k in kinds} for n in LIBS}
    items_b, probes_b = batches(ITEMS), batches(PROBES)
    names = list(LIBS)
    for r in range(ROUNDS):
        for name in names[r % len(names):] + names[:r % len(names)]:  # rotate the order
            local_round(name, results, items_b, probes_b)
    print("\n## Local filters (capacity %d, error rate %g, %d items per round, %d rounds; "
          "ns per item, medians; ratio: redbloom / other)\n" % (CAPACITY, RATE, N, ROUNDS))
    print("| operation | " + " | ".join(names) + " | redbloom / rbloom |")
    print("|---|" + "---:|" * (len(names) + 1))
    for k in kinds:
        med = {n: statistics.median(results[n][k]) for n in names}
        print("| %s | %s | %.2f |" % (k, " | ".join("%.0f" % med[n] for n in names),
                                     med["redbloom"] / med["rbloom"]))


def servers_module():
    """python/tests/servers.py, its servers loading the release build of the module
    (REDBLOOM_MODULE overrides; `cargo build --release -p redbloom` makes it): a debug
    build would time the server's work, not the client's."""
    sys.path.insert(0, os.path.join(ROOT, "python", "tests"))
    import servers
    if "REDBLOOM_MODULE" not in os.environ:
        release = os.path.join(str(servers._target_dir()), "release", "libredbloom.so")
        if not os.path.exists(release):
            sys.exit("build the release module first: cargo build --release -p redbloom")
        os.environ["REDBLOOM_MODULE"] = release
    print("\n(module: %s)" % os.environ["REDBLOOM_MODULE"])
    return servers


def sharded():
    servers = servers_module()
    from redis.cluster import RedisCluster
    cluster = servers.Cluster()
    try:
        rc = RedisCluster(host="127.0.0.1", port=cluster.nodes[0].port)
        total = 200_000
        items = ["u%d" % i for i in range(total)]
        chunks = [items[i:i + 10_000] for i in range(0, total, 10_000)]
        res = {"sharded add": [], "sharded contains": [], "madd": [], "mexists": []}
        for r in range(5):
            f = redbloom.ShardedFilter(rc, "bench:%d" % r)
            f.create(total, 0.01, shards=6)
            rc.bf().create("{one}:%d" % r, 0.01, total)
            t = time.perf_counter()
            for c in chunks:
                f.add(c)
            res["sharded add"].append(total / (time.perf_counter() - t))
            t = time.perf_counter()
            for c in chunks:
                rc.bf().madd("{one}:%d" % r, *c)
            res["madd"].append(total / (time.perf_counter() - t))
            t = time.perf_counter()
            for c in chunks:
                rc.bf().mexists("{one}:%d" % r, *c)
            res["mexists"].append(total / (time.perf_counter() - t))
            t = time.perf_counter()
            for c in chunks:
                f.contains(c)
            res["sharded contains"].append(total / (time.perf_counter() - t))
        med = {k: statistics.median(v) for k, v in res.items()}
        print("\n## Through a 3-master cluster (%d items in calls of 10,000, 5 rounds; items/s, "
              "medians)\n" % total)
        print("| operation | redbloom ShardedFilter (6 members) | redis-py on one key | ratio |")
        print("|---|---:|---:|---:|")
        print("| add | %.0f | %.0f (`bf().madd`) | %.2f |" % (
            med["sharded add"], med["madd"], med["sharded add"] / med["madd"]))
        print("| lookup | %.0f | %.0f (`bf().mexists`) | %.2f |" % (
            med["sharded contains"], med["mexists"], med["sharded contains"] / med["mexists"]))
    finally:
        cluster.stop()


def copy():
    """A LocalCopy's lookups/s in-process, on one server (Debian's redis-server unless
    REDBLOOM_SERVER): batches of 1,000 and single `in`, of items the filter holds (answered
    by the copy alone), of items it does not hold (one SCANDUMP header check per call), and
    of a static filter's copy (no check); against BF.MEXISTS / BF.EXISTS on the server."""
    servers = servers_module()
    server = servers.Server()
    try:
        r = server.client()
        held = ITEMS[:20_000]
        f = redbloom.BloomFilter(100_000, RATE)
        f.add_many(held)
        f.push(r, "copy:bf")
        redbloom.StaticFilter.build(held, RATE).push(r, "copy:sf")
        bf, sf = redbloom.LocalCopy(r, "copy:bf"), redbloom.LocalCopy(r, "copy:sf")
        absent = PROBES[:20_000]
        kinds = {
            "Bloom copy, held, x1000": (lambda: [bf.contains_many(b) for b in batches(held)], 1),
            "Bloom copy, absent, x1000": (lambda: [bf.contains_many(b) for b in batches(absent)],
                                          1),
            "Bloom copy, held, x1": (lambda: [x in bf for x in held[:5000]], 4),
            "Bloom copy, absent, x1": (lambda: [x in bf for x in absent[:2000]], 10),
            "static copy, absent, x1000": (lambda: [sf.contains_many(b) for b in batches(absent)],
                                           1),
            "static copy, absent, x1": (lambda: [x in sf for x in absent[:5000]], 4),
            "server BF.MEXISTS, x1000": (lambda: [r.bf().mexists("copy:bf", *b)
                                                  for b in batches(absent)], 1),
            "server BF.EXISTS, x1": (lambda: [r.bf().exists("copy:bf", x) for x in absent[:2000]],
                                     10),
        }
        res = {k: [] for k in kinds}
        for _ in range(5):
            for k, (fn, scale) in kinds.items():
                t = time.perf_counter()
                fn()
                res[k].append(20_000 / scale / (time.perf_counter() - t))
        print("\n## LocalCopy in-process (one server, %s; 20,000 lookups per round, 5 rounds; "
              "lookups/s, medians)\n" % server_name(r))
        print("| lookups | per second | server checks per call |")
        print("|---|---:|---:|")
        for k in kinds:
            check = "—" if k.startswith("server") else (
                "1" if "absent" in k and "Bloom" in k else "0")
            print("| %s | %.0f | %s |" % (k, statistics.median(res[k]), check))
    finally:
        server.stop()


def server_name(r) -> str:
    info = r.info("server")
    name = "Valkey" if "valkey_version" in info else "Redis"
    return "%s %s" % (name, info.get("valkey_version") or info["redis_version"])


MEMORY_CHILD = r"""
import ctypes, gc, os, sys
import redbloom
from redbloom import _native

def rss():
    gc.collect()
    ctypes.CDLL("libc.so.6").malloc_trim(0)
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")

n = int(sys.argv[1])
redbloom.BloomFilter(1000, 0.01).add_many(["warm-up"])  # the module's one-time set-up
heap0, rss0 = _native._heap_bytes(), rss()
f = redbloom.BloomFilter(n, 0.01)
for b in range(0, n, 100_000):
    f.add_many(["m%d" % i for i in range(b, min(n, b + 100_000))])
heap, grew = _native._heap_bytes() - heap0, rss() - rss0
print(f.info()["size"], sys.getsizeof(f), heap, grew, len(f))
"""


def memory():
    """A 10M-item Bloom filter's memory, in a fresh process: its native heap (the
    extension's counting allocator: bytes allocated and not freed) plus the Python object
    (sys.getsizeof), against the size BF.INFO reports for the same filter on a server; and
    what the process' resident size grew by."""
    n = 10_000_000
    out = subprocess.run([sys.executable, "-c", MEMORY_CHILD, str(n)], check=True,
                         capture_output=True, text=True).stdout.split()
    size, obj, heap, grew, items = map(int, out)
    print("\n## A 10M-item local Bloom filter (error rate %g; %d items added)\n" % (RATE, items))
    print("| BF.INFO size on a server | native heap held | Python object | local total "
          "| local − server | process RSS grew by |")
    print("|---:|---:|---:|---:|---:|---:|")
    print("| %d | %d | %d | %d | %+d | %d |" % (size, heap, obj, heap + obj, heap + obj - size,
                                              grew))


if __name__ == "__main__":
    print("redbloom Python bench; CPython %s; %s" % (sys.version.split()[0], os.uname().machine))
    parts = sys.argv[1:] or ["local", "sharded", "memory", "copy"]
    for part in parts:
        {"local": local, "sharded": sharded, "memory": memory, "copy": copy}[part]()
