"""Pushes and pulls, written once as operations (generators of requests, ``_drive``) and run
over the caller's redis-py client: sync, or asyncio (then the call returns an awaitable).

Every decision (slots, temporary keys, the swap script, snapshot bytes) is the shared Rust
logic in ``redbloom._native`` — the code the ``redbloom`` CLI runs."""

from __future__ import annotations

from typing import Any, Callable, List, Optional, Tuple

import redis

from . import _drive, _native
from ._drive import ServerError

__all__ = ["ServerError", "LoadRefused", "pull", "push"]

#: Data chunks (at most 16 MiB each) per pipelined round of a push.
CHUNKS_PER_ROUND = 2
#: Times a push starts over (after a failover or restart of the node) before it fails.
ATTEMPTS = 3


class LoadRefused(redis.exceptions.ResponseError):
    """An all-or-nothing push or load did not replace its target (it exists, received
    items meanwhile, or the node changed during each attempt); the target is unchanged."""


def text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def info_pairs(reply: Any) -> List[Tuple[str, str]]:
    """An INFO reply (RESP2 flat list or RESP3 map) as text pairs."""
    if isinstance(reply, dict):
        return [(text(k), text(v)) for k, v in reply.items()]
    return [(text(reply[i]), text(reply[i + 1])) for i in range(0, len(reply) - 1, 2)]


def run(client: Any, op: Any) -> Any:
    """Runs an operation over `client`: its result, or an awaitable of it for an asyncio
    client."""
    if _drive.is_async(client):
        return _drive.run_async(client, op)
    return _drive.run_sync(client, op)


# -- operations -------------------------------------------------------------------------
def scandump_op(family_prefix: str, key: str):
    """Every (iterator, data) of `PREFIX.SCANDUMP key`, header first."""
    out: List[Tuple[int, bytes]] = []
    it = 0
    while True:
        nxt, data = yield ("run", key, [family_prefix + ".SCANDUMP", key, it])
        if int(nxt) == 0:
            return out
        out.append((int(nxt), bytes(data or b"")))
        it = int(nxt)


def family_of_type(kind: str) -> Optional[str]:
    """The family ("bf", "cf", "cbf", "static", "xf") of a key whose TYPE is `kind`."""
    return _native.family_of_type(kind)


def prefix(family: str) -> str:
    """The command prefix of a family ("BF", …, "XF")."""
    return _native.prefix(family)


def family_op(key: str):
    """The family of filter `key` (KeyError: no such key; TypeError: another type)."""
    kind = text((yield ("run", key, ["TYPE", key])))
    if kind == "none":
        raise KeyError(key)
    family = family_of_type(kind)
    if family is None:
        raise TypeError("%s is a key of type %s, not a bf, cf, cbf, static or xf filter"
                        % (key, kind))
    return family


def pull_op(key: str):
    """The filter at `key` and the SCANDUMP header its download began with."""
    family = yield from family_op(key)
    chunks = yield from scandump_op(prefix(family), key)
    if not chunks and family == "cf":
        info = yield ("run", key, ["CF.INFO", key])
        return _native.cuckoo_from_info(info_pairs(info)), b""
    return _native.from_chunks(family, chunks, key), (chunks[0][1] if chunks else b"")


def pull(client: Any, key: str) -> Any:
    """The filter at `key` (bf, cf, cbf, static or xf), downloaded with SCANDUMP into a local
    filter that answers as the server does. KeyError if there is no such key, TypeError if
    it is not a filter."""

    def op():
        filt, _ = yield from pull_op(key)
        return filt

    return run(client, op())


def _shape_op(key: str, temp: str, filt: Any):
    """The server's own RESERVE of the filter's options (under `temp`, deleted again at
    once) must make the empty filter this one started as: a push never writes a filter the
    server's configs would not have made (the CLI's loads start from the server's)."""
    words = filt._reserve_words(temp)
    if words is None:
        return
    name = prefix(filt.family)
    query = [name + ".SCANDUMP", temp, 0] if filt.family != "cf" else ["CF.INFO", temp]
    replies = yield ("pipe", key, [["DEL", temp], words, query, ["DEL", temp]])
    if filt.family == "cf":
        server = dict(info_pairs(replies[2]))
        mine = filt.info()
        same = all(int(server[a]) == mine[b] for a, b in [
            ("Number of buckets", "number_of_buckets"), ("Bucket size", "bucket_size"),
            ("Expansion rate", "expansion_rate"), ("Max iterations", "max_iterations")])
    else:
        same = bytes(replies[2][1]) == filt._empty_header()
    if not same:
        raise ValueError(
            "%s: the server's %s.RESERVE with these options makes another filter than the one "
            "built here (its configs differ from the defaults): give the options explicitly, "
            "or pull an empty filter reserved on that server and add to it" % (key, name))


