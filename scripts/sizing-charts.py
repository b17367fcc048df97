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
# Probes of the bytes-per-item table: 1M absent items, so its rates have 3 digits.
CAPACITY_PROBES = 1_000_000
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


def command_usec(r, command):
    """Server CPU (INFO commandstats usec) spent in `command` since the last CONFIG RESETSTAT."""
    stats = r.info("commandstats")
    return stats.get(f"cmdstat_{command.lower()}", {}).get("usec", 0)


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
            r.config_resetstat()
            fill(r, name, "k", add_cmd, items)
            add_usec = command_usec(r, add_cmd or "CF.INSERT")
            full = r.memory_usage("k")
            measured = fp_rate(r, check, "k", CAPACITY_PROBES)
            check_usec = command_usec(r, check)
            rows.append({
                "family": name,
                "requested error rate": "" if name.startswith("CF") else rate,
                "capacity": capacity,
                "MEMORY USAGE reserved": usage,
                "MEMORY USAGE at capacity": full,
                "bytes per item at capacity": round(full / capacity, 2),
                "measured FP at capacity": round(measured, 5),
                "server ns per add": round(1000 * add_usec / capacity, 1),
                "server ns per check": round(1000 * check_usec / CAPACITY_PROBES, 1),
            })
            print(rows[-1], flush=True)
    return rows


SPEED_ROUNDS = 5
SPEED_ITEMS = 200_000


