// node-redis against redbloom: every bf.* and cf.* method node-redis has, with the values
// its documentation promises (booleans, numbers, objects for INFO), and its cms.* options of
// RedisBloom 8.12 (CELL_SIZE, negative increments), once with the default
// client (RESP3 in node-redis 6) and once with `RESP: 2`. Run by tests/it/clients.rs with the
// server's port in REDBLOOM_PORT; exits non-zero on the first failed assertion.
'use strict';

const assert = require('node:assert/strict');
const { createClient, RESP_TYPES } = require('redis');

const port = Number(process.env.REDBLOOM_PORT);
if (!port) {
  throw new Error('REDBLOOM_PORT is not set');
}

// RedisBloom 8.12's Count-Min Sketch options through node-redis 6.3.1's own arguments: a
// CELL_SIZE sketch answers INFO with its fourth pair (labelled `cell_size`, as redbloom
// replies it), a 4-byte one with exactly three; a decrement past a counter is an element.
async function sketch(client, prefix) {
  const small = `${prefix}:cms1`;
  assert.equal(await client.cms.initByDim(small, 100, 3, { CELL_SIZE: 1 }), 'OK');
  assert.equal(await client.cms.initByProb(`${prefix}:cms8`, 0.01, 0.01, { CELL_SIZE: 8 }), 'OK');
  assert.deepEqual(await client.cms.incrBy(small, [
    { item: 'a', incrementBy: 200 },
    { item: 'a', incrementBy: -50 },
  ]), [200, 150]);
  const refused = await client.cms.incrBy(small, [
    { item: 'a', incrementBy: 106 },
    { item: 'b', incrementBy: -1 },
  ]);
  assert.equal(refused.length, 2);
  assert.match(String(refused[0]), /CMS: INCRBY overflow/);
  assert.match(String(refused[1]), /CMS: INCRBY underflow/);
  assert.deepEqual(await client.cms.query(small, ['a', 'b']), [150, 0]);
  assert.deepEqual({ ...(await client.cms.info(small)) }, {
    width: 100, depth: 3, count: 150, cell_size: 1,
  });
  assert.deepEqual({ ...(await client.cms.info(`${prefix}:cms8`)) }, {
    width: 200, depth: 7, count: 0, cell_size: 8,
  });
  await client.cms.initByDim(`${prefix}:cms4`, 100, 3);
  assert.deepEqual({ ...(await client.cms.info(`${prefix}:cms4`)) }, { width: 100, depth: 3, count: 0 });
}

async function bloom(client, resp, prefix) {
  const key = `${prefix}:bf`;
  assert.equal(await client.bf.reserve(key, 0.01, 100), 'OK');
  assert.equal(await client.bf.add(key, 'x'), true);
  assert.equal(await client.bf.add(key, 'x'), false);
  assert.deepEqual(await client.bf.mAdd(key, ['x', 'y']), [false, true]);
  assert.deepEqual(await client.bf.insert(key, ['y', 'z']), [false, true]);
  assert.equal(await client.bf.exists(key, 'x'), true);
  assert.equal(await client.bf.exists(key, 'nothing'), false);
  assert.equal(await client.bf.exists(`${prefix}:missing`, 'x'), false);
  assert.deepEqual(await client.bf.mExists(key, ['x', 'nothing', 'z']), [true, false, true]);
  assert.equal(await client.bf.card(key), 3);
  const info = await client.bf.info(key);
  assert.deepEqual({ ...info }, {
    Capacity: 100,
    Size: 240,
    'Number of filters': 1,
    'Number of items inserted': 3,
    'Expansion rate': 2,
  });
  assert.equal(info.Capacity, 100);

  // A non-scaling filter: its expansion is null; a full filter's error is an element.
  const full = `${prefix}:bf-full`;
  const inserted = await client.sendCommand(['BF.INSERT', full, 'CAPACITY', '1', 'NONSCALING', 'ITEMS', 'a', 'b']);
  assert.equal(inserted.length, 2);
  assert.equal(inserted[0], resp === 3 ? true : 1);
  assert.ok(inserted[1] instanceof Error, `${inserted[1]}`);
  assert.match(inserted[1].message, /non scaling filter is full/);
  assert.equal((await client.bf.info(full))['Expansion rate'], null);
  const capacity = await client.sendCommand(['BF.INFO', key, 'CAPACITY']);
  assert.deepEqual(resp === 3 ? { ...capacity } : capacity, resp === 3 ? { Capacity: 100 } : [100]);

  // SCANDUMP / LOADCHUNK round trip, binary-safe.
  const binary = client.withTypeMapping({ [RESP_TYPES.BLOB_STRING]: Buffer });
  const copy = `${prefix}:bf-copy`;
  let iterator = 0;
  for (;;) {
    const { iterator: next, chunk } = await binary.bf.scanDump(key, iterator);
    if (next === 0) break;
    assert.equal(await client.bf.loadChunk(copy, next, chunk), 'OK');
    iterator = next;
  }
  assert.deepEqual(await client.bf.mExists(copy, ['x', 'y', 'z', 'nothing']), [true, true, true, false]);
  assert.deepEqual({ ...(await client.bf.info(copy)) }, { ...info });
}

