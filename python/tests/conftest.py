"""Fixtures: one single server, one primary with a replica, one 3-master cluster for the
whole session (each stopped by PID at the end); every test uses its own keys."""

import itertools
import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(__file__))

import servers  # noqa: E402

_names = itertools.count()


@pytest.fixture
def name(request):
    """A key name unique to the test."""
    return "t%d:%s" % (next(_names), request.node.name[:40])


@pytest.fixture(scope="session")
def server():
    s = servers.Server()
    yield s
    s.stop()


@pytest.fixture(scope="session")
def replicated():
    primary = servers.Server()
    replica = servers.Server("--replicaof", "127.0.0.1", str(primary.port))
    servers.wait_until("the replica in sync",
                       lambda: replica.client().info("replication")["master_link_status"] == "up")
    yield primary, replica
    replica.stop()
    primary.stop()


@pytest.fixture(scope="session")
def cluster():
    c = servers.Cluster()
    yield c
    c.stop()


@pytest.fixture(params=["single", "cluster"])
def client(request, server, cluster):
    """A redis-py client of the single server, then of the cluster."""
    c = server.client() if request.param == "single" else cluster.client()
    yield c
    c.close()
