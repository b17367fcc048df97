"""The I/O half of redbloom: pushes, pulls and sharded filters through the caller's redis-py
client (``redis.Redis`` or ``redis.cluster.RedisCluster``), so its TLS, auth and pools apply.

Every decision (slots, temporary keys, the swap script, member keys, routing, snapshot
bytes) is the shared Rust logic in ``redbloom._native`` — the same code the ``redbloom`` CLI
runs — and this module only sends the commands and hands back the replies.
"""

from __future__ import annotations

from typing import Any, Callable, Iterable, List, Optional, Sequence, Tuple

import redis
from redis.cluster import RedisCluster

from . import _native

#: Data chunks (at most 16 MiB each) per pipelined round of a push.
CHUNKS_PER_ROUND = 2
#: Times a push starts over (after a failover or restart of the node) before it fails.
ATTEMPTS = 3
#: redis-py option: the reply's bytes are never decoded (filters' chunks are binary).
RAW = {"NEVER_DECODE": True}


class ServerError(redis.exceptions.ResponseError):
    """A server refused a command redbloom sent: names the node and the key."""

    def __init__(self, message: str, node: str = "", key: str = "") -> None:
        super().__init__(message)
        self.node = node
        self.key = key


class LoadRefused(redis.exceptions.ResponseError):
    """An all-or-nothing push or load did not replace its target (it exists, received
    items meanwhile, or the node changed during each attempt); the target is unchanged."""


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def node_client(client: Any, key: str) -> Tuple[Any, str]:
    """The plain client of the node serving `key`'s slot, and that node's name
    (host:port); for a single server, the client itself."""
    if isinstance(client, RedisCluster):
        node = client.get_node_from_key(key)
        return node.redis_connection, node.name
    kwargs = client.connection_pool.connection_kwargs
    return client, "%s:%s" % (kwargs.get("host", "?"), kwargs.get("port", "?"))


def run(conn: Any, node: str, key: str, *words: Any) -> Any:
    """One command on one node, its server error naming the node and the key."""
    try:
        return conn.execute_command(*words, **RAW)
    except redis.exceptions.ResponseError as e:
        raise ServerError("%s (node %s, key %s)" % (e, node, key), node, key) from e


def pipeline(conn: Any, node: str, key: str, commands: Sequence[Sequence[Any]]) -> List[Any]:
    """Commands in one round trip to one node; the first error reply is raised."""
    pipe = conn.pipeline(transaction=False)
    for words in commands:
        pipe.execute_command(*words, **RAW)
    try:
        replies = pipe.execute(raise_on_error=True)
    except redis.exceptions.ResponseError as e:
        raise ServerError("%s (node %s, key %s)" % (e, node, key), node, key) from e
    return replies


def info_pairs(reply: Any) -> List[Tuple[str, str]]:
    """An INFO reply (RESP2 flat list or RESP3 map) as text pairs."""
    if isinstance(reply, dict):
        return [(_text(k), _text(v)) for k, v in reply.items()]
    return [(_text(reply[i]), _text(reply[i + 1])) for i in range(0, len(reply) - 1, 2)]


def scandump(conn: Any, node: str, prefix: str, key: str) -> List[Tuple[int, bytes]]:
    """Every (iterator, data) of `PREFIX.SCANDUMP key`, header first."""
    out: List[Tuple[int, bytes]] = []
    it = 0
    while True:
        nxt, data = run(conn, node, key, prefix + ".SCANDUMP", key, it)
        if int(nxt) == 0:
            return out
        out.append((int(nxt), bytes(data or b"")))
        it = int(nxt)


def pull(client: Any, key: str) -> Any:
    """The filter at `key` (bf, cf, cbf or static), downloaded with SCANDUMP into a local
    filter that answers as the server does."""
    conn, node = node_client(client, key)
    kind = _text(run(conn, node, key, "TYPE", key))
    if kind == "none":
        raise KeyError(key)
    family = _native.family_of_type(kind)
    if family is None:
        raise TypeError("%s is a key of type %s, not a bf, cf, cbf or static filter" % (key, kind))
    prefix = _native.prefix(family)
    chunks = scandump(conn, node, prefix, key)
    if not chunks and family == "cf":
        return _native.cuckoo_from_info(info_pairs(run(conn, node, key, "CF.INFO", key)))
    return _native.from_chunks(family, chunks, key)


def _shape_check(conn: Any, node: str, key: str, temp: str, filt: Any) -> None:
    """The server's own RESERVE of the filter's options (under `temp`, deleted again at
    once) must make the empty filter this one started as: so a push never writes a filter
    the server's configs would not have made (the CLI's loads start from the server's)."""
    words = filt._reserve_words(temp)
    if words is None:
        return
    prefix = _native.prefix(filt.family)
    query = ([prefix + ".SCANDUMP", temp, 0] if filt.family != "cf" else ["CF.INFO", temp])
    replies = pipeline(conn, node, key, [["DEL", temp], words, query, ["DEL", temp]])
    reply = replies[2]
    if filt.family == "cf":
        server = dict(info_pairs(reply))
        mine = filt.info()
        same = (int(server["Number of buckets"]) == mine["number_of_buckets"]
                and int(server["Bucket size"]) == mine["bucket_size"]
                and int(server["Expansion rate"]) == mine["expansion_rate"]
                and int(server["Max iterations"]) == mine["max_iterations"])
    else:
        same = bytes(reply[1]) == filt._empty_header()
    if not same:
        raise ValueError(
            "%s: the server's %s.RESERVE with these options makes another filter than the one "
            "built here (its configs differ from the defaults): give the options explicitly, "
            "or pull an empty filter reserved on that server and add to it" % (key, prefix))


