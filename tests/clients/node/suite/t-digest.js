// t-digest: the server-side tests of packages/bloom/lib/commands/t-digest/*.spec.ts, named after
// the spec's describe block and test title; each asserts what that test does.
'use strict';

const assert = require('node:assert/strict');

const INFO_FIELDS = [
  'Compression',
  'Capacity',
  'Merged nodes',
  'Unmerged nodes',
  'Merged weight',
  'Unmerged weight',
  'Observations',
  'Total compressions',
  'Memory usage',
];

// A digest created empty, then answered `query` once: the spec pipelines the two.
async function onEmpty(client, query) {
  const [, reply] = await Promise.all([client.tDigest.create('key'), query()]);
  return reply;
}

// The spec's "with data" tests: 1..5 added to a default digest, then one query.
async function onOneToFive(client, query) {
  await client.tDigest.create('key');
  await client.tDigest.add('key', [1, 2, 3, 4, 5]);
  return query();
}

function assertNumbers(reply, length) {
  assert.ok(Array.isArray(reply), 'an array');
  assert.equal(reply.length, length);
  reply.forEach((value, i) => assert.equal(typeof value, 'number', `element ${i}`));
}

module.exports = [
  ['TDIGEST.ADD', 'client.tDigest.add', async (client) => {
    assert.equal(await onEmpty(client, () => client.tDigest.add('key', [1])), 'OK');
  }],
  ['TDIGEST.BYRANK', 'client.tDigest.byRank', async (client) => {
    assert.deepEqual(await onEmpty(client, () => client.tDigest.byRank('key', [1])), [NaN]);
  }],
  ['TDIGEST.BYRANK', 'client.tDigest.byRank with data', async (client) => {
    const values = await onOneToFive(client, () => client.tDigest.byRank('key', [0, 2, 4]));
    assertNumbers(values, 3);
    assert.ok(values[0] <= values[1] && values[1] <= values[2], `${values} ascending`);
  }],
  ['TDIGEST.BYREVRANK', 'client.tDigest.byRevRank', async (client) => {
    assert.deepEqual(await onEmpty(client, () => client.tDigest.byRevRank('key', [1])), [NaN]);
  }],
  ['TDIGEST.BYREVRANK', 'client.tDigest.byRevRank with data', async (client) => {
    const values = await onOneToFive(client, () => client.tDigest.byRevRank('key', [0, 2, 4]));
    assertNumbers(values, 3);
    assert.ok(values[0] >= values[1] && values[1] >= values[2], `${values} descending`);
  }],
  ['TDIGEST.CDF', 'client.tDigest.cdf', async (client) => {
    assert.deepEqual(await onEmpty(client, () => client.tDigest.cdf('key', [1])), [NaN]);
  }],
  ['TDIGEST.CDF', 'client.tDigest.cdf with data', async (client) => {
    assertNumbers(await onOneToFive(client, () => client.tDigest.cdf('key', [2, 4])), 2);
  }],
  ['TDIGEST.CREATE', 'client.tDigest.create', async (client) => {
    assert.equal(await client.tDigest.create('key'), 'OK');
  }],
  // The spec's first INFO test calls assert(typeof x, 'object'), which holds for any reply:
  // it checks that CREATE and INFO succeed and nothing more. So does this entry.
  ['TDIGEST.INFO', 'client.tDigest.info', async (client) => {
    const info = await onEmpty(client, () => client.tDigest.info('key'));
    assert.ok(typeof info);
    for (const field of INFO_FIELDS) {
      assert.ok(typeof info[field], field);
    }
  }],
  ['TDIGEST.INFO', 'client.tDigest.info structural response shape', async (client) => {
    await client.tDigest.create('key', { COMPRESSION: 100 });
    await client.tDigest.add('key', [1, 2, 3]);
    const info = await client.tDigest.info('key');
    assert.ok(info !== null && typeof info === 'object');
    assert.ok(!Array.isArray(info), 'not an array');
    assert.deepEqual(Object.keys(info).sort(), [...INFO_FIELDS].sort());
    for (const field of INFO_FIELDS) {
      assert.strictEqual(typeof info[field], 'number', field);
    }
    assert.strictEqual(info.Compression, 100);
    assert.strictEqual(info.Observations, 3);
  }],
  ['TDIGEST.MAX', 'client.tDigest.max', async (client) => {
    assert.deepEqual(await onEmpty(client, () => client.tDigest.max('key')), NaN);
  }],
  ['TDIGEST.MAX', 'client.tDigest.max with data', async (client) => {
    assert.equal(await onOneToFive(client, () => client.tDigest.max('key')), 5);
  }],
  ['TDIGEST.MERGE', 'client.tDigest.merge', async (client) => {
    const [, merged] = await Promise.all([
      client.tDigest.create('source'),
      client.tDigest.merge('destination', 'source'),
    ]);
    assert.equal(merged, 'OK');
  }],
  // strict equal is Object.is, so NaN equals NaN here.
  ['TDIGEST.MIN', 'client.tDigest.min', async (client) => {
    assert.equal(await onEmpty(client, () => client.tDigest.min('key')), NaN);
  }],
  ['TDIGEST.MIN', 'client.tDigest.min with data', async (client) => {
    const min = await onOneToFive(client, () => client.tDigest.min('key'));
    assert.equal(typeof min, 'number');
    assert.equal(min, 1);
  }],
  ['TDIGEST.QUANTILE', 'client.tDigest.quantile', async (client) => {
    assert.deepEqual(await onEmpty(client, () => client.tDigest.quantile('key', [1])), [NaN]);
  }],
  ['TDIGEST.QUANTILE', 'client.tDigest.quantile with values', async (client) => {
    const q = await onOneToFive(client, () => client.tDigest.quantile('key', [0, 0.5, 1]));
    assertNumbers(q, 3);
    assert.ok(q[0] >= 1 && q[0] <= 1.5, `q(0) = ${q[0]}`);
    assert.ok(q[1] >= 2.5 && q[1] <= 3.5, `q(0.5) = ${q[1]}`);
    assert.ok(q[2] >= 4.5 && q[2] <= 5, `q(1) = ${q[2]}`);
  }],
  ['TDIGEST.RANK', 'client.tDigest.rank', async (client) => {
    assert.deepEqual(await onEmpty(client, () => client.tDigest.rank('key', [1])), [-2]);
  }],
  ['TDIGEST.RESET', 'client.tDigest.reset', async (client) => {
    assert.equal(await onEmpty(client, () => client.tDigest.reset('key')), 'OK');
  }],
  ['TDIGEST.REVRANK', 'client.tDigest.revRank', async (client) => {
    assert.deepEqual(await onEmpty(client, () => client.tDigest.revRank('key', [1])), [-2]);
  }],
  ['TDIGEST.TRIMMED_MEAN', 'client.tDigest.trimmedMean', async (client) => {
    assert.equal(await onEmpty(client, () => client.tDigest.trimmedMean('key', 0, 1)), NaN);
  }],
  ['TDIGEST.TRIMMED_MEAN', 'client.tDigest.trimmedMean with data', async (client) => {
    const mean = await onOneToFive(client, () => client.tDigest.trimmedMean('key', 0.1, 0.9));
    assert.equal(typeof mean, 'number');
    assert.ok(!Number.isNaN(mean), 'not NaN');
    assert.ok(mean > 0 && mean < 10, `${mean} in (0, 10)`);
  }],
];
