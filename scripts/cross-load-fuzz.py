#!/usr/bin/env python3
"""Cross-load fuzz (not in CI; issue 32): for every family (BF, BLOCKED, CF, CBF, WBF, CMS,
TopK, t-digest) a random stream of writes and reads with extreme values on purpose
(±DBL_MAX, sums that overflow to NaN, weights past 2^53 and 2^63, counters at their
limits, empty and large items), run in RedisBloom and in redbloom side by side, every
reply compared byte for byte (a key whose replies differ is deleted on both sides, so one
difference is counted once). Inside the stream, on both sides: DEBUG RELOAD, and DUMP +
DEL + RESTORE of a key. At checkpoints every key's DUMP from each side is RESTOREd into
the other side (a key `k~rb` / `k~rd` there) and into a fresh server of each kind, and the
reads of the restored keys must answer as the writer's own key answers; at the end (and
every `--rdb-every` checkpoints) each side SAVEs and a fresh server of the other kind
loads that file, every key answering as on the writer. BLOCKED, CBF, WBF and XF are
redbloom's own: their streams run on redbloom alone, each round trip compared with the
answers before it; so does CMSCELL, the Count-Min Sketch with RedisBloom 8.12's cell
sizes (1, 2, 4, 8 bytes), negative increments and counters at each size's maximum (no
RedisBloom 8.12 to compare with here: docs/compat.md, "Count-Min Sketch").

Differences documented in docs/differences.md are kept out of the stream: TopK items hold
no NUL, CR or LF (RESP2 simple strings), no bad TOPK.INCRBY increments (RedisBloom's cut
reply), and a t-digest of a single observation gets a second one before any save (redbloom
keeps the observation where RedisBloom loads a zero node).

--record FILE writes the stream as sent to the reference side (RedisBloom, or redbloom for
its own families) with every reply, checkpoints' RESTOREs (of both sides' payloads, into
keys of the same server) included: core/tests/fixtures/redisbloom-2.4.20/crossload-*.json,
which tests/it/crossload.rs replays into redbloom (every reply, DUMP payloads byte for byte).

usage: cross-load-fuzz.py [--families bf,cf,...] [--commands N] [--seed S]
                          [--redisbloom SO] [--redbloom SO] [--server redis-server]
                          [--checkpoint N] [--rdb-every N] [--progress N] [--small] [--record FILE]
"""
import argparse, json, os, random, shutil, socket, subprocess, sys, tempfile, time
from collections import Counter

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from difffuzz import Conn  # noqa: E402