def _check_temp(conn: Any, node: str, temp: str, family: str) -> None:
    kind = _text(run(conn, node, temp, "TYPE", temp))
    if kind != "none" and _native.family_of_type(kind) != family:
        raise LoadRefused(
            "%s (the temporary key of this push) exists and is a key of type %s: not left by "
            "an interrupted push; remove or rename it" % (temp, kind))


class Target:
    """One filter to deliver: `filt` for `key`; `info` is "" (the key must be absent) or the
    family's INFO command (the key must be an empty filter)."""

    def __init__(self, client: Any, key: str, filt: Any, info: str) -> None:
        self.key = key
        self.filt = filt
        self.info = info
        self.temp = _native.temp_key(key)
        self.conn, self.node = node_client(client, key)
        self.run_id = ""


def _ship_one(t: Target, sent: List[int], progress: Optional[Callable[[int], Any]]) -> None:
    prefix = _native.prefix(t.filt.family)
    chunks = t.filt.chunks()
    load = prefix + ".LOADCHUNK"
    begin: List[List[Any]] = [["DEL", t.temp]]
    rest = chunks
    if chunks:
        begin.append([load, t.temp, chunks[0][0], chunks[0][1]])
        rest = chunks[1:]
    else:
        # An empty Cuckoo filter has no header: the server's own reserve of its shape.
        begin.append(["CF.RESERVE", t.temp, t.filt.info()["number_of_buckets"] * t.filt.info()["bucket_size"],
                      "BUCKETSIZE", t.filt.info()["bucket_size"],
                      "MAXITERATIONS", t.filt.info()["max_iterations"],
                      "EXPANSION", t.filt.info()["expansion_rate"]])
    begin.append(["EVAL", _native.RUN_ID_SCRIPT, 1, t.temp])
    replies = pipeline(t.conn, t.node, t.key, begin)
    t.run_id = _text(replies[-1])
    for at in range(0, len(rest), CHUNKS_PER_ROUND):
        round_ = rest[at:at + CHUNKS_PER_ROUND]
        pipeline(t.conn, t.node, t.key, [[load, t.temp, i, d] for i, d in round_])
        sent[0] += sum(len(d) for _, d in round_)
        if progress is not None:
            progress(sent[0])


def _swap(t: Target, mode: str) -> int:
    return int(run(t.conn, t.node, t.key, "EVAL", _native.SWAP_SCRIPT, 2, t.temp, t.key,
                   t.run_id, t.info, mode))


def _delete_temps(targets: Iterable[Target]) -> None:
    for t in targets:
        try:
            t.conn.execute_command("DEL", t.temp)
        except Exception:  # the connection may be gone: a later push replaces the key
            pass


def _refused(t: Target, reply: int) -> LoadRefused:
    if reply in (-1, -2):
        return LoadRefused("%s: the server changed during each of %d ships (failover or "
                           "restart); %s is unchanged" % (t.key, ATTEMPTS, t.key))
    if reply == -3:
        return LoadRefused("%s: missing (deleted during the load)" % t.key)
    if t.info == "":
        return LoadRefused("%s: created by someone else during the load; left as it is" % t.key)
    return LoadRefused("%s: received items during the load; left as it is" % t.key)


def deliver(targets: List[Target], progress: Optional[Callable[[int], Any]] = None) -> int:
    """Ships every target under its temporary key, checks all, then renames each into
    place (the CLI's ship, `redbloom_client::ship::deliver`). Until the renames nothing of
    the targets changes: any exception before them (KeyboardInterrupt, a dropped
    connection) deletes the temporary keys it can and propagates. Returns bytes sent."""
    sent = [0]
    try:
        for t in targets:
            _check_temp(t.conn, t.node, t.temp, t.filt.family)
        for t in targets:
            _ship_one(t, sent, progress)
        for t in targets:
            reply = _swap(t, "check")
            if reply != 1:
                raise _refused(t, reply)
    except BaseException:
        _delete_temps(targets)
        raise
    for t in targets:
        for attempt in range(1, ATTEMPTS + 1):
            reply = _swap(t, "swap")
            if reply == 1:
                break
            if reply in (-1, -2) and attempt < ATTEMPTS:
                _ship_one(t, sent, progress)
                continue
            _delete_temps(targets)
            raise _refused(t, reply)
    return sent[0]


def push(client: Any, key: str, filt: Any, progress: Optional[Callable[[int], Any]] = None) -> None:
    """`filt.push(client, key)`: see the method's documentation."""
    conn, node = node_client(client, key)
    if int(run(conn, node, key, "EXISTS", key)):
        raise LoadRefused("%s already exists" % key)
    target = Target(client, key, filt, "")
    _check_temp(conn, node, target.temp, filt.family)
    _shape_check(conn, node, key, target.temp, filt)
    deliver([target], progress)
