"""Real servers for the pytest suite: redis-server (or REDBLOOM_SERVER, e.g. the Redis 8 or
Valkey binary scripts/*.sh print) with the redbloom module, on free loopback ports; each
stopped by its own PID and its directory removed. No mocks of Redis."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path
from typing import List, Optional

import redis

ROOT = Path(__file__).resolve().parents[2]


def _target_dir() -> Path:
    return Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target"))


def module_path() -> str:
    """REDBLOOM_MODULE, else the module cargo built (debug first, then release)."""
    if os.environ.get("REDBLOOM_MODULE"):
        return os.environ["REDBLOOM_MODULE"]
    for profile in ("debug", "debug/deps", "release"):
        candidate = _target_dir() / profile / "libredbloom.so"
        if candidate.exists():
            return str(candidate)
    raise RuntimeError("libredbloom.so not built: run cargo build -p redbloom")


def cli_path() -> str:
    """REDBLOOM_CLI, else the `redbloom` binary cargo built."""
    if os.environ.get("REDBLOOM_CLI"):
        return os.environ["REDBLOOM_CLI"]
    for profile in ("debug", "release"):
        candidate = _target_dir() / profile / "redbloom"
        if candidate.exists():
            return str(candidate)
    raise RuntimeError("the redbloom CLI is not built: run cargo build -p redbloom-cli")


def server_binary() -> str:
    return os.environ.get("REDBLOOM_SERVER", "redis-server")


_next = [21000 + (os.getpid() % 400) * 10]


def free_port() -> int:
    """A loopback port nothing listens on, from a per-process range (below the kernel's
    ephemeral ports, so no client socket takes it between this check and the bind)."""
    while True:
        port = _next[0]
        _next[0] += 1
        if _next[0] > 30000:
            _next[0] = 21000
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
        return port


class Server:
    """One server process with the module loaded."""

    def __init__(self, *extra: str) -> None:
        self.dir = tempfile.mkdtemp(prefix="redbloom-py-")
        self.extra = list(extra)
        self.proc: Optional[subprocess.Popen] = None
        self.port = 0
        self._start()

    def _start(self, attempts: int = 5) -> None:
        self.port = free_port()
        args = [server_binary(), "--port", str(self.port), "--bind", "127.0.0.1",
                "--dir", self.dir, "--save", "", "--appendonly", "no",
                "--logfile", "server.log"] + self.extra + ["--loadmodule", module_path()]
        self.proc = subprocess.Popen(args, stdin=subprocess.DEVNULL,
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                log = self.log()
                if "Address already in use" in log and attempts > 0:
                    return self._start(attempts - 1)
                raise RuntimeError("server exited: %s" % log)
            try:
                info = redis.Redis(port=self.port, socket_timeout=2).info("server")
                if info.get("process_id") != self.proc.pid:
                    raise RuntimeError("port %d answered by another server" % self.port)
                return
            except redis.exceptions.ConnectionError:
                time.sleep(0.02)
        raise RuntimeError("server did not start: %s" % self.log())

    def log(self) -> str:
        try:
            return (Path(self.dir) / "server.log").read_text()
        except OSError:
            return ""

    @property
    def url(self) -> str:
        return "redis://127.0.0.1:%d" % self.port

    def client(self, **kwargs) -> redis.Redis:
        return redis.Redis(port=self.port, **kwargs)

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()  # by this process's own handle (its PID), never by name
            self.proc.wait(10)
        shutil.rmtree(self.dir, ignore_errors=True)


def wait_until(what: str, check, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if check():
                return
        except redis.exceptions.RedisError:
            pass
        time.sleep(0.05)
    raise AssertionError("timed out waiting for " + what)


def _synced(replication) -> bool:
    """A master, or a replica whose link is up and whose first sync is over."""
    return replication.get("role") == "master" or (
        replication.get("master_link_status") == "up"
        and replication.get("master_sync_in_progress") == 0)


def cli_binary() -> str:
    """redis-cli, or a valkey-cli next to a valkey-server."""
    server = Path(server_binary())
    cli = server.with_name(server.name.replace("-server", "-cli"))
    return str(cli) if cli.is_file() else "redis-cli"


class Cluster:
    """Three masters (and `replicas` replicas each), made with `redis-cli --cluster create`."""

    def __init__(self, replicas: int = 0) -> None:
        args = ("--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf",
                "--cluster-node-timeout", "1500")
        self.nodes: List[Server] = []
        try:
            for _ in range(3 * (1 + replicas)):
                self.nodes.append(Server(*args))
            cmd = [cli_binary(), "--cluster", "create"]
            cmd += ["127.0.0.1:%d" % n.port for n in self.nodes]
            cmd += ["--cluster-replicas", str(replicas), "--cluster-yes"]
            subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
            for n in self.nodes:
                wait_until("cluster_state:ok",
                           lambda n=n: n.client().cluster("info")["cluster_state"] == "ok")
            # A replica's first full sync ends after the cluster is ok: until then a test's
            # WAIT would wait for it (longer than a client's socket timeout on a busy machine).
            for n in self.nodes:
                wait_until("a replica's first sync",
                           lambda n=n: _synced(n.client().info("replication")))
        except BaseException:
            self.stop()
            raise

    @property
    def url(self) -> str:
        return self.nodes[0].url

    def client(self, **kwargs):
        from redis.cluster import RedisCluster
        return RedisCluster(host="127.0.0.1", port=self.nodes[0].port, **kwargs)

    def stop(self) -> None:
        for n in self.nodes:
            n.stop()