def speed_ratios(r, fams):
    """Server CPU per item (INFO commandstats) of 1,000-item add and check batches, relative
    to BF at 1 % in the same round: every family in turn, SPEED_ROUNDS rounds, the median
    of the per-round ratios (so a loaded machine slows both sides of each ratio alike).
    Each filter is reserved for 1,000,000 at 1 % on a fresh server of its own and gets
    SPEED_ITEMS items: each pays for its first touch of its pages alike (on a shared server
    the first filter of a round would pay it and the next reuse the freed, resident pages)."""
    per_round = {name: [] for name in fams}
    items = [f"item:{i}" for i in range(SPEED_ITEMS)]
    for _ in range(SPEED_ROUNDS):
        ns = {}
        for name, (reserve, add_cmd, check) in fams.items():
            proc, fresh = start_server()
            try:
                args = reserve(0.01, 1_000_000)
                fresh.execute_command(args[0], "k", *args[1:])
                fresh.config_resetstat()
                fill(fresh, name, "k", add_cmd, items)
                add_usec = command_usec(fresh, add_cmd or "CF.INSERT")
                fp_rate(fresh, check, "k", SPEED_ITEMS)
                ns[name] = (add_usec, command_usec(fresh, check))
            finally:
                proc.terminate()
                proc.wait()
        base = ns["BF"]
        for name, (add_usec, check_usec) in ns.items():
            per_round[name].append((add_usec / base[0], check_usec / base[1]))
    median = lambda xs: sorted(xs)[len(xs) // 2]
    return {name: (median([a for a, _ in rs]), median([c for _, c in rs]))
            for name, rs in per_round.items()}


def memory_curves(r, fams):
    """MEMORY USAGE vs items (log-spaced, 1k to 1M): reserved for 1M vs auto-created."""
    top = 1_000_000
    points = sorted({int(round(10 ** (3 + i / 8))) for i in range(0, 25)} | {0})
    series = {
        "BF reserved 1M @1%": (["BF.RESERVE", "k", 0.01, top], "BF.MADD"),
        "BF auto-created": (None, "BF.MADD"),
        "CBF reserved 1M @1%": (["CBF.RESERVE", "k", 0.01, top], "CBF.MADD"),
        "CBF auto-created": (None, "CBF.MADD"),
        "CF reserved 1M": (["CF.RESERVE", "k", top], None),
    }
    if "BF BLOCKED" in fams:
        series["BF BLOCKED reserved 1M @1%"] = (["BF.RESERVE", "k", 0.01, top, "BLOCKED"], "BF.MADD")
    if "WBF" in fams:
        series["WBF reserved 1M @1%"] = (["WBF.RESERVE", "k", 0.01, top], "WBF.MADD")
    rows = []
    for name, (reserve, add_cmd) in series.items():
        r.flushall()
        if reserve:
            r.execute_command(*reserve)
        done = 0
        for n in points:
            if n > done:
                items = [f"item:{i}" for i in range(done, n)]
                if add_cmd is None:
                    cf_add(r, "k", items)
                else:
                    add(r, add_cmd, "k", items)
                done = n
            usage = r.memory_usage("k") or 0
            rows.append({"series": name, "items": n, "MEMORY USAGE": usage})
        print(name, rows[-1], flush=True)
    return rows


def cuckoo_growth(r):
    """CF.RESERVE k 1000000: MEMORY USAGE, sub-filters and FP rate as it fills."""
    capacity = 1_000_000
    step = 20_000
    r.flushall()
    r.execute_command("CF.RESERVE", "k", capacity)
    rows = []
    for n in range(step, capacity + 1, step):
        cf_add(r, "k", [f"item:{i}" for i in range(n - step, n)])
        info = r.execute_command("CF.INFO", "k")
        if not isinstance(info, dict):  # redis-py parses it into a dict, older ones did not
            info = dict(zip(info[0::2], info[1::2]))
        fields = {(k.decode() if isinstance(k, bytes) else k): v for k, v in info.items()}
        rows.append({"items": n, "MEMORY USAGE": r.memory_usage("k"),
                     "sub-filters": int(fields["Number of filters"]),
                     "measured FP %": round(100 * fp_rate(r, "CF.MEXISTS", "k", 50_000), 4)})
    print("CF growth", rows[-1], flush=True)
    return rows


def window_presence(r):
    """WBF: the share of items still found against their age in windows, for a counted
    window (age = items added since, / capacity) and a timed one (age = time since, /
    window). 200 cohorts of items, each probed once at the end."""
    rows = []
    capacity = 2000
    cohort = 100
    r.flushall()
    r.execute_command("WBF.RESERVE", "counted", 0.01, capacity)
    total = 4 * capacity
    for start in range(0, total, cohort):
        add(r, "WBF.MADD", "counted", [f"c:{i}" for i in range(start, start + cohort)])
    for start in range(0, total, cohort):
        found = sum(r.execute_command("WBF.MEXISTS", "counted",
                                      *[f"c:{i}" for i in range(start, start + cohort)]))
        age = (total - start - cohort / 2) / capacity
        rows.append({"window": "counted", "age in windows": round(age, 3),
                     "P(still present)": found / cohort})
    window_ms = 2000
    r.execute_command("WBF.RESERVE", "timed", 0.01, 100_000, "WINDOW", window_ms)
    stamps = []
    began = time.time()
    while time.time() - began < 2 * window_ms / 1000:
        i = len(stamps)
        add(r, "WBF.MADD", "timed", [f"t:{i}:{j}" for j in range(cohort)])
        stamps.append(time.time())
        time.sleep(0.02)
    probed = time.time()
    for i, stamp in enumerate(stamps):
        found = sum(r.execute_command("WBF.MEXISTS", "timed", *[f"t:{i}:{j}" for j in range(cohort)]))
        rows.append({"window": "timed (2 s)", "age in windows": round((probed - stamp) * 1000 / window_ms, 3),
                     "P(still present)": found / cohort})
    print("WBF presence", rows[-1], flush=True)
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


MB = 1e6  # one unit on every page: MB = 10^6 bytes


def charts(memory, fp, growth, presence):
    import matplotlib
    matplotlib.use("svg")
    import matplotlib.pyplot as plt
    plt.rcParams["svg.fonttype"] = "none"

    fig, ax = plt.subplots(figsize=(7, 4.2))
    for series in dict.fromkeys(row["series"] for row in memory):
        pts = [(row["items"], row["MEMORY USAGE"] / MB) for row in memory
               if row["series"] == series and row["items"] > 0]
        ax.plot([p[0] for p in pts], [p[1] for p in pts], marker=".", label=series)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("items added (log scale)")
    ax.set_ylabel("MEMORY USAGE (MB, log scale)")
    ax.set_title("Memory as a filter fills: reserved for 1M vs auto-created")
    ax.grid(alpha=0.3, which="both")
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(OUT / "memory-vs-items.svg", metadata={"Date": None})

    fig, ax = plt.subplots(figsize=(7, 4.2))
    styles = {"CBF": dict(linestyle="--", marker="x", linewidth=2.2),
              "BF": dict(linestyle="-", marker="o", markersize=3)}
    for family in dict.fromkeys(row["family"] for row in fp):
        pts = [(row["fill %"], row["measured FP %"]) for row in fp if row["family"] == family]
        label = family + (" (the same bits as BF: the lines coincide)" if family == "CBF" else "")
        ax.plot([p[0] for p in pts], [p[1] for p in pts], label=label,
                **styles.get(family, dict(marker=".")))
    ax.axhline(1.0, color="grey", linestyle=":", linewidth=0.8, label="requested 1 %")
    ax.set_xlabel("items added, % of the reserved capacity (100,000)")
    ax.set_ylabel("measured false-positive rate (%)")
    ax.set_title("False positives as a filter fills (requested 1 %)")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(OUT / "fp-vs-fill.svg", metadata={"Date": None})

    fig, ax = plt.subplots(figsize=(7, 4.2))
    xs = [row["items"] / 1000 for row in growth]
    ax.plot(xs, [row["MEMORY USAGE"] / MB for row in growth], color="tab:blue", label="MEMORY USAGE (MB)")
    ax.set_xlabel("items added (thousands) to CF.RESERVE k 1000000")
    ax.set_ylabel("MEMORY USAGE (MB)", color="tab:blue")
    second = next((row["items"] for row in growth if row["sub-filters"] > 1), None)
    if second:
        ax.axvline(second / 1000, color="grey", linestyle=":", linewidth=0.8)
        ax.annotate(f"second sub-filter at {second // 1000}k ({100 * second // 1_000_000} %)",
                    (second / 1000, growth[-1]["MEMORY USAGE"] / MB * 0.6), fontsize=8)
    ax2 = ax.twinx()
    ax2.plot(xs, [row["measured FP %"] for row in growth], color="tab:red", marker=".", label="FP rate (%)")
    ax2.set_ylabel("measured false-positive rate (%)", color="tab:red")
    ax.set_title("Cuckoo filter reserved for 1M items: memory and false positives")
    ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(OUT / "cuckoo-growth.svg", metadata={"Date": None})

    fig, ax = plt.subplots(figsize=(7, 4.2))
    for window in dict.fromkeys(row["window"] for row in presence):
        pts = sorted((row["age in windows"], row["P(still present)"]) for row in presence
                     if row["window"] == window)
        ax.plot([p[0] for p in pts], [p[1] for p in pts], marker=".", label=f"{window} window")
    ax.axvline(1.0, color="grey", linestyle=":", linewidth=0.8)
    ax.set_xlabel("age of the item, in windows")
    ax.set_ylabel("share of items still found")
    ax.set_title("WBF: every item found for a full window, then forgotten")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(OUT / "wbf-presence.svg", metadata={"Date": None})



# The decision picture of docs/choosing.md: one question per box, each answered yes or no;
# a yes leads right to what to use, a no leads down to the next question.


def flowchart(path):
    """docs/choosing.svg: hand-laid boxes and arrows, as plain SVG."""
    w, h, box_w, box_h, step = 900, 900, 330, 46, 90
    qx, fx, fw = 80, 540, 340
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" viewBox="0 0 {w} {h}" '
           'font-family="sans-serif" font-size="13">',
           '<defs><marker id="a" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="7" markerHeight="7" '
           'orient="auto"><path d="M0,0 L10,5 L0,10 z" fill="#444"/></marker></defs>',
           '<rect width="100%" height="100%" fill="white"/>']

    def box(x, y, text, fill, width=box_w):
        out.append(f'<rect x="{x}" y="{y}" width="{width}" height="{box_h}" rx="10" fill="{fill}" stroke="#444"/>')
        lines = text.split("\n")
        for i, line in enumerate(lines):
            ty = y + box_h / 2 + (i - (len(lines) - 1) / 2) * 16 + 5
            out.append(f'<text x="{x + width / 2}" y="{ty}" text-anchor="middle">{line}</text>')

    def label(x, y, text, anchor="start"):
        out.append(f'<text x="{x}" y="{y}" text-anchor="{anchor}" fill="#333" font-style="italic">{text}</text>')

    def right(y):
        """A yes from the question at y to the answer beside it; the label well above the line."""
        mid = y + box_h / 2
        out.append(f'<line x1="{qx + box_w}" y1="{mid}" x2="{fx}" y2="{mid}" stroke="#444" marker-end="url(#a)"/>')
        label((qx + box_w + fx) / 2, mid - 8, "yes", "middle")

    def down(y, text="no"):
        """A no from the question at y to the box below it; the label right of the line."""
        x = qx + box_w / 2
        out.append(f'<line x1="{x}" y1="{y + box_h}" x2="{x}" y2="{y + step}" stroke="#444" marker-end="url(#a)"/>')
        label(x + 8, y + box_h + (step - box_h) / 2 + 4, text)

    q, f = "#eef3fb", "#e8f6e8"
    ys = [20 + i * step for i in range(10)]
    box(qx, ys[0], "Counts, top-k or quantiles of a stream,\nrather than \u201chave I seen it?\u201d", q)
    box(fx, ys[0], "CMS / TOPK / TDIGEST (RedisBloom\u2019s,\nbyte-compatible): see sketches.md", f, fw)
    right(ys[0])
    down(ys[0])
    box(qx, ys[1], "Items must age out by themselves?\n(the last N items, or the last T ms)", q)
    box(fx, ys[1], "WBF: WBF.RESERVE \u2026 [WINDOW ms]\n(redbloom only)", f, fw)
    right(ys[1])
    down(ys[1])
    box(qx, ys[2], "Is the whole set known in advance\n(rebuilt, never grown)?", q)
    box(fx, ys[2], "SF: SF.BUILD rate ITEMS \u2026 | FROM set\n(the smallest; redbloom only)", f, fw)
    right(ys[2])
    down(ys[2])
    box(qx, ys[3], "Must the data go back to RedisBloom?", q)
    box(fx, ys[3], "BF.RESERVE, or CF.RESERVE to delete\n(RedisBloom can load them)", f, fw)
    right(ys[3])
    down(ys[3])
    box(qx, ys[4], "Is the number of items unknown\n(100 or 100M: it depends)?", q)
    box(fx, ys[4], "XF: XF.ADD creates, grows at the rate\nasked; deletes, counts (redbloom only)", f, fw)
    right(ys[4])
    down(ys[4])
    box(qx, ys[5], "Items must be counted, or deleted\nat an error rate you choose?", q)
    box(fx, ys[5], "CBF: CBF.RESERVE rate capacity\n(redbloom only; 4\u00d7 BF\u2019s memory)", f, fw)
    right(ys[5])
    down(ys[5])
    box(qx, ys[6], "Items must be deleted\n(1.5\u20133 % false positives will do)?", q)
    box(fx, ys[6], "CF: CF.RESERVE capacity", f, fw)
    right(ys[6])
    down(ys[6])
    box(qx, ys[7], "Over ~100M items?", q)
    box(fx, ys[7], "BF.RESERVE \u2026 BLOCKED\n(faster lookups; redbloom only)", f, fw)
    right(ys[7])
    down(ys[7])
    box(qx, ys[8], "Is the maximum number of items known?", q)
    box(fx, ys[8], "BF.RESERVE \u2026 NONSCALING\n(exactly the rate asked for, less memory)", f, fw)
    right(ys[8])
    down(ys[8])
    box(qx, ys[9], "BF.RESERVE (scaling;\nreserve the capacity you expect)", f)
    out.append("</svg>")
    path.write_text("\n".join(out) + "\n")