async function cuckoo(client, resp, prefix) {
  const key = `${prefix}:cf`;
  assert.equal(await client.cf.reserve(key, 1000), 'OK');
  assert.equal(await client.cf.add(key, 'x'), true);
  assert.equal(await client.cf.addNX(key, 'x'), false);
  assert.equal(await client.cf.addNX(key, 'y'), true);
  assert.deepEqual(await client.cf.insert(key, ['x', 'z']), [true, true]);
  assert.deepEqual(await client.cf.insertNX(key, ['x', 'w']), [0, 1]);
  assert.equal(await client.cf.exists(key, 'x'), true);
  assert.equal(await client.cf.exists(key, 'nothing'), false);
  assert.deepEqual(await client.cf.mExists(key, ['x', 'nothing', 'w']), [true, false, true]);
  assert.equal(await client.cf.count(key, 'x'), 2);
  assert.equal(await client.cf.del(key, 'x'), true);
  assert.equal(await client.cf.del(key, 'nothing'), false);
  const info = await client.cf.info(key);
  assert.deepEqual({ ...info }, {
    Size: 1080,
    'Number of buckets': 512,
    'Number of filters': 1,
    'Number of items inserted': 4,
    'Number of items deleted': 1,
    'Bucket size': 2,
    'Expansion rate': 1,
    'Max iterations': 20,
  });

  // A filter that cannot grow: CF.INSERT reports "no space" as false (RESP2: -1, which
  // node-redis turns into false as well), CF.INSERTNX as -1.
  const full = `${prefix}:cf-full`;
  assert.equal(await client.cf.reserve(full, 2, { BUCKETSIZE: 1, EXPANSION: 0 }), 'OK');
  const items = Array.from({ length: 12 }, (_, i) => `item${i}`);
  const added = await client.cf.insert(full, items);
  assert.ok(added.includes(true) && added.includes(false), `${added}`);
  const raw = await client.sendCommand(['CF.INSERT', full, 'ITEMS', 'more']);
  assert.deepEqual(raw, resp === 3 ? [false] : [-1]);
  assert.deepEqual(await client.cf.insertNX(full, ['item0', 'another']), [0, -1]);

  const binary = client.withTypeMapping({ [RESP_TYPES.BLOB_STRING]: Buffer });
  const copy = `${prefix}:cf-copy`;
  let iterator = 0;
  for (;;) {
    const { iterator: next, chunk } = await binary.cf.scanDump(key, iterator);
    if (next === 0) {
      assert.equal(chunk, null);
      break;
    }
    assert.equal(await client.cf.loadChunk(copy, next, chunk), 'OK');
    iterator = next;
  }
  assert.deepEqual(await client.cf.mExists(copy, ['y', 'z', 'w']), [true, true, true]);
  assert.deepEqual({ ...(await client.cf.info(copy)) }, { ...info });
}

async function main() {
  for (const resp of [3, 2]) {
    const options = { url: `redis://127.0.0.1:${port}` };
    if (resp === 2) options.RESP = 2;
    const client = createClient(options);
    client.on('error', (err) => {
      throw err;
    });
    await client.connect();
    const hello = await client.sendCommand(['HELLO']);
    const proto = hello instanceof Map ? hello.get('proto') : (Array.isArray(hello) ? hello[hello.indexOf('proto') + 1] : hello.proto);
    assert.equal(proto, resp, 'the protocol node-redis speaks');
    await bloom(client, resp, `node${resp}`);
    await cuckoo(client, resp, `node${resp}`);
    await sketch(client, `node${resp}`);
    await client.close();
    console.log(`node-redis RESP${resp}: ok`);
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
