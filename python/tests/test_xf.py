"""ExpandableFilter (XF.*): local filters with the server's bytes, push and pull."""

import pickle
import subprocess

import pytest
import redis

import redbloom
import servers

ITEMS = ["k%d" % i for i in range(5000)]
ABSENT = ["absent%d" % i for i in range(2000)]
#: XF.INFO's fields and info()'s names of them.
INFO_FIELDS = {"Error rate": "error_rate", "Number of items": "number_of_items",
               "Capacity": "capacity", "Expansions": "expansions", "Partitions": "partitions",
               "Size": "size", "Bits per item": "bits_per_item",
               "Error rate bound": "error_rate_bound"}


def dump(client, key):
    return client.execute_command("DUMP", key, NEVER_DECODE=True)


def scandump(client, key):
    out, it = [], 0
    while True:
        nxt, data = client.execute_command("XF.SCANDUMP", key, it, NEVER_DECODE=True)
        if nxt == 0:
            return out
        out.append((nxt, data))
        it = nxt


def test_local_answers():
    f = redbloom.ExpandableFilter(0.01, 1000)
    assert f.family == "xf" and len(f) == 0 and "a" not in f
    assert f.add("a") is True and f.add(b"a") is True  # str as UTF-8: the same item, twice
    assert len(f) == 2 and f.count("a") == 2 and "a" in f
    assert f.remove("a") is True and f.count("a") == 1
    assert f.remove("a") is True and "a" not in f and f.remove("a") is False
    f.add_many(ITEMS)
    assert f.contains_many(ITEMS) == [True] * len(ITEMS)
    assert sum(f.contains_many(ABSENT)) < 0.03 * len(ABSENT)
    i = f.info()
    assert i["number_of_items"] == len(ITEMS) == len(f)
    assert i["expansions"] > 0 and i["error_rate"] == 0.01
    assert 0 < i["error_rate_bound"] <= 0.01
    assert repr(f) == "<redbloom xf filter: 5000 items>"
    g = pickle.loads(pickle.dumps(f))
    assert type(g) is redbloom.ExpandableFilter and g.chunks() == f.chunks()
    assert redbloom.ExpandableFilter().info()["capacity"] == \
        redbloom.ExpandableFilter(0.01, 100).info()["capacity"]


def test_bad_arguments():
    with pytest.raises(ValueError, match=r"error rate must be in \[1e-9, 1\)"):
        redbloom.ExpandableFilter(0)
    with pytest.raises(ValueError, match=r"error rate must be in"):
        redbloom.ExpandableFilter(1.0)
    with pytest.raises(ValueError, match=r"capacity must be in \[1, 2\^40\]"):
        redbloom.ExpandableFilter(0.01, 0)
    with pytest.raises(ValueError, match=r"capacity must be in"):
        redbloom.ExpandableFilter(0.01, 2**41)
    with pytest.raises(TypeError):
        redbloom.ExpandableFilter("0.01")
    f = redbloom.ExpandableFilter()
    with pytest.raises(TypeError, match="not int"):
        f.add(1)
    with pytest.raises(TypeError):
        f.add_many(["a", 2])
    with pytest.raises(TypeError):
        f.contains_many([None])
    with pytest.raises(TypeError):
        f.remove(1.5)
    assert len(f) == 0
    chunks = redbloom.ExpandableFilter().chunks()
    with pytest.raises(ValueError, match="x: not an expandable filter's dump"):
        redbloom.xf_from_chunks([(1, b"junk")], "x")
    with pytest.raises(ValueError, match="malformed or inconsistent XF data"):
        redbloom.xf_from_chunks(chunks[:1])  # the header without its partitions


def test_push_is_byte_identical_to_server_build(client, name):
    for rate, cap, reserve in [(0.01, 1000, True), (0.001, 50, True), (0.01, 100, False)]:
        key = "{%s}xf%s" % (name, cap)
        ref = key + ":ref"
        local = redbloom.ExpandableFilter(rate, cap)
        local.add_many(ITEMS)
        for item in ITEMS[:300:3]:
            assert local.remove(item)
        local.push(client, key)
        if reserve:
            client.execute_command("XF.RESERVE", ref, rate, "CAPACITY", cap)
        client.execute_command("XF.MADD", ref, *ITEMS)  # without RESERVE: the defaults
        for item in ITEMS[:300:3]:
            assert client.execute_command("XF.DEL", ref, item) == 1
        assert dump(client, key) == dump(client, ref)
        assert scandump(client, key) == local.chunks() == scandump(client, ref)
        probe = ITEMS[:1000] + ABSENT
        assert client.execute_command("XF.MEXISTS", key, *probe) == \
            [int(b) for b in local.contains_many(probe)]
        assert client.execute_command("XF.CARD", key) == len(local)
        for item in ITEMS[:4] + ABSENT[:4]:
            assert client.execute_command("XF.COUNT", key, item) == local.count(item)
        # Size counts allocations, which depend on how the filter was made: the local one
        # was grown by adds, as the reference was (the pushed key was loaded: sized exact).
        info = dict(redbloom._io.info_pairs(client.execute_command("XF.INFO", ref)))
        mine = local.info()
        assert [float(info[k]) for k in INFO_FIELDS] == [mine[k] for k in INFO_FIELDS.values()]
    assert client.keys("*redbloom-load*") == []


