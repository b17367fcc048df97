// top-k: the server-side tests of packages/bloom/lib/commands/top-k/*.spec.ts, named after the
// spec's describe block and test title; each asserts what that test does. (LIST_WITHCOUNT's
// spec skips itself on servers older than 2.2.9; every server this suite meets is newer.)
'use strict';

const assert = require('node:assert/strict');

module.exports = [
  ['TOPK.ADD', 'client.topK.add', async (client) => {
    const [, expelled] = await Promise.all([
      client.topK.reserve('topK', 3),
      client.topK.add('topK', 'item'),
    ]);
    assert.deepEqual(expelled, [null]);
  }],
  ['TOPK.COUNT', 'client.topK.count', async (client) => {
    const [, counts] = await Promise.all([
      client.topK.reserve('key', 3),
      client.topK.count('key', 'item'),
    ]);
    assert.deepEqual(counts, [0]);
  }],
  ['TOPK.INCRBY', 'client.topK.incrby', async (client) => {
    const [, expelled] = await Promise.all([
      client.topK.reserve('key', 5),
      client.topK.incrBy('key', { item: 'item', incrementBy: 1 }),
    ]);
    assert.deepEqual(expelled, [null]);
  }],
  ['TOPK INFO', 'client.topK.info', async (client) => {
    const [, info] = await Promise.all([
      client.topK.reserve('key', 3),
      client.topK.info('key'),
    ]);
    assert.equal(typeof info, 'object');
    assert.equal(info.k, 3);
    for (const field of ['width', 'depth', 'decay']) {
      assert.equal(typeof info[field], 'number', field);
    }
  }],
  ['TOPK INFO', 'client.topK.info - structural assertion', async (client) => {
    await client.topK.reserve('key', 5);
    const info = await client.topK.info('key');
    assert.ok(info !== null && typeof info === 'object' && !Array.isArray(info));
    for (const field of ['k', 'width', 'depth', 'decay']) {
      assert.ok(field in info && typeof info[field] === 'number', field);
    }
    assert.deepStrictEqual(Object.keys(info).sort(), ['decay', 'depth', 'k', 'width']);
  }],
  ['TOPK.LIST', 'client.topK.list', async (client) => {
    const [, items] = await Promise.all([
      client.topK.reserve('key', 3),
      client.topK.list('key'),
    ]);
    assert.deepEqual(items, []);
  }],
  ['TOPK.LIST WITHCOUNT', 'client.topK.listWithCount', async (client) => {
    const [, , items] = await Promise.all([
      client.topK.reserve('key', 3),
      client.topK.add('key', 'item'),
      client.topK.listWithCount('key'),
    ]);
    assert.deepEqual(items, [{ item: 'item', count: 1 }]);
  }],
  ['TOPK.QUERY', 'client.topK.query', async (client) => {
    const [, listed] = await Promise.all([
      client.topK.reserve('key', 3),
      client.topK.query('key', 'item'),
    ]);
    assert.deepEqual(listed, [false]);
  }],
  ['TOPK.RESERVE', 'client.topK.reserve', async (client) => {
    assert.equal(await client.topK.reserve('topK', 3), 'OK');
  }],
];