def _check_temp_op(temp: str, family: str):
    kind = text((yield ("run", temp, ["TYPE", temp])))
    if kind != "none" and family_of_type(kind) != family:
        raise LoadRefused(
            "%s (the temporary key of this push) exists and is a key of type %s: not left by "
            "an interrupted push; remove or rename it" % (temp, kind))


class Target:
    """One filter to deliver: `filt` for `key`; `info` is "" (the key must be absent) or the
    family's INFO command (the key must be an empty filter)."""

    def __init__(self, key: str, filt: Any, info: str) -> None:
        self.key = key
        self.filt = filt
        self.info = info
        self.temp = _native.temp_key(key)
        self.run_id = ""


def _ship_op(t: Target, sent: List[int], progress: Optional[Callable[[int], Any]]):
    """Writes the filter under its temporary key from scratch, chunk after chunk."""
    chunks = t.filt.chunks()
    load = prefix(t.filt.family) + ".LOADCHUNK"
    begin: List[List[Any]] = [["DEL", t.temp]]
    rest = chunks[1:]
    if chunks:
        begin.append([load, t.temp, chunks[0][0], chunks[0][1]])
    else:
        # An empty Cuckoo filter has no header: the server reserves its very shape.
        i = t.filt.info()
        begin.append(["CF.RESERVE", t.temp, i["number_of_buckets"] * i["bucket_size"],
                      "BUCKETSIZE", i["bucket_size"], "MAXITERATIONS", i["max_iterations"],
                      "EXPANSION", i["expansion_rate"]])
    begin.append(["EVAL", _native.RUN_ID_SCRIPT, 1, t.temp])
    replies = yield ("pipe", t.key, begin)
    t.run_id = text(replies[-1])
    for at in range(0, len(rest), CHUNKS_PER_ROUND):
        round_ = rest[at:at + CHUNKS_PER_ROUND]
        yield ("pipe", t.key, [[load, t.temp, i, d] for i, d in round_])
        sent[0] += sum(len(d) for _, d in round_)
        if progress is not None:
            progress(sent[0])


def _swap_op(t: Target, mode: str):
    reply = yield ("run", t.key, ["EVAL", _native.SWAP_SCRIPT, 2, t.temp, t.key, t.run_id,
                                  t.info, mode])
    return int(reply)


def _refused(t: Target, reply: int) -> LoadRefused:
    if reply in (-1, -2):
        return LoadRefused("%s: the server changed during each of %d ships (failover or "
                           "restart); %s is unchanged" % (t.key, ATTEMPTS, t.key))
    if reply == -3:
        return LoadRefused("%s: missing (deleted during the load)" % t.key)
    if t.info == "":
        return LoadRefused("%s: created by someone else during the load; left as it is" % t.key)
    return LoadRefused("%s: received items during the load; left as it is" % t.key)


def deliver_op(targets: List[Target], progress: Optional[Callable[[int], Any]] = None):
    """Ships every target under its temporary key, checks all, then renames each into
    place (the CLI's ship, `redbloom_client::ship::deliver`). Until the renames nothing of
    the targets changes: any exception before them (KeyboardInterrupt, a dropped
    connection, a cancellation) deletes the temporary keys it can and propagates. Returns
    the bytes sent."""
    sent = [0]
    try:
        for t in targets:
            yield from _check_temp_op(t.temp, t.filt.family)
        for t in targets:
            yield from _ship_op(t, sent, progress)
        for t in targets:
            reply = yield from _swap_op(t, "check")
            if reply != 1:
                raise _refused(t, reply)
        for t in targets:
            for attempt in range(1, ATTEMPTS + 1):
                reply = yield from _swap_op(t, "swap")
                if reply == 1:
                    break
                if reply in (-1, -2) and attempt < ATTEMPTS:
                    yield from _ship_op(t, sent, progress)
                    continue
                raise _refused(t, reply)
    except BaseException:
        for t in targets:
            yield ("quiet", t.temp, ["DEL", t.temp])
        raise
    return sent[0]


def push(client: Any, key: str, filt: Any, progress: Optional[Callable[[int], Any]] = None) -> Any:
    """`filt.push(client, key)`: see the method's documentation."""

    def op():
        if int((yield ("run", key, ["EXISTS", key]))):
            raise LoadRefused("%s already exists" % key)
        target = Target(key, filt, "")
        yield from _check_temp_op(target.temp, filt.family)
        yield from _shape_op(key, target.temp, filt)
        return (yield from deliver_op([target], progress))

    return run(client, op())
