#!/usr/bin/env python3
"""Measures what a merge costs in false positives (docs/choosing.md, "Merging") and draws it.

Starts redis-server on a free loopback port with the module, builds eight Bloom filters
`BF.RESERVE f<j> 0.01 10000` of 10,000 distinct items each (each at its capacity), and for
k = 1..8 merges the first k with BF.MERGE into a new key. For each result it records the
fill ratio (set bits of the link's array, counted in its BF.SCANDUMP, over the link's bits
from BF.DEBUG), the rate `redbloom inspect` estimates from that fill (fill^hashes; for the
BLOCKED layout the mean over 512-bit blocks of (set bits / 512)^hashes), and the rate measured
over 100,000 items never added. It checks that every item of every merged filter answers 1.
Classic (`MBbloom--`) and BLOCKED (`RBblockBF`) layouts. Writes docs/sizing/merge-fp.csv and
docs/sizing/merge-fp.svg.

Run with `make merge-chart` (installs redis-py and matplotlib into .venv).
"""

import csv
import os
import sys
from pathlib import Path

import redis

sys.path.insert(0, str(Path(__file__).resolve().parent))
sizing = __import__("sizing-charts")

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "docs" / "sizing"
CAPACITY = 10_000
FILTERS = 8
PROBES = 100_000
BLOCK_BYTES = 64


def popcount(data):
    return int.from_bytes(data, "little").bit_count()


def link_bits(r, key):
    """(bits, hashes) of the key's only link (BF.DEBUG)."""
    line = r.execute_command("BF.DEBUG", key)[1].decode()
    fields = dict(w.split(":", 1) for w in line.split() if ":" in w)
    return int(fields["bits"]), int(fields["hashes"])


def link_data(r, key):
    """The link's array: the BF.SCANDUMP chunks after the header."""
    data = bytearray()
    it, _ = r.execute_command("BF.SCANDUMP", key, 0)
    while True:
        it, chunk = r.execute_command("BF.SCANDUMP", key, it)
        if it == 0:
            return bytes(data)
        data += chunk


def estimate(data, bits, hashes, blocked):
    if not blocked:
        return (popcount(data) / bits) ** hashes
    blocks = [data[i:i + BLOCK_BYTES] for i in range(0, len(data), BLOCK_BYTES)]
    return sum((popcount(b) / (8 * BLOCK_BYTES)) ** hashes for b in blocks) / len(blocks)


def all_found(r, key, items):
    for start in range(0, len(items), sizing.BATCH):
        if not all(r.execute_command("BF.MEXISTS", key, *items[start:start + sizing.BATCH])):
            return False
    return True


def measure(r):
    rows = []
    for layout, extra in (("classic", []), ("BLOCKED", ["BLOCKED"])):
        r.flushall()
        parts = []
        for j in range(FILTERS):
            items = [f"f{j}:{i}" for i in range(CAPACITY)]
            r.execute_command("BF.RESERVE", f"f{j}", 0.01, CAPACITY, *extra)
            sizing.add(r, "BF.MADD", f"f{j}", items)
            parts.append(items)
        for k in range(1, FILTERS + 1):
            key = f"merged{k}"
            r.execute_command("BF.MERGE", key, k, *[f"f{j}" for j in range(k)])
            bits, hashes = link_bits(r, key)
            data = link_data(r, key)
            if not all(all_found(r, key, parts[j]) for j in range(k)):
                sys.exit(f"{layout} k={k}: an item of a source answers 0")
            rows.append({
                "layout": layout,
                "filters merged": k,
                "items": k * CAPACITY,
                "fill ratio": round(popcount(data) / bits, 4),
                "estimated FP %": round(100 * estimate(data, bits, hashes, layout == "BLOCKED"), 4),
                "measured FP %": round(100 * sizing.fp_rate(r, "BF.MEXISTS", key, PROBES), 4),
            })
            print(rows[-1], flush=True)
    return rows


def chart(rows):
    import matplotlib
    matplotlib.use("svg")
    import matplotlib.pyplot as plt
    plt.rcParams["svg.fonttype"] = "none"

    fig, ax = plt.subplots(figsize=(7, 4.2))
    for layout, marker in (("classic", "o"), ("BLOCKED", "s")):
        pts = [row for row in rows if row["layout"] == layout]
        xs = [row["fill ratio"] for row in pts]
        ax.plot(xs, [row["measured FP %"] for row in pts], marker=marker, markersize=4,
                label=f"{layout}: measured")
        ax.plot(xs, [row["estimated FP %"] for row in pts], linestyle="--", linewidth=1,
                color=ax.lines[-1].get_color(), label=f"{layout}: estimated from the fill (inspect)")
        if layout == "classic":
            # k = 1..4 one by one; the last four crowd near a full array: one label.
            for row in pts[:4]:
                ax.annotate(f"k={row['filters merged']}", (row["fill ratio"], row["measured FP %"]),
                            textcoords="offset points", xytext=(6, -12), fontsize=7)
            ax.annotate(f"k={pts[4]['filters merged']}…{pts[-1]['filters merged']}",
                        (pts[-1]["fill ratio"], pts[-1]["measured FP %"]),
                        textcoords="offset points", xytext=(-14, -34), fontsize=7,
                        arrowprops=dict(arrowstyle="-", linewidth=0.5, color="grey"))
    ax.axhline(1.0, color="grey", linestyle=":", linewidth=0.8, label="requested 1 %")
    ax.set_yscale("log")
    ax.set_xlabel("fill ratio of the merged link (set bits / bits)")
    ax.set_ylabel("false-positive rate (%)")
    ax.set_title("BF.MERGE of k filters, each BF.RESERVE 0.01 10000 with 10,000 items")
    ax.grid(alpha=0.3, which="both")
    ax.legend(fontsize=7, loc="lower right")
    fig.tight_layout()
    fig.savefig(OUT / "merge-fp.svg", metadata={"Date": None})


def main():
    proc, r = sizing.start_server()
    try:
        rows = measure(r)
    finally:
        proc.kill()
    with open(OUT / "merge-fp.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
        w.writeheader()
        w.writerows(rows)
    chart(rows)


if __name__ == "__main__":
    main()
