"""Local filters hold the server's exact bytes: built here, they equal the filter the
server's RESERVE + adds build (SCANDUMP chunk for chunk), and answer the same."""

import pytest

import redbloom
from redbloom import _drive, _io

ITEMS = ["item:%d" % i for i in range(3000)] + [b"\x00\xffbytes", "caf\u00e9", ""]
PROBES = ["item:%d" % i for i in range(2900, 6000)] + ["caf\u00e9", "cafe"]


def server_chunks(client, prefix, key):
    return _drive.run_sync(client, _io.scandump_op(prefix, key))


@pytest.mark.parametrize("args,reserve", [
    ((1000, 0.01), ["BF.RESERVE", 0.01, 1000]),
    ((500, 0.001, 4), ["BF.RESERVE", 0.001, 500, "EXPANSION", 4]),
    ((5000, 0.02, None, True), ["BF.RESERVE", 0.02, 5000, "NONSCALING"]),
    ((800, 0.01, None, False, True), ["BF.RESERVE", 0.01, 800, "BLOCKED"]),
])
def test_bloom_equals_server(server, name, args, reserve):
    r = server.client()
    local = redbloom.BloomFilter(*args)
    items = ITEMS if "NONSCALING" not in reserve else ITEMS[:4000]
    local.add_many(items)
    r.execute_command(reserve[0], name, *reserve[1:])
    for at in range(0, len(items), 500):
        r.execute_command("BF.MADD", name, *items[at:at + 500])
    assert local.chunks() == server_chunks(r, "BF", name)
    assert local.contains_many(PROBES) == [bool(x) for x in
                                           r.execute_command("BF.MEXISTS", name, *PROBES)]
    info = dict(_io.info_pairs(r.execute_command("BF.INFO", name)))
    assert len(local) == int(info["Number of items inserted"])


def test_single_adds_equal_server(server, name):
    r = server.client()
    local = redbloom.BloomFilter(100, 0.01)
    r.execute_command("BF.RESERVE", name, 0.01, 100)
    for item in ITEMS[:400]:
        assert local.add(item) == bool(r.execute_command("BF.ADD", name, item))
    assert local.chunks() == server_chunks(r, "BF", name)
    assert local.info()["number_of_filters"] == 3


def test_cuckoo_equals_server(server, name):
    r = server.client()
    local = redbloom.CuckooFilter(1000)
    r.execute_command("CF.RESERVE", name, 1000)
    for item in ITEMS[:2500]:
        local.add(item)
        r.execute_command("CF.ADD", name, item)
    assert local.chunks() == server_chunks(r, "CF", name)
    assert local.contains_many(PROBES) == [bool(x) for x in
                                           r.execute_command("CF.MEXISTS", name, *PROBES)]
    assert len(local) == 2500


def test_counting_equals_server(server, name):
    r = server.client()
    local = redbloom.CountingBloomFilter(1000, 0.01)
    r.execute_command("CBF.RESERVE", name, 0.01, 1000)
    local.add_many(ITEMS[:1500] + ITEMS[:10])
    r.execute_command("CBF.MADD", name, *(ITEMS[:1500] + ITEMS[:10]))
    assert local.chunks() == server_chunks(r, "CBF", name)
    assert len(local) == 1510


def test_static_equals_server(server, name):
    r = server.client()
    local = redbloom.StaticFilter.build(ITEMS, 0.001)
    r.execute_command("SF.BUILD", name, 0.001, "ITEMS", *ITEMS)
    assert local.chunks() == server_chunks(r, "SF", name)
    assert all(local.contains_many(ITEMS))
    assert len(local) == len(set(ITEMS))
    with pytest.raises(TypeError, match="static filter takes no items"):
        local.add("x")


def test_item_types():
    f = redbloom.BloomFilter(100)
    f.add("caf\u00e9")
    assert "caf\u00e9".encode() in f  # str is its UTF-8 bytes, as redis-py sends it
    assert bytearray(b"caf\xc3\xa9") in f
    message = ("redbloom items are str (sent as UTF-8, as redis-py sends it) or bytes, not int; "
               "pass str(x) or bytes (e.g. str(42) or (42).to_bytes(8, 'little'))")
    with pytest.raises(TypeError) as e:
        f.add(42)
    assert str(e.value) == message
    with pytest.raises(TypeError, match="not float"):
        _ = 1.5 in f
    with pytest.raises(TypeError, match="not int"):
        f.add_many(["a", 3])
    with pytest.raises(TypeError, match="not one str or bytes"):
        f.add_many("abc")
    assert len(f) == 1  # the refused batch added nothing before its bad item was found
    f.add_many(x for x in ["g1", "g2"])  # any iterable
    assert f.contains_many({"g1"}) == [True]


class Text(str):
    pass


class Raw(bytes):
    pass


