"""push / pull / snapshots against real servers, and the CLI reading Python's files and
vice versa."""

import subprocess

import pytest
import redis

import redbloom
import servers

ITEMS = ["k%d" % i for i in range(5000)]


def dump(client, key):
    return client.execute_command("DUMP", key, NEVER_DECODE=True)


def test_push_is_byte_identical_to_server_build(client, name):
    key = "{%s}bf" % name
    local = redbloom.BloomFilter(2000, 0.01)
    local.add_many(ITEMS)
    local.push(client, key)
    ref = key + ":ref"
    client.execute_command("BF.RESERVE", ref, 0.01, 2000)
    client.execute_command("BF.MADD", ref, *ITEMS)
    assert dump(client, key) == dump(client, ref)
    assert client.keys("*redbloom-load*") == []


def test_push_cuckoo_counting_static(client, name):
    for f, build in [
        (redbloom.CuckooFilter(1000), [["CF.RESERVE", "{k}", 1000]]),
        (redbloom.CountingBloomFilter(1000), [["CBF.RESERVE", "{k}", 0.01, 1000]]),
    ]:
        key = "{%s}%s" % (name, f.family)
        f.add_many(ITEMS[:900])
        f.push(client, key)
        ref = key + ":ref"
        for words in build:
            client.execute_command(*[ref if w == "{k}" else w for w in words])
        for item in ITEMS[:900]:
            client.execute_command(f.family.upper() + ".ADD", ref, item)
        assert dump(client, key) == dump(client, ref), f.family
    s = redbloom.StaticFilter.build(ITEMS, 0.01)
    s.push(client, name + ":sf")
    assert client.execute_command("SF.MEXISTS", name + ":sf", "k1", "zz") == [1, 0]


def test_push_refuses_an_existing_key(client, name):
    client.set(name, "v")
    with pytest.raises(redbloom.LoadRefused, match="already exists"):
        redbloom.BloomFilter(100).push(client, name)
    assert client.get(name) == b"v"


@pytest.mark.parametrize("error", [KeyboardInterrupt, redis.exceptions.ConnectionError])
def test_interrupted_push_leaves_the_key_as_it_was(client, name, error):
    local = redbloom.BloomFilter(20_000_000, 0.001)  # ~36 MB: several rounds
    local.add_many(ITEMS)
    seen = []

    def progress(sent):
        seen.append(sent)
        raise error("stop")

    with pytest.raises(error):
        local.push(client, name, progress)
    assert seen and client.exists(name) == 0
    assert client.exists(redbloom.temp_key(name)) == 0


def test_push_honours_the_server_defaults(server, name):
    r = server.client()
    r.config_set("bf.bf-expansion-factor", 4)
    try:
        with pytest.raises(ValueError, match="makes another filter than the one built here"):
            redbloom.BloomFilter(100).push(r, name)
        assert r.exists(name) == 0
        redbloom.BloomFilter(100, 0.01, 4).push(r, name)
    finally:
        r.config_set("bf.bf-expansion-factor", 2)
    assert redbloom.pull(r, name).info()["expansion_rate"] == 4


def test_pull_every_family(client, name):
    client.execute_command("BF.RESERVE", name + "b", 0.01, 500)
    client.execute_command("BF.MADD", name + "b", *ITEMS[:800])
    client.execute_command("CF.RESERVE", name + "c", 500)
    client.execute_command("CF.RESERVE", name + "e", 500)
    client.execute_command("CF.ADD", name + "c", "x")
    client.execute_command("CBF.ADD", name + "n", "x")
    client.execute_command("SF.BUILD", name + "s", 0.01, "ITEMS", "x", "y")
    on_server = dict(redbloom._io.info_pairs(client.execute_command("BF.INFO", name + "b")))
    for suffix, cls, n in [("b", redbloom.BloomFilter, int(on_server["Number of items inserted"])), ("c", redbloom.CuckooFilter, 1),
                           ("n", redbloom.CountingBloomFilter, 1), ("s", redbloom.StaticFilter, 2),
                           ("e", redbloom.CuckooFilter, 0)]:
        f = redbloom.pull(client, name + suffix)
        assert type(f) is cls and len(f) == n, suffix
        assert ("x" in f) == (n > 0 and suffix != "b")
    # an empty Cuckoo filter pulled, filled and pushed equals the server's
    e = redbloom.pull(client, name + "e")
    e.add("q")
    client.execute_command("CF.ADD", name + "e", "q")
    e.push(client, name + "e2")
    assert dump(client, name + "e2") == dump(client, name + "e")
    with pytest.raises(KeyError):
        redbloom.pull(client, name + "missing")
    client.set(name + "str", "v")
    with pytest.raises(TypeError, match="not a bf, cf, cbf, static or xf filter"):
        redbloom.pull(client, name + "str")


def test_pull_from_a_replica(replicated, name):
    primary, replica = replicated
    p = primary.client()
    p.execute_command("BF.MADD", name, *ITEMS[:100])
    p.wait(1, 5000)
    f = redbloom.pull(replica.client(), name)
    assert f.chunks() == redbloom.pull(p, name).chunks()


def test_server_errors_name_node_and_key(server, name):
    r = server.client()
    r.set(name, "v")
    with pytest.raises(TypeError, match="not a sharded filter descriptor"):
        redbloom.ShardedFilter(r, name).layout()
    r.delete(name)
    f = redbloom.ShardedFilter(r, name)
    f.create(100, shards=1)
    member = f.layout().members[0]
    r.delete(member)
    r.set(member, "not a filter")
    with pytest.raises(redis.exceptions.ResponseError) as e:
        f.add(["x"])
    assert isinstance(e.value, redbloom.ServerError)
    assert e.value.key == member and e.value.node == "localhost:%d" % server.port
    assert "WRONGTYPE Operation against a key holding the wrong kind of value" in str(e.value)
    assert str(e.value).endswith("(node localhost:%d, key %s)" % (server.port, member))


def test_cli_reads_python_snapshots_and_back(server, name, tmp_path):
    r = server.client()
    local = redbloom.BloomFilter(1000)
    local.add_many(ITEMS[:500])
    path = tmp_path / "py.snap"
    local.save(path)
    out = subprocess.run([servers.cli_path(), "check", str(path), "k1", "k499", "nope"],
                         check=True, capture_output=True, text=True).stdout
    assert out.split() == ["1", "1", "0"]
    r.execute_command("CF.RESERVE", name, 1000)
    for item in ITEMS[:300]:
        r.execute_command("CF.ADD", name, item)
    cli_file = tmp_path / "cli.snap"
    subprocess.run([servers.cli_path(), "export", server.url, name, str(cli_file)], check=True,
                   capture_output=True)
    f = redbloom.load(cli_file)
    assert type(f) is redbloom.CuckooFilter and len(f) == 300
    assert f.chunks() == redbloom.pull(r, name).chunks()
    # Python's save of the same filter is the CLI's file, byte for byte.
    f.save(tmp_path / "again.snap")
    assert (tmp_path / "again.snap").read_bytes() == cli_file.read_bytes()