def test_pull_answers_every_added_item(client, name):
    key = "{%s}xf" % name
    client.execute_command("XF.RESERVE", key, 0.01, "CAPACITY", 200)
    client.execute_command("XF.MADD", key, *ITEMS)
    f = redbloom.pull(client, key)
    assert type(f) is redbloom.ExpandableFilter and len(f) == len(ITEMS)
    assert f.contains_many(ITEMS) == [True] * len(ITEMS)
    assert f.chunks() == scandump(client, key)
    assert f.contains_many(ABSENT) == \
        [bool(x) for x in client.execute_command("XF.MEXISTS", key, *ABSENT)]
    # the pulled filter, added to here and pushed, equals the server's after the same add
    f.add("more")
    client.execute_command("XF.ADD", key, "more")
    f.push(client, key + "2")
    assert dump(client, key + "2") == dump(client, key)


def test_push_refuses_an_existing_key(client, name):
    client.execute_command("XF.ADD", name, "x")
    before = dump(client, name)
    with pytest.raises(redbloom.LoadRefused, match="already exists"):
        redbloom.ExpandableFilter().push(client, name)
    assert dump(client, name) == before


@pytest.mark.parametrize("error", [KeyboardInterrupt, redis.exceptions.ConnectionError])
@pytest.mark.parametrize("existing", [False, True])
def test_interrupted_push_leaves_the_key_as_it_was(client, name, error, existing):
    local = redbloom.ExpandableFilter()
    local.add_many(ITEMS)
    if existing:  # an interrupted push over a key another push wrote meanwhile
        client.execute_command("XF.ADD", name, "x")
    before = dump(client, name)
    seen = []

    def progress(sent):
        seen.append(sent)
        raise error("stop")

    with pytest.raises((error, redbloom.LoadRefused)):
        local.push(client, name, progress)
    assert dump(client, name) == before
    assert bool(seen) != existing
    assert client.exists(redbloom.temp_key(name)) == 0


def test_save_load_round_trip(tmp_path):
    f = redbloom.ExpandableFilter(0.001, 50)
    f.add_many(ITEMS)
    for item in ITEMS[:100:7]:
        assert f.remove(item)
    path = tmp_path / "xf.snap"
    f.save(path)
    assert path.read_bytes().startswith(b"redbloom-snapshot 2 xf ")
    g = redbloom.load(path)
    assert type(g) is redbloom.ExpandableFilter and len(g) == len(f)
    assert g.chunks() == f.chunks() and g.info() == f.info()
    assert g.contains_many(ITEMS + ABSENT) == f.contains_many(ITEMS + ABSENT)
    assert g.count(ITEMS[1]) == f.count(ITEMS[1])
    # The same through from_chunks (the family's name), as pull makes it.
    h = redbloom.from_chunks("xf", f.chunks())
    assert type(h) is redbloom.ExpandableFilter and h.chunks() == f.chunks()
    # A damaged file is refused, naming it.
    data = bytearray(path.read_bytes())
    data[-20] ^= 1
    bad = tmp_path / "bad.snap"
    bad.write_bytes(bytes(data))
    with pytest.raises(redbloom.SnapshotError, match="damaged snapshot file"):
        redbloom.load(bad)


def test_cli_reads_python_xf_snapshots_and_back(server, name, tmp_path):
    r = server.client()
    local = redbloom.ExpandableFilter()
    local.add_many(ITEMS[:500])
    path = tmp_path / "py.snap"
    local.save(path)
    out = subprocess.run([servers.cli_path(), "check", str(path), "k1", "k499", "k500"],
                         check=True, capture_output=True, text=True).stdout
    assert out.split() == ["1", "1", "1" if "k500" in local else "0"]
    r.execute_command("XF.MADD", name, *ITEMS[:300])
    cli_file = tmp_path / "cli.snap"
    subprocess.run([servers.cli_path(), "export", server.url, name, str(cli_file)], check=True,
                   capture_output=True)
    f = redbloom.load(cli_file)
    assert type(f) is redbloom.ExpandableFilter and len(f) == 300
    assert f.chunks() == redbloom.pull(r, name).chunks() == scandump(r, name)
    # Python's save of the same filter is the CLI's file, byte for byte.
    f.save(tmp_path / "again.snap")
    assert (tmp_path / "again.snap").read_bytes() == cli_file.read_bytes()
    # The CLI's load of the same items is the filter the server's adds make.
    items_file = tmp_path / "items.txt"
    items_file.write_text("".join(item + "\n" for item in ITEMS[:300]))
    subprocess.run([servers.cli_path(), "load", server.url, name + ":cli", "--type", "xf",
                    "--file", str(items_file)], check=True, capture_output=True)
    assert scandump(r, name + ":cli") == scandump(r, name)
