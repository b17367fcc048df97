// bloom: the server-side tests of packages/bloom/lib/commands/bloom/*.spec.ts, one entry per
// test, named after the spec's describe block and test title; each asserts what that test does.
'use strict';

const assert = require('node:assert/strict');

// The spec's LOADCHUNK tests run on a client that maps blob strings to Buffers.
const BINARY = { typeMapping: 'buffer' };

module.exports = [
  ['BF.ADD', 'client.bf.add', async (client) => {
    assert.equal(await client.bf.add('key', 'item'), true);
  }],
  ['BF.CARD', 'client.bf.card', async (client) => {
    assert.equal(await client.bf.card('key'), 0);
  }],
  ['BF.EXISTS', 'client.bf.exists', async (client) => {
    assert.equal(await client.bf.exists('key', 'item'), false);
  }],
  ['BF.EXISTS', 'client.bf.exists with existing item', async (client) => {
    await client.bf.add('key', 'item');
    assert.strictEqual(await client.bf.exists('key', 'item'), true);
  }],
  ['BF.INFO', 'client.bf.info', async (client) => {
    // Pipelined, as the spec sends them: RESERVE then INFO in one write.
    const [, info] = await Promise.all([
      client.bf.reserve('key', 0.01, 100),
      client.bf.info('key'),
    ]);
    assert.equal(typeof info, 'object');
    assert.equal(info.Capacity, 100);
    for (const field of ['Size', 'Number of filters', 'Number of items inserted', 'Expansion rate']) {
      assert.equal(typeof info[field], 'number', field);
    }
  }],
  ['BF.INFO', 'client.bf.info - structural shape assertion', async (client) => {
    await client.bf.reserve('key', 0.01, 100);
    const info = await client.bf.info('key');
    assert.ok(info !== null && typeof info === 'object');
    assert.ok(!Array.isArray(info), 'not an array');
    assert.ok(!(info instanceof Map), 'not a Map');
    for (const field of ['Capacity', 'Size', 'Number of filters', 'Number of items inserted', 'Expansion rate']) {
      assert.ok(field in info, field);
    }
    assert.equal(info.Capacity, 100);
    for (const field of ['Size', 'Number of filters', 'Number of items inserted', 'Expansion rate']) {
      assert.equal(typeof info[field], 'number', field);
    }
  }],
  ['BF.INSERT', 'client.bf.insert', async (client) => {
    assert.deepEqual(await client.bf.insert('key', 'item'), [true]);
  }],
  ['BF.LOADCHUNK', 'client.bf.loadChunk', async (client) => {
    const [, dump] = await Promise.all([
      client.bf.reserve('source', 0.01, 100),
      client.bf.scanDump('source', 0),
    ]);
    assert.equal(await client.bf.loadChunk('destination', dump.iterator, dump.chunk), 'OK');
  }, BINARY],
  // The spec's title says client.ts.mAdd; it calls bf.mAdd.
  ['BF.MADD', 'client.ts.mAdd', async (client) => {
    assert.deepEqual(await client.bf.mAdd('key', ['1', '2']), [true, true]);
  }],
  ['BF.MEXISTS', 'client.bf.mExists', async (client) => {
    assert.deepEqual(await client.bf.mExists('key', ['1', '2']), [false, false]);
  }],
  ['BF.MEXISTS', 'client.bf.mExists with existing items', async (client) => {
    await client.bf.add('mExistsKey', 'item1');
    await client.bf.add('mExistsKey', 'item2');
    assert.deepEqual(await client.bf.mExists('mExistsKey', ['item1', 'item2', 'item3']), [true, true, false]);
  }],
  ['BF.RESERVE', 'client.bf.reserve', async (client) => {
    assert.equal(await client.bf.reserve('bloom', 0.01, 100), 'OK');
  }],
  ['BF.SCANDUMP', 'client.bf.scanDump', async (client) => {
    const [, dump] = await Promise.all([
      client.bf.reserve('key', 0.01, 100),
      client.bf.scanDump('key', 0),
    ]);
    assert.equal(typeof dump, 'object');
    assert.equal(typeof dump.iterator, 'number');
    assert.equal(typeof dump.chunk, 'string');
  }],
];
