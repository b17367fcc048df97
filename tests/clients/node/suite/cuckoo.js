// cuckoo: the server-side tests of packages/bloom/lib/commands/cuckoo/*.spec.ts (CF.MEXISTS's
// arrived with @redis/bloom 6.3.0), named after the spec's describe block and test title.
'use strict';

const assert = require('node:assert/strict');

const BINARY = { typeMapping: 'buffer' };

const INFO_FIELDS = [
  'Size',
  'Number of buckets',
  'Number of filters',
  'Number of items inserted',
  'Number of items deleted',
  'Bucket size',
  'Expansion rate',
  'Max iterations',
];

module.exports = [
  ['CF.ADD', 'client.cf.add', async (client) => {
    assert.equal(await client.cf.add('key', 'item'), true);
  }],
  // The spec's first ADDNX test is titled client.cf.add; it calls cf.addNX.
  ['CF.ADDNX', 'client.cf.add', async (client) => {
    assert.equal(await client.cf.addNX('key', 'item'), true);
  }],
  ['CF.ADDNX', 'client.cf.addNX returns false when item already exists', async (client) => {
    await client.cf.addNX('key', 'item');
    assert.equal(await client.cf.addNX('key', 'item'), false);
  }],
  ['CF.COUNT', 'client.cf.count', async (client) => {
    assert.equal(await client.cf.count('key', 'item'), 0);
  }],
  ['CF.DEL', 'client.cf.del', async (client) => {
    const [, deleted] = await Promise.all([
      client.cf.reserve('key', 4),
      client.cf.del('key', 'item'),
    ]);
    assert.equal(deleted, false);
  }],
  ['CF.DEL', 'client.cf.del with existing item', async (client) => {
    await client.cf.reserve('key', 4);
    await client.cf.add('key', 'item');
    assert.equal(await client.cf.del('key', 'item'), true);
  }],
  ['CF.EXISTS', 'client.cf.exists', async (client) => {
    assert.equal(await client.cf.exists('key', 'item'), false);
  }],
  ['CF.EXISTS', 'client.cf.exists with existing item', async (client) => {
    await client.cf.reserve('key', 100);
    await client.cf.add('key', 'item');
    assert.equal(await client.cf.exists('key', 'item'), true);
  }],
  ['CF.INFO', 'client.cf.info', async (client) => {
    const [, info] = await Promise.all([
      client.cf.reserve('key', 4),
      client.cf.info('key'),
    ]);
    assert.equal(typeof info, 'object');
    for (const field of INFO_FIELDS) {
      assert.equal(typeof info[field], 'number', field);
    }
  }],
  ['CF.INFO', 'client.cf.info returns object structure', async (client) => {
    await client.cf.reserve('key', 4);
    const info = await client.cf.info('key');
    assert.ok(!Array.isArray(info), 'not an array');
    assert.equal(typeof info, 'object');
    assert.deepEqual(Object.keys(info).sort(), [...INFO_FIELDS].sort());
    for (const field of INFO_FIELDS) {
      assert.equal(typeof info[field], 'number', field);
    }
  }],
  ['CF.INSERT', 'client.cf.insert', async (client) => {
    assert.deepEqual(await client.cf.insert('key', 'item'), [true]);
  }],
  ['CF.INSERTNX', 'client.cf.insertnx', async (client) => {
    assert.deepEqual(await client.cf.insertNX('key', 'item'), [1]);
  }],
  ['CF.LOADCHUNK', 'client.cf.loadChunk', async (client) => {
    const [, , dump] = await Promise.all([
      client.cf.reserve('source', 4),
      client.cf.add('source', 'item'),
      client.cf.scanDump('source', 0),
    ]);
    assert.equal(await client.cf.loadChunk('destination', dump.iterator, dump.chunk), 'OK');
  }, BINARY],
  ['CF.MEXISTS', 'client.cf.mExists', async (client) => {
    assert.deepEqual(await client.cf.mExists('key', ['1', '2']), [false, false]);
  }],
  ['CF.MEXISTS', 'client.cf.mExists with existing items', async (client) => {
    await client.cf.add('mExistsKey', 'item1');
    await client.cf.add('mExistsKey', 'item2');
    assert.deepEqual(await client.cf.mExists('mExistsKey', ['item1', 'item2', 'item3']), [true, true, false]);
  }],
  ['CF.RESERVE', 'client.cf.reserve', async (client) => {
    assert.equal(await client.cf.reserve('key', 4), 'OK');
  }],
  ['CF.SCANDUMP', 'client.cf.scanDump', async (client) => {
    const [, dump] = await Promise.all([
      client.cf.reserve('key', 4),
      client.cf.scanDump('key', 0),
    ]);
    assert.deepEqual(dump, { iterator: 0, chunk: null });
  }],
];