REDISBLOOM = "/work/oracles/redisbloom-2.4.20.so"
OWN_FAMILIES = {"blocked", "cbf", "wbf", "cmscell", "xf"}
DBL_MAX = "1.7976931348623157e308"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    def __init__(self, binary, module, workdir, dbfilename="dump.rdb"):
        self.port = free_port()
        self.dir = workdir
        self.dbfilename = dbfilename
        self.proc = subprocess.Popen(
            [binary, "--port", str(self.port), "--bind", "127.0.0.1", "--save", "",
             "--appendonly", "no", "--dir", workdir, "--dbfilename", dbfilename,
             "--enable-debug-command", "local", "--loadmodule", module],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for _ in range(400):
            try:
                self.conn = Conn(self.port)
                if self.conn.call(["PING"]) == b"+PONG\r\n":
                    return
            except (OSError, EOFError):
                time.sleep(0.05)
        raise SystemExit(f"server on {workdir}/{dbfilename} did not start (a load refused?)")

    def alive(self):
        return self.proc.poll() is None

    def stop(self):
        self.proc.kill()
        self.proc.wait()


def enc(a):
    return a if isinstance(a, bytes) else str(a).encode()


# ---- generators: each returns (writes, reads(key)) for one family -------------------

class Gen:
    def __init__(self, rng, small):
        self.rng = rng
        self.small = small

    def pick(self, *xs):
        return self.rng.choice(xs)

    def item(self, binary=True):
        r = self.rng.random()
        if r < 0.5:
            return "i%d" % self.rng.randint(0, 60)
        if r < 0.6:
            return ""
        if r < 0.7:
            return "x" * self.rng.choice([100, 300] if self.small else [1000, 100000])
        if r < 0.85 and binary:
            return bytes(self.rng.randrange(256) for _ in range(self.rng.randint(1, 12)))
        return "%d" % self.rng.randint(-10**6, 10**6)

    def items(self, lo=1, hi=6, binary=True):
        return [self.item(binary) for _ in range(self.rng.randint(lo, hi))]


def bloom_like(g, key, prefix, blocked):
    r = g.rng.random()
    rate = g.pick("0.5", "0.1", "0.01", "1e-5", "1e-300", "5e-324", "0.999")
    cap = g.pick("1", "2", "3", "10") if g.small else g.pick("1", "2", "3", "10", "100", "1000")
    if r < 0.08:
        extra = []
        if g.rng.random() < 0.5:
            extra = ["EXPANSION", g.pick("1", "2", "3", "16")]
        elif g.rng.random() < 0.3:
            extra = ["NONSCALING"]
        if blocked:
            extra.append("BLOCKED")
        return [f"{prefix}.RESERVE", key, rate, cap] + extra
    if r < 0.12:
        opts = ["CAPACITY", cap, "ERROR", rate]
        if blocked:
            opts.append("BLOCKED")
        if g.rng.random() < 0.2:
            opts.append("NONSCALING")
        return [f"{prefix}.INSERT", key] + opts + ["ITEMS"] + g.items()
    if r < 0.6:
        return [f"{prefix}.ADD", key, g.item()]
    return [f"{prefix}.MADD", key] + g.items(1, 20)


def bloom_reads(prefix, key, probe):
    return [[f"{prefix}.MEXISTS", key] + probe, [f"{prefix}.INFO", key], [f"{prefix}.CARD", key],
            [f"{prefix}.DEBUG", key], [f"{prefix}.SCANDUMP", key, "0"]]


def gen_bf(g, key):
    return bloom_like(g, key, "BF", False)


def gen_blocked(g, key):
    return bloom_like(g, key, "BF", True)


def gen_cbf(g, key):
    if g.rng.random() < 0.3:
        return ["CBF.DEL", key, g.item()]
    return bloom_like(g, key, "CBF", False)


def gen_cf(g, key):
    r = g.rng.random()
    if r < 0.08:
        cmd = ["CF.RESERVE", key, g.pick("2", "4", "10", "100", "1000")]
        if g.rng.random() < 0.6:
            cmd += ["BUCKETSIZE", g.pick("1", "2", "4", "255")]
        if g.rng.random() < 0.4:
            cmd += ["MAXITERATIONS", g.pick("1", "20", "65535")]
        if g.rng.random() < 0.5:
            cmd += ["EXPANSION", g.pick("0", "1", "2", "3", *([] if g.small else ["32768"]))]
        return cmd
    if r < 0.45:
        return [g.pick("CF.ADD", "CF.ADDNX"), key, g.item()]
    if r < 0.6:
        return [g.pick("CF.INSERT", "CF.INSERTNX"), key, "ITEMS"] + g.items(1, 10)
    if r < 0.9:
        return ["CF.DEL", key, g.item()]
    return ["CF.COMPACT", key]


def gen_wbf(g, key):
    r = g.rng.random()
    if r < 0.08:
        cmd = ["WBF.RESERVE", key, g.pick("0.5", "0.1", "0.01", "1e-5"),
               g.pick("1", "2", "10", "100", "1000")]
        if g.rng.random() < 0.3:
            # Windows of days: a query's answer must not depend on when it runs.
            cmd += ["WINDOW", g.pick("9000000000000", *([] if g.small else ["100000000"]))]
        return cmd
    if r < 0.6:
        return ["WBF.ADD", key, g.item()]
    return ["WBF.MADD", key] + g.items(1, 20)


def gen_xf(g, key):
    r = g.rng.random()
    if r < 0.08:
        cmd = ["XF.RESERVE", key, g.pick("0.5", "0.1", "0.01", "1e-5", "1e-9")]
        if g.rng.random() < 0.5:
            cmd += ["CAPACITY", g.pick("1", "2", "100", "1000", *([] if g.small else ["1099511627776"]))]
        return cmd
    if r < 0.45:
        return ["XF.ADD", key, g.item()]
    if r < 0.75:
        return ["XF.MADD", key] + g.items(1, 30)
    return ["XF.DEL", key, g.item()]


def xf_reads(key, probe):
    # Not XF.INFO's size: a restored filter's partitions are allocated to the byte, a grown
    # one's in steps (the same bytes, less memory).
    return [["XF.MEXISTS", key] + probe, ["XF.COUNT", key, "i1"], ["XF.CARD", key]] + [
        ["XF.INFO", key, field] for field in ("ERROR", "ITEMS", "CAPACITY", "EXPANSIONS",
                                               "PARTITIONS", "BOUND")] + [
        ["XF.SCANDUMP", key, "0"]]


def gen_cms(g, key):
    r = g.rng.random()
    big = lambda: g.pick("1", "7", "4294967295", "4294967296", "2147483647",
                         "9223372036854775807", str(g.rng.randint(0, 1000)))
    if r < 0.06:
        return ["CMS.INITBYDIM", key, g.pick("1", "2", "10", "100"), g.pick("1", "2", "5")]
    if r < 0.1:
        return ["CMS.INITBYPROB", key, g.pick("0.1", "0.01", *([] if g.small else ["0.001"])),
                g.pick("0.5", "0.01", "0.002")]
    if r < 0.85:
        cmd = ["CMS.INCRBY", key]
        for _ in range(g.rng.randint(1, 6)):
            cmd += [g.item(), big()]
        return cmd
    srcs = [f"cms:{i}" for i in range(g.rng.randint(1, 3))]
    cmd = ["CMS.MERGE", key, str(len(srcs))] + srcs
    if g.rng.random() < 0.5:
        cmd += ["WEIGHTS"] + [g.pick("1", "2", "-1", "1000000", "9223372036854775807")
                              for _ in srcs]
    return cmd


def gen_cmscell(g, key):
    """CMS with cell sizes: values at and past each size's maximum, negative increments
    (underflows refused whole), merges of equal and of different cell sizes."""
    r = g.rng.random()
    size = lambda: g.pick("1", "2", "4", "8")
    big = lambda: g.pick("1", "7", "255", "256", "65535", "65536", "4294967295",
                         "4294967296", "9223372036854775807", "-1", "-7", "-255", "-65536",
                         "-9223372036854775808", str(g.rng.randint(-300, 1000)))
    if r < 0.06:
        return ["CMS.INITBYDIM", key, g.pick("1", "2", "10", "100"), g.pick("1", "2", "5"),
                "CELL_SIZE", size()]
    if r < 0.1:
        return ["CMS.INITBYPROB", key, g.pick("0.1", "0.01"), g.pick("0.5", "0.01", "0.002"),
                "CELL_SIZE", size()]
    if r < 0.85:
        cmd = ["CMS.INCRBY", key]
        for _ in range(g.rng.randint(1, 6)):
            cmd += [g.item(), big()]
        return cmd
    family = key.split(":")[0]
    srcs = [f"{family}:{i}" for i in range(g.rng.randint(1, 3))]
    cmd = ["CMS.MERGE", key, str(len(srcs))] + srcs
    if g.rng.random() < 0.5:
        cmd += ["WEIGHTS"] + [g.pick("1", "2", "-1", "1000000", "9223372036854775807")
                              for _ in srcs]
    return cmd


def cms_reads(key, probe):
    return [["CMS.QUERY", key] + probe, ["CMS.INFO", key]]


def gen_topk(g, key):
    r = g.rng.random()
    # No NUL, CR or LF in TopK items (RESP2 simple strings: docs/differences.md).
    item = lambda: g.item(binary=False)
    # Decay 1 only: other decays draw from RedisBloom's rand(), which no save keeps
    # (docs/compat.md, "The decay draw").
    if r < 0.1:
        return ["TOPK.RESERVE", key, g.pick("1", "2", "5", "10"), g.pick("1", "8", "50"),
                g.pick("1", "3", "7"), "1"]
    if r < 0.6:
        return ["TOPK.ADD", key] + [item() for _ in range(g.rng.randint(1, 8))]
    cmd = ["TOPK.INCRBY", key]
    for _ in range(g.rng.randint(1, 5)):
        cmd += [item(), g.pick("0", "1", "100000", "99999", str(g.rng.randint(1, 1000)))]
    return cmd


def topk_reads(key, probe):
    return [["TOPK.LIST", key, "WITHCOUNT"], ["TOPK.QUERY", key] + probe,
            ["TOPK.COUNT", key] + probe, ["TOPK.INFO", key]]


def gen_tdigest(g, key):
    r = g.rng.random()
    value = lambda: g.pick(DBL_MAX, "-" + DBL_MAX, "0", "1", "-1", "5e-324", "1e300",
                           "%.17g" % g.rng.gauss(0, 100), "%.17g" % g.rng.uniform(-1e9, 1e9),
                           str(g.rng.randint(-5, 5)))
    if r < 0.05:
        return ["TDIGEST.CREATE", key, "COMPRESSION", g.pick("1", "2", "5", "100", "500")]
    if r < 0.06:
        return ["TDIGEST.CREATE", key]
    if r < 0.07:
        return ["TDIGEST.RESET", key]
    if r < 0.45:
        return ["TDIGEST.ADD", key] + [value() for _ in range(g.rng.randint(1, 30))]
    if r < 0.75:
        # A self-merge multiplies the weight by n + 1: past 2^53 and to 2^63 in a few.
        n = g.rng.randint(2, 6)
        return ["TDIGEST.MERGE", key, str(n)] + [key] * n
    if r < 0.82:
        srcs = [g.pick(*[f"tdigest:{i}" for i in range(3)]) for _ in range(g.rng.randint(1, 3))]
        cmd = ["TDIGEST.MERGE", key, str(len(srcs))] + srcs
        if g.rng.random() < 0.3:
            cmd += ["COMPRESSION", g.pick("1", "3", "100")]
        if g.rng.random() < 0.2:
            cmd += ["OVERRIDE"]
        return cmd
    # Queries merge the buffer: part of the stream.
    return g.rng.choice(tdigest_reads(key))


def tdigest_reads(key):
    vals = ["0", "1", "-1", "1e308", "-1e308", "5", "100"]
    ranks = ["0", "1", "2", "10", "9007199254740993", "9223372036854775807"]
    return [["TDIGEST.QUANTILE", key, "0", "0.01", "0.5", "0.99", "1"],
            ["TDIGEST.CDF", key] + vals, ["TDIGEST.RANK", key] + vals,
            ["TDIGEST.REVRANK", key] + vals, ["TDIGEST.BYRANK", key] + ranks,
            ["TDIGEST.BYREVRANK", key] + ranks, ["TDIGEST.TRIMMED_MEAN", key, "0.1", "0.9"],
            ["TDIGEST.MIN", key], ["TDIGEST.MAX", key], ["TDIGEST.INFO", key]]


PROBE = ["i0", "i1", "i7", "", "x" * 100, "12"]

FAMILIES = {
    "bf": (gen_bf, lambda k: bloom_reads("BF", k, PROBE)),
    "blocked": (gen_blocked, lambda k: bloom_reads("BF", k, PROBE)),
    "cf": (gen_cf, lambda k: [["CF.MEXISTS", k] + PROBE, ["CF.COUNT", k, "i1"], ["CF.INFO", k],
                              ["CF.DEBUG", k], ["CF.SCANDUMP", k, "0"]]),
    "cbf": (gen_cbf, lambda k: bloom_reads("CBF", k, PROBE) + [["CBF.COUNT", k, "i1"]]),
    "wbf": (gen_wbf, lambda k: [["WBF.MEXISTS", k] + PROBE, ["WBF.INFO", k], ["WBF.CARD", k]]),
    "cms": (gen_cms, lambda k: cms_reads(k, PROBE)),
    "cmscell": (gen_cmscell, lambda k: cms_reads(k, PROBE)),
    "topk": (gen_topk, lambda k: topk_reads(k, PROBE[:4] + ["12"])),
    "tdigest": (gen_tdigest, tdigest_reads),
    "xf": (gen_xf, lambda k: xf_reads(k, PROBE)),
}


# ---- the run ------------------------------------------------------------------------

class Run:
    def __init__(self, args, family):
        self.args = args
        self.family = family
        self.own = family in OWN_FAMILIES
        self.rng = random.Random(f"{args.seed}:{family}")
        self.gen = Gen(self.rng, small=args.small)
        self.tmp = tempfile.mkdtemp(prefix=f"crossload-{family}-")
        self.servers = []
        self.ours = self.start(args.redbloom, "ours")
        self.theirs = None if self.own else self.start(args.redisbloom, "theirs")
        self.fresh_ours = self.start(args.redbloom, "fresh-ours")
        self.fresh_theirs = None if self.own else self.start(args.redisbloom, "fresh-theirs")
        self.keys = [f"{family}:{i}" for i in range(3)]
        self.sent = 0
        self.diffs = Counter()
        self.shown = Counter()
        self.record = []
        self.counts = Counter()
        self.next_progress = args.progress or 0

    def start(self, module, name, dbfilename="dump.rdb", workdir=None):
        d = workdir or os.path.join(self.tmp, name)
        os.makedirs(d, exist_ok=True)
        s = Server(self.args.server, module, d, dbfilename)
        self.servers.append(s)
        return s

    def close(self):
        for s in self.servers:
            s.stop()
        shutil.rmtree(self.tmp, ignore_errors=True)

    @property
    def reference(self):
        return self.ours if self.own else self.theirs

    def diff(self, kind, detail):
        self.diffs[kind] += 1
        if self.shown[kind] < 3:
            self.shown[kind] += 1
            print(f"DIFF [{self.family}] {kind}: {detail}"[:600], flush=True)

    def both(self, argv, record=True):
        """Sends argv to both sides (redbloom alone for its own families); compares."""
        argv = [enc(a) for a in argv]
        self.sent += 1
        b = self.ours.conn.call(argv)
        if self.own:
            a = b
        else:
            a = self.theirs.conn.call(argv)
            if a != b and not self.bytes_differ_by_design(argv):
                self.diff(f"reply {argv[0].decode().upper()}", f"{argv[:6]} RB {a[:200]} / ours {b[:200]}")
                # Re-sync: one difference must not make every later reply of the key differ.
                if len(argv) > 1 and argv[0].upper() not in (b"DEBUG", b"FLUSHALL"):
                    self.theirs.conn.call([b"DEL", argv[1]])
                    self.ours.conn.call([b"DEL", argv[1]])
        if record and self.args.record:
            self.record.append({"argv": [x.decode("latin-1") for x in argv],
                                "resp": None if self.bytes_differ_by_design(argv)
                                else a.decode("latin-1")})
        return a, b

    def bytes_differ_by_design(self, argv):
        """A TopK DUMP: RedisBloom saves its heap records with pointers in them, redbloom
        its generator's state there (docs/compat.md, TopK RDB); a WBF DUMP holds the time
        of its creation (recorded, not compared)."""
        return self.family in ("topk", "wbf") and argv[0].upper() == b"DUMP"

    def reads(self, key):
        return FAMILIES[self.family][1](key)

    def answers(self, conn, key):
        return [conn.call([enc(a) for a in r]) for r in self.reads(key)]

    def key_type(self, conn, key):
        return conn.call(["TYPE", key])

    def settle(self):
        """Gives a t-digest of one observation a second one before any save (diff 15)."""
        if self.family != "tdigest":
            return
        for key in self.keys:
            info = self.ours.conn.call(["TDIGEST.INFO", key])
            if info.startswith(b"*") and b"Merged nodes\r\n:0\r\n+Unmerged nodes\r\n:1\r\n" in info:
                self.both(["TDIGEST.ADD", key, "0"])

    def round_trip(self):
        r = self.rng.random()
        self.settle()
        if r < 0.3:
            before = {k: self.answers(self.reference.conn, k) for k in self.keys} if self.own else None
            self.both(["DEBUG", "RELOAD"])
            self.counts["debug reload"] += 1
            if self.own:
                for k in self.keys:
                    if self.answers(self.ours.conn, k) != before[k]:
                        self.diff("own reload", k)
            return
        key = self.rng.choice(self.keys)
        before = self.answers(self.reference.conn, key) if self.own else None
        a, b = self.both(["DUMP", key], record=True)
        if a == b"$-1\r\n":
            return
        self.counts["dump/restore"] += 1
        payload = a.split(b"\r\n", 1)[1][:-2]
        # Each side restores its own payload (the recorded stream: the reference's).
        self.both(["DEL", key])
        if self.own:
            self.both(["RESTORE", key, "0", payload])
        else:
            ours_payload = b.split(b"\r\n", 1)[1][:-2]
            ra = self.theirs.conn.call([b"RESTORE", enc(key), b"0", payload])
            rb = self.ours.conn.call([b"RESTORE", enc(key), b"0", ours_payload])
            self.sent += 2
            if ra != rb:
                self.diff("own RESTORE", f"{key} RB {ra} / ours {rb}")
            if self.args.record:
                self.record.append({"argv": ["RESTORE", key, "0", payload.decode("latin-1")],
                                    "resp": ra.decode("latin-1")})
        if self.own and self.answers(self.ours.conn, key) != before:
            self.diff("own dump/restore", key)

    def checkpoint(self):
        self.settle()
        self.counts["checkpoints"] += 1
        for key in self.keys:
            a, b = self.both(["DUMP", key])
            if a == b"$-1\r\n" and b == b"$-1\r\n":
                continue
            if a != b and not self.bytes_differ_by_design([b"DUMP"]):
                self.diff("DUMP bytes", key)
            payloads = {"rb": a.split(b"\r\n", 1)[1][:-2] if a[:1] == b"$" else None,
                        "rd": b.split(b"\r\n", 1)[1][:-2] if b[:1] == b"$" else None}
            writers = {"rb": self.reference, "rd": self.ours}
            want = {w: self.answers(writers[w].conn, key) for w in payloads if payloads[w]}
            targets = [("ours", self.ours), ("fresh-ours", self.fresh_ours)]
            if not self.own:
                targets += [("theirs", self.theirs), ("fresh-theirs", self.fresh_theirs)]
            for writer, payload in payloads.items():
                if payload is None or (self.own and writer == "rb"):
                    continue
                for name, server in targets:
                    copy = f"{key}~{writer}"
                    reply = server.conn.call([b"RESTORE", enc(copy), b"0", payload, b"REPLACE"])
                    self.counts["cross restores"] += 1
                    if reply != b"+OK\r\n":
                        self.diff(f"RESTORE of {writer}'s payload into {name}", f"{key}: {reply[:120]}")
                        continue
                    got = self.answers(server.conn, copy)
                    if got != want[writer]:
                        self.diff(f"{writer}'s payload answers otherwise in {name}",
                                  f"{key}: {[(x[:80], y[:80]) for x, y in zip(got, want[writer]) if x != y][:2]}")
                    server.conn.call(["DEL", copy])
                    if server is self.reference and self.args.record:
                        self.record.append({"argv": ["RESTORE", copy, "0", payload.decode("latin-1")],
                                            "resp": "+OK\r\n"})
                        for r, ans in zip(self.reads(copy), got):
                            self.record.append({"argv": [enc(x).decode("latin-1") for x in r],
                                                "resp": ans.decode("latin-1")})
                        self.record.append({"argv": ["DEL", copy], "resp": ":1\r\n"})

    def rdb_cross(self):
        """Each side SAVEs; a fresh server of the other kind (and of its own) loads it."""
        self.settle()
        sides = [("ours", self.ours, self.args.redbloom)]
        if not self.own:
            sides.append(("theirs", self.theirs, self.args.redisbloom))
        for name, side, _ in sides:
            assert side.conn.call(["SAVE"]) == b"+OK\r\n"
            src = os.path.join(side.dir, side.dbfilename)
            want = {k: self.answers(side.conn, k) for k in self.keys}
            loaders = [("redbloom", self.args.redbloom)]
            if not self.own:
                loaders.append(("RedisBloom", self.args.redisbloom))
            for lname, module in loaders:
                d = tempfile.mkdtemp(dir=self.tmp)
                shutil.copy(src, os.path.join(d, "in.rdb"))
                try:
                    s = Server(self.args.server, module, d, "in.rdb")
                except SystemExit as e:
                    self.diff(f"{lname} refuses {name}'s RDB", str(e))
                    continue
                self.counts["rdb loads"] += 1
                for k in self.keys:
                    got = self.answers(s.conn, k)
                    if got != want[k]:
                        self.diff(f"{name}'s RDB answers otherwise in {lname}",
                                  f"{k}: {[(x[:80], y[:80]) for x, y in zip(got, want[k]) if x != y][:2]}")
                s.stop()

    def run(self, n):
        gen = FAMILIES[self.family][0]
        self.both(["FLUSHALL"])
        if self.family == "tdigest":
            # Digests to merge into themselves from the start (weights past 2^63 sooner).
            for key, c in zip(self.keys, ["1", "2", "100"]):
                self.both(["TDIGEST.CREATE", key, "COMPRESSION", c])
                self.both(["TDIGEST.ADD", key, "1", "2", "3", DBL_MAX, "-" + DBL_MAX])
        since = 0
        checkpoints = 0
        while self.sent < n:
            key = self.rng.choice(self.keys)
            r = self.rng.random()
            if r < 0.02:
                self.round_trip()
            elif r < 0.05:
                for q in self.reads(key):
                    self.both(q)
            else:
                self.both(gen(self.gen, key))
            since += 1
            if since >= self.args.checkpoint:
                since = 0
                self.checkpoint()
                checkpoints += 1
                if self.args.rdb_every and checkpoints % self.args.rdb_every == 0:
                    self.rdb_cross()
            if self.args.progress and self.sent >= self.next_progress:
                self.next_progress += self.args.progress
                print(f"  {self.family}: {self.sent} commands, {dict(self.counts)}, "
                      f"{sum(self.diffs.values())} differences", flush=True)
            if not self.ours.alive() or (self.theirs and not self.theirs.alive()):
                self.diff("server died", "")
                break
        self.checkpoint()
        self.rdb_cross()


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--families", default=",".join(FAMILIES))
    p.add_argument("--commands", type=int, default=2000)
    p.add_argument("--seed", default="1")
    p.add_argument("--redisbloom", default=REDISBLOOM)
    p.add_argument("--redbloom", default=None)
    p.add_argument("--server", default="redis-server")
    p.add_argument("--checkpoint", type=int, default=50)
    p.add_argument("--rdb-every", type=int, default=20)
    p.add_argument("--progress", type=int, default=0,
                   help="print the figures every N commands")
    p.add_argument("--small", action="store_true",
                   help="items of at most 1000 bytes (recorded corpora)")
    p.add_argument("--record", default=None,
                   help="a file name pattern with {family}: the recorded stream")
    args = p.parse_args()
    if not args.redbloom:
        target = os.environ.get("CARGO_TARGET_DIR", os.path.join(os.path.dirname(HERE), "target"))
        args.redbloom = os.path.join(target, "release", "libredbloom.so")
    own_only = all(f in OWN_FAMILIES for f in args.families.split(","))
    for so in (args.redbloom,) if own_only else (args.redbloom, args.redisbloom):
        if not os.path.isfile(so):
            raise SystemExit(f"no module {so} (--redbloom / --redisbloom)")
    total = 0
    for family in args.families.split(","):
        started = time.time()
        run = Run(args, family)
        try:
            run.run(args.commands)
        finally:
            run.close()
        total += sum(run.diffs.values())
        print(f"{family}: {run.sent} commands, {dict(run.counts)}, "
              f"{sum(run.diffs.values())} differences, {time.time() - started:.0f} s", flush=True)
        for kind, count in run.diffs.most_common():
            print(f"  {count:6}  {kind}")
        if args.record:
            path = args.record.format(family=family)
            with open(path, "w") as f:
                json.dump({"generator": "scripts/cross-load-fuzz.py --seed %s --commands %d --record"
                           % (args.seed, args.commands),
                           "reference": "redbloom" if run.own else "RedisBloom 2.4.20",
                           "commands": run.record}, f, indent=0, ensure_ascii=False)
            print("recorded", path, len(run.record), "commands")
    sys.exit(1 if total else 0)


if __name__ == "__main__":
    main()
