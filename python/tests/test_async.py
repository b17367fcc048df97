"""The same operations over redis.asyncio clients (plain and cluster): each call returns an
awaitable, and does what the sync call does."""

import asyncio

import pytest
import redis.asyncio
from redis.asyncio.cluster import RedisCluster

import redbloom

ITEMS = ["a%d" % i for i in range(3000)]


def clients(server, cluster):
    return [redis.asyncio.Redis(port=server.port),
            RedisCluster(host="127.0.0.1", port=cluster.nodes[0].port)]


@pytest.mark.parametrize("which", [0, 1])
def test_async_push_pull_and_sharded(server, cluster, name, which):
    async def main():
        client = clients(server, cluster)[which]
        try:
            local = redbloom.BloomFilter(5000, 0.01)
            local.add_many(ITEMS)
            await local.push(client, name)
            back = await redbloom.pull(client, name)
            assert back.chunks() == local.chunks()
            with pytest.raises(redbloom.LoadRefused, match="already exists"):
                await local.push(client, name)

            f = redbloom.ShardedFilter(client, name + ":s")
            await f.create(10_000, 0.01, shards=6)
            assert await f.add(ITEMS[:100]) == [True] * 100
            assert await f.contains(["a1", "a99", "zz-none"]) == [True, True, False]
            info = await f.info()
            assert info["items"] == 100 and len({m["node"] for m in info["members"]}) == (
                3 if which else 1)
            g = redbloom.ShardedFilter(client, name + ":g")
            await g.create(10_000, 0.01, shards=6)
            await g.load(ITEMS)
            assert all(await g.contains(ITEMS))
            assert await f.drop() == 7 and await g.drop() == 7
        finally:
            await client.aclose()

    asyncio.run(main())


def test_interrupted_async_push_leaves_the_key_as_it_was(server, name):
    async def main():
        client = redis.asyncio.Redis(port=server.port)
        local = redbloom.BloomFilter(20_000_000, 0.001)
        local.add_many(ITEMS)

        def stop(sent):
            raise KeyboardInterrupt

        with pytest.raises(KeyboardInterrupt):
            await local.push(client, name, stop)
        assert await client.exists(name) == 0
        assert await client.exists(redbloom.temp_key(name)) == 0
        await client.aclose()

    asyncio.run(main())
