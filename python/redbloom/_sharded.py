"""Sharded filters through redis-py: the CLI's layout (``redbloom shard``), so a filter
created by either is used by the other. Items are grouped per member, and the members'
commands per node, one pipeline per node per round."""

from __future__ import annotations

from collections import defaultdict
from typing import Any, Dict, Iterable, List, Optional, Sequence

import redis
from redis.cluster import RedisCluster

from . import _io, _native

#: Items per INSERT / MEXISTS command (as the CLI sends them).
ITEMS_PER_COMMAND = 1000
#: Times a round is resent after the cluster moved a slot (MOVED/ASK) or a node failed.
ROUND_ATTEMPTS = 5


def _as_bytes(item: Any) -> bytes:
    if isinstance(item, bytes):
        return item
    if isinstance(item, str):
        return item.encode()
    if isinstance(item, (bytearray, memoryview)):
        return bytes(item)
    raise TypeError("redbloom items are str (sent as UTF-8, as redis-py sends it) or bytes, "
                    "not %s; pass str(x) or bytes" % type(item).__name__)


class ShardedFilter:
    """One logical filter over N member keys spread over a cluster's slots (or all on one
    server), with a descriptor hash at `name` — the layout of docs/sharding.md."""

    def __init__(self, client: Any, name: str) -> None:
        self.client = client
        self.name = name
        self._layout: Optional[Any] = None

    # -- the layout -------------------------------------------------------------------
    @property
    def layout(self) -> Any:
        """The descriptor (read from the server the first time)."""
        if self._layout is None:
            conn, node = _io.node_client(self.client, self.name)
            kind = _io._text(_io.run(conn, node, self.name, "TYPE", self.name))
            if kind == "none":
                raise KeyError("no sharded filter %s (no such key)" % self.name)
            if kind != "hash":
                raise TypeError("%s is not a sharded filter descriptor (a key of type %s)"
                                % (self.name, kind))
            raw = _io.run(conn, node, self.name, "HGETALL", self.name)
            if isinstance(raw, list):
                raw = dict(zip(raw[::2], raw[1::2]))
            fields = {_io._text(k): _io._text(v) for k, v in raw.items()}
            self._layout = _native.Layout.parse(self.name, fields)
        return self._layout

    def exists(self) -> bool:
        conn, node = _io.node_client(self.client, self.name)
        return bool(int(_io.run(conn, node, self.name, "EXISTS", self.name)))

    def create(self, capacity: int, error_rate: float = 0.01, *, shards: int,
               family: str = "bf", expansion: Optional[int] = None,
               non_scaling: bool = False, blocked: bool = False) -> None:
        """Creates the members (each reserved for its share plus headroom) and then the
        descriptor (`redbloom shard create`); refuses when the name or a member exists."""
        layout = _native.Layout(self.name, shards, family, capacity, error_rate, expansion,
                                non_scaling, blocked)
        keys = [self.name] + layout.members
        for key in keys:
            conn, node = _io.node_client(self.client, key)
            if int(_io.run(conn, node, key, "EXISTS", key)):
                raise _io.LoadRefused("%s already exists" % key)
        made: List[str] = []
        try:
            for key, words in zip(layout.members, layout.reserves()):
                conn, node = _io.node_client(self.client, key)
                _io.run(conn, node, key, *words)
                made.append(key)
        except BaseException:
            for key in made:
                conn, _ = _io.node_client(self.client, key)
                conn.delete(key)
            raise
        conn, node = _io.node_client(self.client, self.name)
        flat: List[str] = []
        for k, v in layout.fields():
            flat += [k, v]
        _io.run(conn, node, self.name, "HSET", self.name, *flat)
        self._layout = layout

    # -- items ------------------------------------------------------------------------
    def _per_item(self, items: Sequence[bytes], verb: str, nocreate: bool) -> List[int]:
        layout = self.layout
        members = layout.members
        prefix = layout.prefix
        routes = layout.route(items)
        groups: Dict[int, List[int]] = defaultdict(list)
        for at, m in enumerate(routes):
            groups[m].append(at)
        out = [0] * len(items)
        pending = dict(groups)
        for attempt in range(ROUND_ATTEMPTS):
            by_node: Dict[str, Any] = {}
            plan: Dict[str, List[tuple]] = defaultdict(list)
            for m, indices in pending.items():
                conn, node = _io.node_client(self.client, members[m])
                by_node[node] = conn
                for part in range(0, len(indices), ITEMS_PER_COMMAND):
                    span = indices[part:part + ITEMS_PER_COMMAND]
                    words: List[Any] = [prefix + "." + verb, members[m]]
                    if nocreate:
                        words += ["NOCREATE", "ITEMS"]
                    words += [items[i] for i in span]
                    plan[node].append((m, span, words))
            failed: Dict[int, List[int]] = {}
            for node, cmds in plan.items():
                try:
                    replies = _io.pipeline(by_node[node], node, cmds[0][1] and members[cmds[0][0]],
                                           [w for _, _, w in cmds])
                except (_io.ServerError, redis.exceptions.ConnectionError,
                        redis.exceptions.TimeoutError) as e:
                    cause = e.__cause__ if isinstance(e, _io.ServerError) else e
                    moved = isinstance(cause, (redis.exceptions.MovedError,
                                               redis.exceptions.AskError,
                                               redis.exceptions.ConnectionError,
                                               redis.exceptions.TimeoutError,
                                               redis.exceptions.TryAgainError,
                                               redis.exceptions.ClusterDownError))
                    text = str(cause)
                    if not (moved or text.startswith(("MOVED", "ASK", "TRYAGAIN", "CLUSTERDOWN",
                                                      "LOADING", "READONLY"))):
                        raise
                    if attempt + 1 == ROUND_ATTEMPTS:
                        raise
                    for m, span, _ in cmds:
                        failed.setdefault(m, []).extend(span)
                    continue
                for (m, span, _), reply in zip(cmds, replies):
                    for i, r in zip(span, reply):
                        if isinstance(r, Exception):
                            raise _io.ServerError("%s: member %s on %s: item %r: %s"
                                                  % (self.name, members[m], node, items[i], r),
                                                  node, members[m])
                        out[i] = int(r)
            if not failed:
                return out
            pending = failed
            if isinstance(self.client, RedisCluster):
                self.client.nodes_manager.initialize()
        return out

    def add(self, items: Iterable[Any]) -> List[bool]:
        """Adds items (each routed to its member); one bool per item, in order: whether it
        was new (CF: always True)."""
        data = [_as_bytes(i) for i in items]
        return [bool(r) for r in self._per_item(data, "INSERT", True)]

    def contains(self, items: Iterable[Any]) -> List[bool]:
        """Whether each item may be in the filter, in order."""
        data = [_as_bytes(i) for i in items]
        return [bool(r) for r in self._per_item(data, "MEXISTS", False)]

    def __contains__(self, item: Any) -> bool:
        return self.contains([item])[0]

    def load(self, items: Iterable[Any], progress: Any = None) -> int:
        """Bulk-loads items into the empty members, all or nothing (`redbloom shard load`):
        each member is built here from the empty filter the server reserved, shipped under
        a temporary key and renamed into place only if the member is still empty. Returns
        the bytes sent."""
        layout = self.layout
        if layout.family == "cbf":
            raise ValueError("load supports bf and cf sharded filters")
        members = layout.members
        locals_ = [_io.pull(self.client, m) for m in members]
        for m, f in zip(members, locals_):
            if len(f):
                raise _io.LoadRefused("%s: member %s holds items; load fills empty members only"
                                      % (self.name, m))
        data = [_as_bytes(i) for i in items]
        groups: List[List[bytes]] = [[] for _ in members]
        for item, m in zip(data, layout.route(data)):
            groups[m].append(item)
        for f, group in zip(locals_, groups):
            f.add_many(group)
        info = layout.prefix + ".INFO"
        targets = [_io.Target(self.client, m, f, info) for m, f in zip(members, locals_)]
        return _io.deliver(targets, progress)

    def info(self) -> Dict[str, Any]:
        """The layout and each member's slot, node and items."""
        layout = self.layout
        members = []
        total = 0
        for m in layout.members:
            conn, node = _io.node_client(self.client, m)
            pairs = dict(_io.info_pairs(_io.run(conn, node, m, layout.prefix + ".INFO", m)))
            items = int(pairs.get("Number of items inserted", 0))
            total += items
            members.append({"key": m, "slot": _native.key_slot(m), "node": node,
                            "items": items})
        return {"name": self.name, "family": layout.family, "shards": len(layout.members),
                "capacity": layout.capacity, "error_rate": layout.error_rate,
                "member_capacity": layout.member_capacity, "items": total,
                "members": members}

    def drop(self) -> int:
        """Deletes the members and the descriptor; returns the keys deleted."""
        layout = self.layout
        n = 0
        for key in layout.members + [self.name]:
            conn, node = _io.node_client(self.client, key)
            n += int(_io.run(conn, node, key, "DEL", key))
        self._layout = None
        return n
