"""The two drivers of redbloom's I/O: every operation (``_io``, ``_sharded``) is written once
as a generator that yields requests and receives their replies, and these run it over a
sync redis-py client (``redis.Redis``, ``redis.cluster.RedisCluster``) or an asyncio one
(``redis.asyncio.Redis``, ``redis.asyncio.cluster.RedisCluster``).

Requests (tuples):

- ``("run", key, words)``: one command on the node serving `key`; its reply, or
  ``ServerError`` (naming node and key) raised into the operation.
- ``("pipe", key, [words, …])``: commands in order on that node, one round trip (a
  pipeline); the list of replies, or the first error raised.
- ``("groups", [(key, [words, …]), …])``: several such batches, one per node, run side by
  side (asyncio: concurrently); a list with, per batch, its replies or the exception.
- ``("quiet", key, words)``: a command whose failure does not matter (a cleanup); None.
- ``("refresh", seconds)``: after a pause of `seconds` (a failover takes a few), a cluster
  client reads the cluster's slot map again.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any, Generator, List, Tuple

import redis
import redis.asyncio
from redis.asyncio.cluster import RedisCluster as AsyncRedisCluster
from redis.cluster import RedisCluster

#: redis-py option: the reply's bytes are never decoded (filters' chunks are binary).
RAW = {"NEVER_DECODE": True}

#: Failures after which a batch is sent again (the cluster moved a slot, a node failed).
TRANSIENT = (redis.exceptions.ConnectionError, redis.exceptions.TimeoutError,
             redis.exceptions.MovedError, redis.exceptions.AskError,
             redis.exceptions.TryAgainError, redis.exceptions.ClusterDownError)


class ServerError(redis.exceptions.ResponseError):
    """A server refused a command redbloom sent: names the node and the key."""

    def __init__(self, message: str, node: str = "", key: str = "") -> None:
        super().__init__(message)
        self.node = node
        self.key = key


def _server_error(e: Exception, node: str, key: str) -> Exception:
    if isinstance(e, redis.exceptions.ResponseError) and not isinstance(e, TRANSIENT):
        err = ServerError("%s (node %s, key %s)" % (e, node, key), node, key)
        err.__cause__ = e
        return err
    return e


Op = Generator[Tuple[Any, ...], Any, Any]


# -- sync -------------------------------------------------------------------------------
def node_client(client: Any, key: str) -> Tuple[Any, str]:
    """The plain client of the node serving `key`'s slot and its name (host:port); for a
    single server, the client itself."""
    if isinstance(client, RedisCluster):
        node = client.get_node_from_key(key)
        return node.redis_connection, node.name
    kwargs = client.connection_pool.connection_kwargs
    return client, "%s:%s" % (kwargs.get("host", "localhost"), kwargs.get("port", 6379))


def _pipe(client: Any, key: str, cmds: List[List[Any]]) -> List[Any]:
    conn, node = node_client(client, key)
    pipe = conn.pipeline(transaction=False)
    for words in cmds:
        pipe.execute_command(*words, **RAW)
    try:
        return pipe.execute(raise_on_error=True)
    except redis.exceptions.RedisError as e:
        raise _server_error(e, node, key) from e


def _sync(client: Any, req: Tuple[Any, ...]) -> Any:
    kind = req[0]
    if kind == "run":
        conn, node = node_client(client, req[1])
        try:
            return conn.execute_command(*req[2], **RAW)
        except redis.exceptions.RedisError as e:
            raise _server_error(e, node, req[1]) from e
    if kind == "pipe":
        return _pipe(client, req[1], req[2])
    if kind == "groups":
        out: List[Any] = []
        for key, cmds in req[1]:
            try:
                out.append(_pipe(client, key, cmds))
            except redis.exceptions.RedisError as e:
                out.append(e)
        return out
    if kind == "quiet":
        try:
            node_client(client, req[1])[0].execute_command(*req[2])
        except Exception:  # a cleanup: a later run replaces what is left
            pass
        return None
    if kind == "refresh":
        time.sleep(req[1])
        if isinstance(client, RedisCluster):
            try:
                client.nodes_manager.initialize()
            except redis.exceptions.RedisError:
                pass  # the next attempt tries again
        return None
    raise ValueError(kind)


def run_sync(client: Any, op: Op) -> Any:
    """Runs operation `op` over a sync client; exceptions (the client's, a
    KeyboardInterrupt) are raised into it, so its cleanups run."""
    reply: Any = None
    error: Any = None
    while True:
        try:
            req = op.throw(error) if error is not None else op.send(reply)
        except StopIteration as done:
            return done.value
        error = None
        try:
            reply = _sync(client, req)
        except BaseException as e:  # noqa: B036 — raised into the operation
            error = e


# -- asyncio ----------------------------------------------------------------------------
def _anode(client: Any, key: str) -> Tuple[Any, str]:
    if isinstance(client, AsyncRedisCluster):
        node = client.get_node_from_key(key)
        return node, node.name
    kwargs = client.connection_pool.connection_kwargs
    return None, "%s:%s" % (kwargs.get("host", "localhost"), kwargs.get("port", 6379))


def _named(words: List[Any]) -> List[Any]:
    """The words with the command name as str (redis-py's cluster routing reads it)."""
    if isinstance(words[0], bytes):
        return [words[0].decode()] + list(words[1:])
    return words


async def _arun(client: Any, key: str, words: List[Any]) -> Any:
    words = _named(words)
    node, name = _anode(client, key)
    try:
        if node is not None:
            return await client.execute_command(*words, target_nodes=node, **RAW)
        return await client.execute_command(*words, **RAW)
    except redis.exceptions.RedisError as e:
        raise _server_error(e, name, key) from e


async def _apipe(client: Any, key: str, cmds: List[List[Any]]) -> List[Any]:
    node, name = _anode(client, key)
    if node is not None:  # in order, on the node (a cluster pipeline may reorder)
        return [await _arun(client, key, words) for words in cmds]
    pipe = client.pipeline(transaction=False)
    for words in cmds:
        pipe.execute_command(*words, **RAW)
    try:
        return await pipe.execute(raise_on_error=True)
    except redis.exceptions.RedisError as e:
        raise _server_error(e, name, key) from e


async def _async(client: Any, req: Tuple[Any, ...]) -> Any:
    kind = req[0]
    if kind == "run":
        return await _arun(client, req[1], req[2])
    if kind == "pipe":
        return await _apipe(client, req[1], req[2])
    if kind == "groups":
        return list(await asyncio.gather(*[_apipe(client, k, c) for k, c in req[1]],
                                         return_exceptions=True))
    if kind == "quiet":
        try:
            await _arun(client, req[1], req[2])
        except Exception:  # a cleanup: a later run replaces what is left
            pass
        return None
    if kind == "refresh":
        await asyncio.sleep(req[1])
        if isinstance(client, AsyncRedisCluster):
            try:
                await client.nodes_manager.initialize()
            except redis.exceptions.RedisError:
                pass  # the next attempt tries again
        return None
    raise ValueError(kind)


async def run_async(client: Any, op: Op) -> Any:
    """Runs operation `op` over an asyncio client (cancellation is raised into it)."""
    if isinstance(client, AsyncRedisCluster):
        await client.initialize()
    reply: Any = None
    error: Any = None
    while True:
        try:
            req = op.throw(error) if error is not None else op.send(reply)
        except StopIteration as done:
            return done.value
        error = None
        try:
            reply = await _async(client, req)
        except BaseException as e:  # noqa: B036 — raised into the operation
            error = e


def is_async(client: Any) -> bool:
    return isinstance(client, (redis.asyncio.Redis, AsyncRedisCluster))


def node_name(client: Any, key: str) -> str:
    return _anode(client, key)[1] if is_async(client) else node_client(client, key)[1]