# The tables of docs/sizing.md and docs/choosing.md, written from the measurements between
# `<!-- sizing-charts: NAME -->` and `<!-- /sizing-charts -->`.
COMMANDS = {
    "BF": "BF.RESERVE k {rate} 1000000",
    "BF NONSCALING": "BF.RESERVE k {rate} 1000000 NONSCALING",
    "CF bucket 2": "CF.RESERVE k 1000000",
    "CF bucket 4": "CF.RESERVE k 1000000 BUCKETSIZE 4",
    "CBF": "CBF.RESERVE k {rate} 1000000",
    "BF BLOCKED": "BF.RESERVE k {rate} 1000000 BLOCKED",
    "WBF": "WBF.RESERVE k {rate} 1000000",
}
REDISBLOOM_LOADS = {"BF": "yes", "BF NONSCALING": "yes", "CF bucket 2": "yes", "CF bucket 4": "yes",
                    "CBF": "no (`RBcountBF`)", "BF BLOCKED": "no", "WBF": "no (`RBslideBF`)"}


def percent(x):
    x *= 100
    return f"{x:.2f} %" if x >= 0.1 else f"{x:.3f} %"


def tables(rows, speeds):
    by = {(row["family"], row["requested error rate"]): row for row in rows}
    sizing = ["| filter | command | bytes per item at capacity | measured FP rate at capacity |",
              "|---|---|---|---|"]
    choosing = ["| filter | at 1 %: bytes per item, measured FP | at 0.1 %: bytes per item, measured FP "
                "| add, check: server CPU per item vs BF | RedisBloom can load |", "|---|---|---|---|---|"]
    for family in dict.fromkeys(row["family"] for row in rows):
        for row in rows:
            if row["family"] != family:
                continue
            rate = row["requested error rate"]
            label = family if family.startswith("CF") else f"{family}, {percent(rate).replace('.00 ', ' ').replace('0.10 %', '0.1 %')}"
            command = COMMANDS[family].format(rate=rate)
            sizing.append(f"| {label} | `{command}` | {row['bytes per item at capacity']:.2f} | "
                          f"{percent(row['measured FP at capacity'])} |")
        at = {rate: by.get((family, rate)) for rate in (0.01, 0.001, "")}
        one = at[0.01] or at[""]
        tenth = at[0.001]
        cell = lambda r: f"{r['bytes per item at capacity']:.2f} B, {percent(r['measured FP at capacity'])}"
        speed = f"{speeds[family][0]:.1f}×, {speeds[family][1]:.1f}×"
        choosing.append(f"| {family} | {cell(one)} | {cell(tenth) if tenth else '— (rate set by the bucket size)'} "
                        f"| {speed} | {REDISBLOOM_LOADS[family]} |")
    return {"bytes-per-item": sizing, "choosing": choosing}


