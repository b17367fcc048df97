"""redbloom: Bloom, Cuckoo, counting, static and expandable filters with the bytes a redbloom (or
RedisBloom) server holds, built and answered in-process; pushed to and pulled from a server
all or nothing through your own redis-py client; saved in the ``redbloom`` CLI's snapshot
format; and sharded filters over a Redis Cluster that the CLI shares.

Items are ``str`` (sent as UTF-8, as redis-py sends it) or ``bytes``; other types raise
``TypeError`` (pass ``str(n)`` for an int, which is what redis-py would send).
"""

from ._native import (
    BloomFilter,
    CountingBloomFilter,
    CuckooFilter,
    ExpandableFilter,
    Filter,
    FilterError,
    Layout,
    SnapshotError,
    StaticFilter,
    from_chunks,
    key_slot,
    merge,
    load,
    temp_key,
    xf_from_chunks,
)
from ._io import LoadRefused, ServerError, pull
from ._copy import LocalCopy
from ._sharded import ShardedFilter

__all__ = [
    "BloomFilter",
    "CountingBloomFilter",
    "CuckooFilter",
    "ExpandableFilter",
    "Filter",
    "FilterError",
    "Layout",
    "LoadRefused",
    "LocalCopy",
    "ServerError",
    "ShardedFilter",
    "SnapshotError",
    "StaticFilter",
    "from_chunks",
    "key_slot",
    "merge",
    "load",
    "pull",
    "temp_key",
    "xf_from_chunks",
]
