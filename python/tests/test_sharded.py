"""Sharded filters: the CLI's layout over a 3-master cluster and a single server; a filter
created by either the CLI or Python is used by the other."""

import subprocess

import pytest

import redbloom
import servers

ITEMS = ["u%d" % i for i in range(4000)]


def cli(*args):
    return subprocess.run([servers.cli_path(), *map(str, args)], check=True,
                          capture_output=True, text=True).stdout


def url(client, server, cluster):
    return cluster.url if hasattr(client, "get_node_from_key") else server.url


def test_python_created_cli_used(client, server, cluster, name):
    f = redbloom.ShardedFilter(client, name)
    f.create(10_000, 0.01, shards=6)
    assert f.add(ITEMS[:2000]) == [True] * 2000
    out = cli("shard", "exists", url(client, server, cluster), name, "u1", "u1999", "zz-none")
    assert out.split() == ["1", "1", "0"]
    cli("shard", "add", url(client, server, cluster), name, "from-cli")
    assert f.contains(["from-cli", "u5", "nope-x"]) == [True, True, False]
    assert "from-cli" in f
    info = f.info()
    assert info["items"] == 2001 and info["shards"] == 6
    assert info["member_capacity"] == 1830  # ceil(C/N + 4*sqrt(C/N)), C/N = 1666.7
    assert {m["key"] for m in info["members"]} == set(f.layout().members)
    assert f.drop() == 7 and client.exists(name) == 0


def test_cli_created_python_used(client, server, cluster, name):
    u = url(client, server, cluster)
    cli("shard", "create", u, name, "--shards", 4, "--capacity", 5000, "--type", "cf")
    cli("shard", "add", u, name, *ITEMS[:50])
    f = redbloom.ShardedFilter(client, name)
    assert f.layout().family == "cf"
    assert all(f.contains(ITEMS[:50]))
    f.add(["py-item"])
    assert cli("shard", "exists", u, name, "py-item").split() == ["1"]
    # the members are where the CLI's routing puts them
    for item, m in zip(ITEMS[:50], f.layout().route(ITEMS[:50])):
        member = f.layout().members[m]
        assert client.execute_command("CF.EXISTS", member, item) == 1


def test_members_spread_over_the_masters(cluster, name):
    c = cluster.client()
    f = redbloom.ShardedFilter(c, name)
    f.create(3000, 0.01, shards=6)
    nodes = {m["node"] for m in f.info()["members"]}
    assert len(nodes) == 3


def test_load_is_all_or_nothing(client, server, cluster, name):
    f = redbloom.ShardedFilter(client, name)
    f.create(20_000, 0.01, shards=4)
    f.load(ITEMS)
    assert all(f.contains(ITEMS))
    # equals adds of the same items, member by member (the server's own build)
    g = redbloom.ShardedFilter(client, name + "g")
    g.create(20_000, 0.01, shards=4)
    g.add(ITEMS)
    for a, b in zip(f.layout().members, g.layout().members):
        assert redbloom.pull(client, a).chunks() == redbloom.pull(client, b).chunks()
    with pytest.raises(redbloom.LoadRefused, match="holds items"):
        f.load(["more"])
    # an interrupted load changes no member
    h = redbloom.ShardedFilter(client, name + "h")
    h.create(20_000, 0.01, shards=4)

    def stop(_):
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        h.load(ITEMS, stop)
    assert h.info()["items"] == 0
    assert not any(client.exists(redbloom.temp_key(m)) for m in h.layout().members)


def test_create_refusals(client, name):
    f = redbloom.ShardedFilter(client, name)
    with pytest.raises(ValueError, match="--shards must be 1 to 1024"):
        f.create(100, shards=0)
    with pytest.raises(ValueError, match="--blocked applies to bf filters only"):
        f.create(100, shards=2, family="cf", blocked=True)
    client.set(name, "x")
    with pytest.raises(redbloom.LoadRefused, match="already exists"):
        f.create(100, shards=2)
    with pytest.raises(KeyError):
        redbloom.ShardedFilter(client, name + "none").layout()
