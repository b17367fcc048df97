// count-min-sketch: the server-side tests of
// packages/bloom/lib/commands/count-min-sketch/*.spec.ts, named after the spec's describe block
// and test title; each asserts what that test does.
'use strict';

const assert = require('node:assert/strict');

module.exports = [
  ['CMS.INCRBY', 'client.cms.incrBy', async (client) => {
    const [, counts] = await Promise.all([
      client.cms.initByDim('key', 1000, 5),
      client.cms.incrBy('key', { item: 'item', incrementBy: 1 }),
    ]);
    assert.deepEqual(counts, [1]);
  }],
  ['CMS.INFO', 'client.cms.info', async (client) => {
    const [, info] = await Promise.all([
      client.cms.initByDim('key', 1000, 5),
      client.cms.info('key'),
    ]);
    // Exactly these three fields, as a plain object (deepStrictEqual checks the prototype).
    assert.deepEqual(info, { width: 1000, depth: 5, count: 0 });
  }],
  ['CMS.INITBYDIM', 'client.cms.initByDim', async (client) => {
    assert.equal(await client.cms.initByDim('key', 1000, 5), 'OK');
  }],
  ['CMS.INITBYPROB', 'client.cms.initByProb', async (client) => {
    assert.equal(await client.cms.initByProb('key', 0.001, 0.01), 'OK');
  }],
  ['CMS.MERGE', 'client.cms.merge', async (client) => {
    const [, , merged] = await Promise.all([
      client.cms.initByDim('source', 1000, 5),
      client.cms.initByDim('destination', 1000, 5),
      client.cms.merge('destination', ['source']),
    ]);
    assert.equal(merged, 'OK');
  }],
  ['CMS.QUERY', 'client.cms.query', async (client) => {
    const [, counts] = await Promise.all([
      client.cms.initByDim('key', 1000, 5),
      client.cms.query('key', 'item'),
    ]);
    assert.deepEqual(counts, [0]);
  }],
];
