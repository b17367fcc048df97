"""Sharded filters through redis-py: the CLI's layout (``redbloom shard``), so a filter
created by either is used by the other. Items are grouped per member, and the members'
commands per node: one pipeline per node per round. With an asyncio client every method
returns an awaitable."""

from __future__ import annotations

from collections import defaultdict
from typing import Any, Dict, Iterable, List, Optional

from . import _drive, _io, _native

#: Items per INSERT / MEXISTS command (as the CLI sends them).
ITEMS_PER_COMMAND = 1000
#: Times a round is sent at most: again after the cluster moved a slot (MOVED/ASK) or a
#: node failed, after pauses of 0.1 s doubling up to 2 s (about 8 s in all: a failover
#: with a node timeout of a few seconds fits).
ROUND_ATTEMPTS = 8


class ShardedFilter:
    """One logical filter over N member keys spread over a cluster's slots (or all on one
    server), with a descriptor hash at `name` — the layout of docs/sharding.md."""

    def __init__(self, client: Any, name: str) -> None:
        self.client = client
        self.name = name
        self._layout: Optional[Any] = None

    def _run(self, op: Any) -> Any:
        return _io.run(self.client, op)

    # -- the layout -------------------------------------------------------------------
    def _layout_op(self):
        if self._layout is None:
            name = self.name
            kind = _io.text((yield ("run", name, ["TYPE", name])))
            if kind == "none":
                raise KeyError("no sharded filter %s (no such key)" % name)
            if kind != "hash":
                raise TypeError("%s is not a sharded filter descriptor (a key of type %s)"
                                % (name, kind))
            raw = yield ("run", name, ["HGETALL", name])
            if isinstance(raw, list):
                raw = dict(zip(raw[::2], raw[1::2]))
            fields = {_io.text(k): _io.text(v) for k, v in raw.items()}
            self._layout = _native.Layout.parse(name, fields)
        return self._layout

    def layout(self) -> Any:
        """The descriptor (`redbloom._native.Layout`), read from the server the first time."""

        def op():
            return (yield from self._layout_op())

        return self._run(op())

    def create(self, capacity: int, error_rate: float = 0.01, *, shards: int,
               family: str = "bf", expansion: Optional[int] = None,
               non_scaling: bool = False, blocked: bool = False) -> Any:
        """Creates the members (each reserved for its share plus headroom) and then the
        descriptor (`redbloom shard create`); refuses when the name or a member exists."""
        layout = _native.Layout(self.name, shards, family, capacity, error_rate, expansion,
                                non_scaling, blocked)

        def op():
            for key in [self.name] + layout.members:
                if int((yield ("run", key, ["EXISTS", key]))):
                    raise _io.LoadRefused("%s already exists" % key)
            made: List[str] = []
            try:
                for key, words in zip(layout.members, layout.reserves()):
                    yield ("run", key, words)
                    made.append(key)
            except BaseException:
                for key in made:
                    yield ("quiet", key, ["DEL", key])
                raise
            flat: List[str] = []
            for k, v in layout.fields():
                flat += [k, v]
            yield ("run", self.name, ["HSET", self.name] + flat)
            self._layout = layout

        return self._run(op())

    # -- items ------------------------------------------------------------------------
    def _per_item_op(self, items: Iterable[Any], verb: str, nocreate: bool):
        layout = yield from self._layout_op()
        members = layout.members
        # The items as bytes, and per member its items' positions and bytes (native).
        data, groups = layout.group(items)
        out: List[Any] = [0] * len(data)
        pending = {m: g for m, g in enumerate(groups) if g[0]}
        head: List[Any] = ["NOCREATE", "ITEMS"] if nocreate else []
        for attempt in range(ROUND_ATTEMPTS):
            # One batch per node: the members' commands, 1,000 items each.
            plan: Dict[str, List[tuple]] = defaultdict(list)
            for m, (indices, chunk) in pending.items():
                node = _drive.node_name(self.client, members[m])
                words = [layout.prefix + "." + verb, members[m]] + head
                for part in range(0, len(indices), ITEMS_PER_COMMAND):
                    span = indices[part:part + ITEMS_PER_COMMAND]
                    sent = chunk[part:part + ITEMS_PER_COMMAND]
                    plan[node].append((m, span, sent, words + sent))
            batches = list(plan.values())
            replies = yield ("groups", [(members[b[0][0]], [w for _, _, _, w in b])
                                        for b in batches])
            failed: Dict[int, tuple] = {}
            for batch, reply in zip(batches, replies):
                if isinstance(reply, BaseException):
                    if not isinstance(reply, _drive.TRANSIENT) or attempt + 1 == ROUND_ATTEMPTS:
                        raise reply
                    for m, span, sent, _ in batch:
                        again = failed.setdefault(m, ([], []))
                        again[0].extend(span)
                        again[1].extend(sent)
                    continue
                for (m, span, _, _), answers in zip(batch, reply):
                    for i, r in zip(span, answers):
                        if isinstance(r, Exception):
                            node = _drive.node_name(self.client, members[m])
                            raise _io.ServerError("%s: member %s on %s: item %r: %s" % (
                                self.name, members[m], node, data[i], r), node, members[m])
                        out[i] = r
            if not failed:
                return out
            pending = failed
            yield ("refresh", min(0.1 * 2 ** attempt, 2.0))
        return out

    def add(self, items: Iterable[Any]) -> Any:
        """Adds items (each routed to its member); one bool per item, in order: whether it
        was new (CF: always True)."""

        def op():
            return [bool(r) for r in (yield from self._per_item_op(items, "INSERT", True))]

        return self._run(op())

    def contains(self, items: Iterable[Any]) -> Any:
        """Whether each item may be in the filter, in order."""

        def op():
            return [bool(r) for r in (yield from self._per_item_op(items, "MEXISTS", False))]

        return self._run(op())

    def __contains__(self, item: Any) -> bool:
        if _drive.is_async(self.client):
            raise TypeError("`in` cannot await: use `await filter.contains([item])`")
        return self.contains([item])[0]

    def load(self, items: Iterable[Any], progress: Any = None) -> Any:
        """Bulk-loads items into the empty members, all or nothing (`redbloom shard load`):
        each member is built here from the empty filter the server reserved, shipped under
        a temporary key and renamed into place only if the member is still empty. Returns
        the bytes sent."""
        def op():
            layout = yield from self._layout_op()
            if layout.family == "cbf":
                raise ValueError("load supports bf and cf sharded filters")
            members = layout.members
            filters = []
            for m in members:
                f, _ = yield from _io.pull_op(m)
                if len(f):
                    raise _io.LoadRefused("%s: member %s holds items; load fills empty "
                                          "members only" % (self.name, m))
                filters.append(f)
            _, groups = layout.group(items)
            for f, (_, group) in zip(filters, groups):
                f.add_many(group)
            info = layout.prefix + ".INFO"
            targets = [_io.Target(m, f, info) for m, f in zip(members, filters)]
            return (yield from _io.deliver_op(targets, progress))

        return self._run(op())

    def info(self) -> Any:
        """The layout and each member's slot, node and items."""

        def op():
            layout = yield from self._layout_op()
            members = []
            total = 0
            for m in layout.members:
                pairs = dict(_io.info_pairs((yield ("run", m, [layout.prefix + ".INFO", m]))))
                items = int(pairs.get("Number of items inserted", 0))
                total += items
                members.append({"key": m, "slot": _native.key_slot(m),
                                "node": _drive.node_name(self.client, m), "items": items})
            return {"name": self.name, "family": layout.family,
                    "shards": len(layout.members), "capacity": layout.capacity,
                    "error_rate": layout.error_rate,
                    "member_capacity": layout.member_capacity, "items": total,
                    "members": members}

        return self._run(op())

    def drop(self) -> Any:
        """Deletes the members and the descriptor; returns the keys deleted."""

        def op():
            layout = yield from self._layout_op()
            n = 0
            for key in layout.members + [self.name]:
                n += int((yield ("run", key, ["DEL", key])))
            self._layout = None
            return n

        return self._run(op())
