"""A sharded filter keeps answering with no false negative while the cluster moves a
member's slot to another master behind the client's back (MOVED: the slot map is read
again and the node's batch sent again)."""

import pytest
import redis

import redbloom
import servers
from redbloom import _drive

ITEMS = ["f%d" % i for i in range(3000)]


def move_slot(cluster, slot: int, src_port: int, dst_port: int) -> None:
    src, dst = redis.Redis(port=src_port), redis.Redis(port=dst_port)
    src_id, dst_id = src.execute_command("CLUSTER", "MYID"), dst.execute_command("CLUSTER", "MYID")
    dst.execute_command("CLUSTER", "SETSLOT", slot, "IMPORTING", src_id)
    src.execute_command("CLUSTER", "SETSLOT", slot, "MIGRATING", dst_id)
    while True:
        keys = src.execute_command("CLUSTER", "GETKEYSINSLOT", slot, 100)
        if not keys:
            break
        for key in keys:
            src.execute_command("MIGRATE", "127.0.0.1", dst_port, key, 0, 5000)
    for node in cluster.nodes:
        redis.Redis(port=node.port).execute_command("CLUSTER", "SETSLOT", slot, "NODE", dst_id)


def test_no_false_negative_across_a_slot_move(cluster, name):
    rc = cluster.client()
    f = redbloom.ShardedFilter(rc, name)
    f.create(20_000, 0.01, shards=3)
    assert f.add(ITEMS[:1000]) == [True] * 1000
    member = f.layout().members[0]
    slot = redbloom.key_slot(member)
    src = rc.get_node_from_key(member).port
    dst = next(n.port for n in cluster.nodes if n.port != src)
    move_slot(cluster, slot, src, dst)
    # The client still routes the member to `src`: MOVED, the map read again, sent again.
    assert all(f.contains(ITEMS[:1000]))
    f.add(ITEMS[1000:])
    assert all(f.contains(ITEMS))
    assert rc.get_node_from_key(member).port == dst
    assert f.info()["items"] >= len(ITEMS) - 30  # false positives of adds count no item
    move_slot(cluster, slot, dst, src)  # as it was, for the other tests
    rc.nodes_manager.initialize()
    assert all(f.contains(ITEMS))


@pytest.fixture(scope="module")
def cluster_with_replicas():
    c = servers.Cluster(replicas=1)
    yield c
    c.stop()


def test_no_false_negative_across_a_failover(cluster_with_replicas, name):
    cluster = cluster_with_replicas
    rc = cluster.client()
    f = redbloom.ShardedFilter(rc, name)
    f.create(20_000, 0.01, shards=3)
    f.add(ITEMS)
    for m in f.layout().members:  # every add on the member's replica too
        conn, _ = _drive.node_client(rc, m)
        assert conn.execute_command("WAIT", 1, 5000) == 1
    member = f.layout().members[0]
    victim = rc.get_node_from_key(member).port
    next(n for n in cluster.nodes if n.port == victim).stop()  # killed by its PID
    # The client still routes to the dead master: connection errors, pauses, the map read
    # again once the replica took over; every item is still there.
    assert all(f.contains(ITEMS))
    assert rc.get_node_from_key(member).port != victim
    f.add(["after-failover"])
    assert f.contains(["after-failover"]) == [True]