def write_tables(rows, speeds):
    for name, lines in tables(rows, speeds).items():
        for page in (ROOT / "docs" / "sizing.md", ROOT / "docs" / "choosing.md"):
            text = page.read_text()
            begin = f"<!-- sizing-charts: {name} -->\n"
            if begin not in text:
                continue
            start = text.index(begin) + len(begin)
            end = text.index("<!-- /sizing-charts -->", start)
            page.write_text(text[:start] + "\n".join(lines) + "\n" + text[end:])


def main():
    if not MODULE.exists():
        sys.exit(f"{MODULE} not found: run `cargo build --release` first")
    OUT.mkdir(parents=True, exist_ok=True)
    proc, r = start_server()
    try:
        fams = families(r)
        table = bytes_per_item(r, fams)
        speeds = speed_ratios(r, fams)
        for row in table:
            at_one_percent = row["requested error rate"] in (0.01, "")
            ratios = speeds[row["family"]] if at_one_percent else ("", "")
            row["add CPU vs BF"], row["check CPU vs BF"] = (
                round(x, 2) if x != "" else x for x in ratios)
        write_csv("bytes-per-item.csv", table)
        write_tables(table, speeds)
        memory = memory_curves(r, fams)
        write_csv("memory-vs-items.csv", memory)
        fp = fp_curves(r, fams)
        write_csv("fp-vs-fill.csv", fp)
        growth = cuckoo_growth(r)
        write_csv("cuckoo-growth.csv", growth)
        presence = window_presence(r) if "WBF" in fams else []
        if presence:
            write_csv("wbf-presence.csv", presence)
        charts(memory, fp, growth, presence)
        flowchart(ROOT / "docs" / "choosing.svg")
    finally:
        proc.terminate()
        proc.wait()


if __name__ == "__main__":
    main()
