#!/usr/bin/env python3
"""SF.EXISTS and SF.MEXISTS x100 on the ribbon against encoding 1's fuse filter, one server:
server CPU per queried item from INFO commandstats, rounds interleaved (which encoding goes
first alternates), medians.

    scripts/sf-encodings-compare.py /abs/path/libredbloom.so [N] [ROUNDS] [redis-server]
"""
import statistics, sys

import resp_server

module = sys.argv[1]
n = int(sys.argv[2]) if len(sys.argv) > 2 else 1_000_000
rounds = int(sys.argv[3]) if len(sys.argv) > 3 else 7
server_bin = sys.argv[4] if len(sys.argv) > 4 else "redis-server"

proc, c = resp_server.start(server_bin, module, 24000)
try:
    c.call("CONFIG", "SET", "bf.max-filter-bytes", str(1 << 40))
    items = ["user:%d" % i for i in range(n)]
    c.call("SF.BUILD", "ribbon", "0.01", "ITEMS", *items)
    c.call("SF.BUILD", "fuse", "0.01", "ENCODING", "FUSE", "ITEMS", *items)

    def usec(command):
        return resp_server.usec(c, command)

    def run(key, batch, queries):
        cmd = "sf.exists" if batch == 1 else "sf.mexists"
        before = usec(cmd)
        for i in range(0, len(queries), batch * 100):
            group = queries[i:i + batch * 100]
            for j in range(0, len(group), batch):
                if batch == 1:
                    c.send("SF.EXISTS", key, group[j])
                else:
                    c.send("SF.MEXISTS", key, *group[j:j + batch])
            for _ in range(0, len(group), batch):
                c.read()
        return 1000.0 * (usec(cmd) - before) / len(queries)

    for batch, count in ((1, 100_000), (100, 1_000_000)):
        for kind in ("present", "absent"):
            ratios, rib, fus = [], [], []
            for r in range(rounds):
                prefix = "user:" if kind == "present" else "absent%d:" % r
                queries = ["%s%d" % (prefix, (i * 7919 + r) % n) for i in range(count)]
                # Alternate which encoding goes first (the first of a pair can read dearer).
                if r % 2 == 0:
                    a, b = run("ribbon", batch, queries), run("fuse", batch, queries)
                else:
                    b, a = run("fuse", batch, queries), run("ribbon", batch, queries)
                rib.append(a); fus.append(b); ratios.append(a / b)
            name = "SF.EXISTS" if batch == 1 else "SF.MEXISTS x100"
            print("%-16s %-7s ribbon %.1f ns/item, fuse %.1f ns/item, ribbon/fuse median %.2f (%.2f - %.2f)"
                  % (name, kind, statistics.median(rib), statistics.median(fus),
                     statistics.median(ratios), min(ratios), max(ratios)))
finally:
    proc.terminate()
    proc.wait()
