"""A local copy of a server's filter that never gives a false negative.

``LocalCopy(client, key)`` downloads the filter (SCANDUMP) and answers lookups in-process.
"Present" answers come from the copy alone: the filter only gains items between pulls, so
a bit (or fingerprint) seen set stays set. An "absent" answer is given only while the copy
is known to be current, and that is checked, once per call (per batch), with one cheap
request: ``SCANDUMP key 0``, the filter's header (a few dozen bytes), compared with the
header of the first reply of the pull the copy was built from.

- Bloom filter: the header counts the items of every link, and every add that changes a
  bit counts one; an equal header means no bit changed since the pull began.
- Cuckoo filter: the header counts items and deletes, and every add or delete moves one.
- Static filter: it never changes; the copy answers for ever, no check.
- Counting Bloom filter: its header counts adds minus deletes, which an add and a delete
  cancel, so it cannot tell; its absent answers are asked of the server (``CBF.MEXISTS``).
- Expandable filter (XF): the same (a delete and an add may leave an equal header); its
  absent answers are asked of the server (``XF.MEXISTS``).

When the header differs, the absent answers are asked of the server (``MEXISTS`` of those
items only) — so a stale copy is never wrong — and the copy is pulled again, at most once
per ``min_pull_interval`` seconds (the next calls use the fresh copy). Not seen: a key
deleted and rebuilt to a filter with the very same header.
"""

from __future__ import annotations

import time
from typing import Any, Iterable, List

from . import _drive, _io, _native


#: Families whose SCANDUMP header cannot tell a change (an add and a delete may cancel):
#: their copies ask the server for every absent item.
UNVERSIONED = ("cbf", "xf")


class LocalCopy:
    """A filter pulled from `key` answering here, never with a false negative."""

    def __init__(self, client: Any, key: str, min_pull_interval: float = 1.0) -> None:
        self.client = client
        self.key = key
        self.min_pull_interval = min_pull_interval
        #: Lookups answered by the copy alone, by the server, and pulls made.
        self.stats = {"local": 0, "server": 0, "pulls": 0, "checks": 0}
        if _drive.is_async(client):
            raise TypeError("LocalCopy takes a sync redis-py client")
        self._pull()

    def _pull(self) -> None:
        filt, header = _drive.run_sync(self.client, _io.pull_op(self.key))
        self.filter = filt
        self.family = filt.family
        self._prefix = _io.prefix(filt.family)
        # The first reply's header: what the server held when the pull began.
        self._header = header
        self._pulled_at = time.monotonic()
        self.stats["pulls"] += 1

    def _run(self, words: List[Any]) -> Any:
        def op():
            return (yield ("run", self.key, words))

        return _drive.run_sync(self.client, op())

    def _current(self) -> bool:
        """Whether the server's filter is still the one pulled (its header unchanged)."""
        self.stats["checks"] += 1
        _, data = self._run([self._prefix + ".SCANDUMP", self.key, 0])
        return bytes(data or b"") == self._header

    def contains_many(self, items: Iterable[Any]) -> List[bool]:
        """Whether each item may be in the server's filter, in order (never a false
        negative: see the module's documentation)."""
        items = list(items)
        answers = self.filter.contains_many(items)
        absent = [i for i, a in enumerate(answers) if not a]
        if not absent or self.family == "static":
            self.stats["local"] += len(items)
            return answers
        if self.family not in UNVERSIONED and self._current():
            self.stats["local"] += len(items)
            return answers
        words = [self._prefix + ".MEXISTS", self.key] + [items[i] for i in absent]
        for i, r in zip(absent, self._run(words)):
            answers[i] = bool(r)
        self.stats["local"] += len(items) - len(absent)
        self.stats["server"] += len(absent)
        if self.family not in UNVERSIONED and time.monotonic() - self._pulled_at >= self.min_pull_interval:
            self._pull()
        return answers

    def __contains__(self, item: Any) -> bool:
        # "Present", and any answer of a static copy, come from the copy alone.
        hit = item in self.filter
        if hit or self.family == "static":
            self.stats["local"] += 1
            return hit
        return self.contains_many([item])[0]

    def __len__(self) -> int:
        return len(self.filter)
