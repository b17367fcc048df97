// node-redis' own @redis/bloom test suite, run against a live server through the published
// package's public API. The spec files (packages/bloom/lib/commands/<family>/*.spec.ts in
// node-redis' repository) are not published and need Docker-based test utilities, so
// suite/<family>.js restates each of their server-side tests: the same client calls, the same
// assertions. Unit tests of argument building (`transformArguments`) need no server and are
// not repeated.
//
// Like the spec's testWithClient, every test gets its own connected client and a flushed
// server (FLUSHALL before and after). The spec runs them with RESP: 3; this runs every test
// with RESP3 (node-redis 6's default) and again with `RESP: 2`, since node-redis promises the
// same JavaScript values from both. Prints one line per test and protocol, then
//   node-redis @redis/bloom <version>: N of M passed (RESP3), N of M (RESP2)
// and exits non-zero when any test failed. The server's port is in REDBLOOM_PORT; arguments,
// when given, keep only the families named (bloom cuckoo count-min-sketch top-k t-digest).
'use strict';

const { createClient, RESP_TYPES } = require('redis');
const { version } = require('@redis/bloom/package.json');

const FAMILIES = ['bloom', 'cuckoo', 'count-min-sketch', 'top-k', 't-digest'];

const port = Number(process.env.REDBLOOM_PORT);
if (!port) {
  throw new Error('REDBLOOM_PORT is not set');
}

const chosen = process.argv.slice(2);
for (const family of chosen) {
  if (!FAMILIES.includes(family)) {
    throw new Error(`unknown family ${family}: one of ${FAMILIES.join(' ')}`);
  }
}

const tests = FAMILIES.filter((family) => chosen.length === 0 || chosen.includes(family))
  .flatMap((family) => require(`./suite/${family}.js`).map(([command, title, run, options = {}]) => ({
    family,
    name: `${command}: ${title}`,
    run,
    options,
  })));

function clientFor(resp, options) {
  const config = { socket: { host: '127.0.0.1', port }, RESP: resp };
  if (options.typeMapping === 'buffer') {
    config.commandOptions = { typeMapping: { [RESP_TYPES.BLOB_STRING]: Buffer } };
  }
  return createClient(config);
}

// A test still waiting after this long fails (a reply that never comes must not hang the run).
const TEST_TIMEOUT_MS = 10000;

function withinTimeout(promise) {
  let timer;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no result after ${TEST_TIMEOUT_MS} ms`)), TEST_TIMEOUT_MS);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

// One test on its own client; resolves to null when it passed, else to what went wrong.
async function runOne(test, resp) {
  const client = clientFor(resp, test.options);
  let connectionError = null;
  client.on('error', (err) => {
    connectionError = err;
  });
  try {
    await withinTimeout((async () => {
      await client.connect();
      await client.flushAll();
      await test.run(client);
    })());
    if (connectionError) throw connectionError;
    return null;
  } catch (err) {
    return err;
  } finally {
    if (client.isOpen) {
      await withinTimeout(client.flushAll()).catch(() => {});
      client.destroy();
    }
  }
}

function describe(err) {
  const text = err && err.message ? err.message : String(err);
  return text.split('\n').map((line) => line.trim()).filter(Boolean).join(' | ');
}

// The protocol a client of `resp` really speaks, from HELLO's `proto` field.
async function spokenProtocol(resp) {
  const client = clientFor(resp, {});
  client.on('error', () => {});
  try {
    await withinTimeout(client.connect());
    const hello = await withinTimeout(client.sendCommand(['HELLO']));
    if (hello instanceof Map) return hello.get('proto');
    if (Array.isArray(hello)) return hello[hello.indexOf('proto') + 1];
    return hello.proto;
  } finally {
    client.destroy();
  }
}

async function main() {
  const passed = {};
  for (const resp of [3, 2]) {
    const spoken = await spokenProtocol(resp);
    if (spoken !== resp) {
      throw new Error(`a RESP: ${resp} client speaks protocol ${spoken}`);
    }
    passed[resp] = 0;
    for (const test of tests) {
      const err = await runOne(test, resp);
      if (err === null) {
        passed[resp] += 1;
        console.log(`pass ${test.family} ${test.name} (RESP${resp})`);
      } else {
        console.log(`FAIL ${test.family} ${test.name} (RESP${resp}): ${describe(err)}`);
      }
    }
  }
  const total = tests.length;
  console.log(
    `node-redis @redis/bloom ${version}: ${passed[3]} of ${total} passed (RESP3), ${passed[2]} of ${total} (RESP2)`,
  );
  if (passed[3] !== total || passed[2] !== total) {
    process.exitCode = 1;
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(2);
});
