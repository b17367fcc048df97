"""Merging here equals the server's BF/CBF/CF.MERGE byte for byte; docs/python.md's
map-reduce example runs (worker processes build, the parent merges and pushes once)."""

import pathlib
import re
import subprocess
import sys

import pytest

import redbloom

ROOT = pathlib.Path(__file__).resolve().parents[2]
PARTS = [["p%d-%d" % (p, i) for i in range(700)] + ["shared"] for p in range(3)]


@pytest.mark.parametrize("family,make,intersect", [
    ("bf", lambda: redbloom.BloomFilter(3000, 0.01), False),
    ("bf", lambda: redbloom.BloomFilter(3000, 0.01), True),
    ("cbf", lambda: redbloom.CountingBloomFilter(3000, 0.01), False),
    ("cf", lambda: redbloom.CuckooFilter(3000), False),
])
def test_local_merge_equals_server_merge(server, name, family, make, intersect):
    r = server.client()
    filters = []
    for p, items in enumerate(PARTS):
        f = make()
        f.add_many(items)
        f.push(r, "%s:%d" % (name, p))
        filters.append(f)
    merged = redbloom.merge(filters, intersect=intersect)
    words = [family.upper() + ".MERGE", name + ":m", 3] + ["%s:%d" % (name, p) for p in range(3)]
    r.execute_command(*(words + (["INTERSECT"] if intersect else [])))
    assert merged.chunks() == redbloom.pull(r, name + ":m").chunks()
    assert "shared" in merged
    if not intersect:
        assert all(merged.contains_many(PARTS[0] + PARTS[1] + PARTS[2]))


def test_merge_refusals():
    with pytest.raises(ValueError, match="another shape"):
        redbloom.merge([redbloom.BloomFilter(100), redbloom.BloomFilter(200)])
    with pytest.raises(ValueError, match="only filters of one type merge"):
        redbloom.merge([redbloom.BloomFilter(100), redbloom.CuckooFilter(100)])
    with pytest.raises(ValueError, match="--intersect applies to bf and cbf"):
        redbloom.merge([redbloom.CuckooFilter(100)], intersect=True)
    with pytest.raises(redbloom.FilterError, match="static filters do not merge"):
        redbloom.merge([redbloom.StaticFilter.build(["a"], 0.01)])
    with pytest.raises(ValueError, match="no filter to merge"):
        redbloom.merge([])


def test_docs_map_reduce_example_runs(server, tmp_path):
    """Each ```python block of docs/python.md marked `# run by the tests` runs as written,
    with REDIS_URL pointing at a test server."""
    text = (ROOT / "docs" / "python.md").read_text()
    blocks = [b for b in re.findall(r"```python\n(.*?)```", text, re.S) if "# run by the tests" in b]
    assert blocks, "docs/python.md has no example marked to run"
    for n, block in enumerate(blocks):
        script = tmp_path / ("example%d.py" % n)
        script.write_text(block)
        done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                              env={"REDIS_URL": server.url, "PATH": "/usr/bin:/bin"},
                              cwd=tmp_path, timeout=120)
        assert done.returncode == 0, done.stderr
        expected = re.search(r"# prints: (.*)", block)
        if expected:
            assert done.stdout.strip() == expected.group(1).strip()
