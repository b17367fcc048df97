#!/usr/bin/env python3
"""Measures what docs/sizing.md shows and draws its charts.

Starts redis-server on a free loopback port with the release module, then for each filter
family measures (1) bytes per item of a reserved filter at 1 % and 0.1 %, (2) MEMORY USAGE
as items are added, reserved vs auto-created, and (3) the false-positive rate as a filter
fills, by probing items that were never added. Writes docs/sizing/*.csv and *.svg.

Run with `make sizing-charts` (installs redis-py and matplotlib into .venv).
"""

import csv
import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import redis

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "docs" / "sizing"
MODULE = Path(os.environ.get("REDBLOOM_MODULE", ROOT / "target" / "release" / "libredbloom.so"))
PROBES = 100_000
BATCH = 1000


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server():
    port = free_port()
    workdir = tempfile.mkdtemp(prefix="redbloom-sizing-")
    proc = subprocess.Popen(
        ["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", "",
         "--dir", workdir, "--loadmodule", str(MODULE)],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    client = redis.Redis(host="127.0.0.1", port=port)
    for _ in range(500):
        try:
            client.ping()
            return proc, client
        except redis.ConnectionError:
            time.sleep(0.02)
    proc.kill()
    sys.exit("redis-server did not start")


def has_command(r, name):
    try:
        r.execute_command(name, "probe:missing")
    except redis.ResponseError as e:
        return "unknown command" not in str(e).lower()
    return True


def add(r, command, key, items):
    pipe = r.pipeline(transaction=False)
    for start in range(0, len(items), BATCH):
        pipe.execute_command(command, key, *items[start:start + BATCH])
    pipe.execute()


def fp_rate(r, command, key, count=PROBES):
    positives = 0
    for start in range(0, count, BATCH):
        probes = [f"absent:{i}" for i in range(start, min(count, start + BATCH))]
        positives += sum(int(x) for x in r.execute_command(command, key, *probes))
    return positives / count


# family: (reserve(rate, capacity) command, add-many command, check-many command)
def families(r):
    f = {
        "BF": (lambda e, n: ["BF.RESERVE", e, n], "BF.MADD", "BF.MEXISTS"),
        "BF NONSCALING": (lambda e, n: ["BF.RESERVE", e, n, "NONSCALING"], "BF.MADD", "BF.MEXISTS"),
        "CF bucket 2": (lambda e, n: ["CF.RESERVE", n, "BUCKETSIZE", 2], None, "CF.MEXISTS"),
        "CF bucket 4": (lambda e, n: ["CF.RESERVE", n, "BUCKETSIZE", 4], None, "CF.MEXISTS"),
        "CBF": (lambda e, n: ["CBF.RESERVE", e, n], "CBF.MADD", "CBF.MEXISTS"),
    }
    if blocked_supported(r):
        f["BF BLOCKED"] = (lambda e, n: ["BF.RESERVE", e, n, "BLOCKED"], "BF.MADD", "BF.MEXISTS")
    if has_command(r, "WBF.CARD"):
        f["WBF"] = (lambda e, n: ["WBF.RESERVE", e, n], "WBF.MADD", "WBF.MEXISTS")
    return f


def blocked_supported(r):
    try:
        r.execute_command("BF.RESERVE", "probe:blocked", 0.01, 100, "BLOCKED")
        info = r.execute_command("BF.DEBUG", "probe:blocked")
        r.delete("probe:blocked")
        return any(b"blocked" in line.lower() for line in info)
    except redis.ResponseError:
        r.delete("probe:blocked")
        return False


def cf_add(r, key, items):
    pipe = r.pipeline(transaction=False)
    for start in range(0, len(items), BATCH):
        pipe.execute_command("CF.INSERT", key, "NOCREATE", "ITEMS", *items[start:start + BATCH])
    pipe.execute()


def fill(r, family, key, add_cmd, items):
    if add_cmd is None:
        cf_add(r, key, items)
    else:
        add(r, add_cmd, key, items)


def bytes_per_item(r, fams):
    rows = []
    capacity = 1_000_000
    for name, (reserve, add_cmd, check) in fams.items():
        for rate in (0.01, 0.001):
            if name.startswith("CF") and rate != 0.01:
                continue
            r.flushall()
            args = reserve(rate, capacity)
            r.execute_command(args[0], "k", *args[1:])
            usage = r.memory_usage("k")
            items = [f"item:{i}" for i in range(capacity)]
            fill(r, name, "k", add_cmd, items)
            measured = fp_rate(r, check, "k")
            rows.append({
                "family": name,
                "requested error rate": "" if name.startswith("CF") else rate,
                "capacity": capacity,
                "MEMORY USAGE reserved": usage,
                "bytes per item": round(usage / capacity, 3),
                "measured FP at capacity": round(measured, 5),
            })
            print(rows[-1], flush=True)
    return rows


def memory_curves(r):
    """MEMORY USAGE vs items: reserved for 1M vs auto-created from the defaults."""
    step = 50_000
    top = 1_000_000
    series = {
        "BF reserved 1M @1%": (["BF.RESERVE", "k", 0.01, top], "BF.MADD"),
        "BF auto-created": (None, "BF.MADD"),
        "CBF reserved 1M @1%": (["CBF.RESERVE", "k", 0.01, top], "CBF.MADD"),
        "CBF auto-created": (None, "CBF.MADD"),
        "CF reserved 1M": (["CF.RESERVE", "k", top], None),
    }
    rows = []
    for name, (reserve, add_cmd) in series.items():
        r.flushall()
        if reserve:
            r.execute_command(*reserve)
        for n in range(0, top + 1, step):
            if n > 0:
                items = [f"item:{i}" for i in range(n - step, n)]
                if add_cmd is None:
                    cf_add(r, "k", items)
                else:
                    add(r, add_cmd, "k", items)
            usage = r.memory_usage("k") or 0
            rows.append({"series": name, "items": n, "MEMORY USAGE": usage})
        print(name, rows[-1], flush=True)
    return rows


def fp_curves(r, fams):
    """FP rate as a filter of capacity 100k fills to 200 % (scaling filters grow)."""
    capacity = 100_000
    step = 10_000
    rows = []
    for name, (reserve, add_cmd, check) in fams.items():
        r.flushall()
        args = reserve(0.01, capacity)
        r.execute_command(args[0], "k", *args[1:])
        top = capacity if "NONSCALING" in name else 2 * capacity
        for n in range(step, top + 1, step):
            items = [f"item:{i}" for i in range(n - step, n)]
            try:
                fill(r, name, "k", add_cmd, items)
            except redis.ResponseError:
                break
            rows.append({"family": name, "fill %": 100 * n // capacity,
                         "measured FP %": round(100 * fp_rate(r, check, "k", 50_000), 4)})
        print(name, rows[-1], flush=True)
    return rows


def write_csv(name, rows):
    with open(OUT / name, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
        w.writeheader()
        w.writerows(rows)


def charts(memory, fp):
    import matplotlib
    matplotlib.use("svg")
    import matplotlib.pyplot as plt
    plt.rcParams["svg.fonttype"] = "none"

    fig, ax = plt.subplots(figsize=(7, 4.2))
    for series in dict.fromkeys(row["series"] for row in memory):
        pts = [(row["items"], row["MEMORY USAGE"] / 2**20) for row in memory if row["series"] == series]
        ax.plot([p[0] / 1000 for p in pts], [p[1] for p in pts], marker=".", label=series)
    ax.set_xlabel("items added (thousands)")
    ax.set_ylabel("MEMORY USAGE (MiB)")
    ax.set_title("Memory as a filter fills: reserved for 1M vs auto-created")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(OUT / "memory-vs-items.svg", metadata={"Date": None})

    fig, ax = plt.subplots(figsize=(7, 4.2))
    for family in dict.fromkeys(row["family"] for row in fp):
        pts = [(row["fill %"], row["measured FP %"]) for row in fp if row["family"] == family]
        ax.plot([p[0] for p in pts], [p[1] for p in pts], marker=".", label=family)
    ax.axhline(1.0, color="grey", linestyle="--", linewidth=0.8, label="requested 1 %")
    ax.set_xlabel("items added, % of the reserved capacity (100,000)")
    ax.set_ylabel("measured false-positive rate (%)")
    ax.set_title("False positives as a filter fills (requested 1 %)")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(OUT / "fp-vs-fill.svg", metadata={"Date": None})


def main():
    if not MODULE.exists():
        sys.exit(f"{MODULE} not found: run `cargo build --release` first")
    OUT.mkdir(parents=True, exist_ok=True)
    proc, r = start_server()
    try:
        fams = families(r)
        write_csv("bytes-per-item.csv", bytes_per_item(r, fams))
        memory = memory_curves(r)
        write_csv("memory-vs-items.csv", memory)
        fp = fp_curves(r, fams)
        write_csv("fp-vs-fill.csv", fp)
        charts(memory, fp)
    finally:
        proc.terminate()
        proc.wait()


if __name__ == "__main__":
    main()