def test_batch_paths_equal_server(server, name):
    """A batch long enough to be worked on without the GIL (a list frozen into a tuple),
    a generator, a tuple, short lists and single adds all read the same bytes: str
    (ASCII or not, and a subclass) as UTF-8, bytes (and a subclass) and bytearray as they
    are; the server's BF.MADD of the same items builds the same filter."""
    r = server.client()
    items = []
    for i in range(10_000):
        kind = i % 6
        items.append(["k%d" % i, "caf\u00e9-%d" % i, b"\x00b%d" % i, bytearray(b"ba%d" % i),
                      Text("t%d" % i), Raw(b"r%d" % i)][kind])
    sent = [bytes(x) if isinstance(x, bytearray) else x for x in items]
    r.execute_command("BF.RESERVE", name, 0.01, 4000)
    for at in range(0, len(sent), 1000):
        r.execute_command("BF.MADD", name, *sent[at:at + 1000])
    want = server_chunks(r, "BF", name)
    whole, gen, tup, short, single = (redbloom.BloomFilter(4000) for _ in range(5))
    whole.add_many(items)
    gen.add_many(x for x in items)
    tup.add_many(tuple(items))
    for at in range(0, len(items), 700):
        short.add_many(items[at:at + 700])
    for x in items:
        single.add(x)
    for f in (whole, gen, tup, short, single):
        assert f.chunks() == want
    assert whole.contains_many(items + ["absent"]) == [True] * len(items) + [False]
    assert len(whole) == int(dict(_io.info_pairs(r.execute_command(
        "BF.INFO", name)))["Number of items inserted"])


def test_unencodable_str_refused_whole():
    """A str with a lone surrogate has no UTF-8 (redis-py refuses to send it too): the
    batch is refused before any item is added."""
    f = redbloom.BloomFilter(100)
    for batch in (["ok", "\ud800"], ["ok"] * 9000 + ["\ud800"]):
        with pytest.raises(UnicodeEncodeError):
            f.add_many(batch)
        assert len(f) == 0
    with pytest.raises(UnicodeEncodeError):
        _ = "\ud800" in f


def test_memory_is_the_servers_bytes():
    """A local filter holds the bytes BF.INFO counts on a server plus under 1 KiB: its
    native heap (the extension counts every allocation it has not freed) and its Python
    object."""
    import gc
    import sys
    from redbloom._native import _heap_bytes
    redbloom.BloomFilter(10).add_many(["warm-up"])
    # Earlier tests' garbage is freed first, and none during the measure.
    gc.collect()
    gc.disable()
    try:
        before = _heap_bytes()
        f = redbloom.BloomFilter(200_000, 0.01)
        f.add_many("m%d" % i for i in range(200_000))
        held = _heap_bytes() - before + sys.getsizeof(f)
        size = f.info()["size"]
        assert size <= held < size + 1024, (size, held)
        del f
        assert _heap_bytes() == before
    finally:
        gc.enable()


def test_bad_arguments():
    with pytest.raises(ValueError, match="--error-rate must be between 0 and 1"):
        redbloom.BloomFilter(100, 1.5)
    with pytest.raises(ValueError, match="--capacity must be at least 1"):
        redbloom.BloomFilter(0)
    with pytest.raises(ValueError, match="exclude each other"):
        redbloom.BloomFilter(100, 0.01, 2, True)
    with pytest.raises(OverflowError):
        redbloom.BloomFilter(-1)
    with pytest.raises(ValueError, match="static filters"):
        redbloom.StaticFilter.build(["a"], 0.6)


def test_full_nonscaling_filter_refuses_like_server(server, name):
    r = server.client()
    local = redbloom.BloomFilter(10, 0.01, None, True)
    r.execute_command("BF.RESERVE", name, 0.01, 10, "NONSCALING")
    items = ["n%d" % i for i in range(40)]
    with pytest.raises(redbloom.FilterError, match="item 11 of the input: the filter refuses it"):
        local.add_many(items)
    reply = r.execute_command("BF.MADD", name, *items)
    assert reply[:10] == [True] * 10 and isinstance(reply[10], Exception)
    assert local.chunks() == server_chunks(r, "BF", name)  # both stopped at the 11th


def test_snapshot_round_trip(tmp_path):
    for f in (redbloom.BloomFilter(100), redbloom.CuckooFilter(100),
              redbloom.CountingBloomFilter(100)):
        f.add_many(["a", "b"])
        path = tmp_path / (f.family + ".snap")
        f.save(path)
        back = redbloom.load(path)
        assert type(back) is type(f) and back.chunks() == f.chunks() and "a" in back
    bad = tmp_path / "bad.snap"
    data = bytearray((tmp_path / "bf.snap").read_bytes())
    data[-1] ^= 1
    bad.write_bytes(bytes(data))
    with pytest.raises(redbloom.SnapshotError,
                       match="damaged snapshot file \\(its checksum does not match\\)"):
        redbloom.load(bad)
    assert issubclass(redbloom.SnapshotError, ValueError)
