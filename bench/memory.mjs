// Fill the real cache store with N entries of ~1 KiB (realistic api.php headers) and report the
// process's RSS and heap growth against the payload bytes, and whether a byte budget holds.
// Run with --expose-gc; prints one JSON line.
import { CacheStore } from '../dist/cache/store.js';

const n = Number(process.argv[2] ?? 10_000);
const MB = 1024 * 1024;
const headers = {
  'content-type': 'application/json; charset=utf-8',
  'cache-control': 'private, must-revalidate, max-age=0',
  vary: 'Accept-Encoding, Treat-as-Untrusted, Cookie',
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'content-disposition': 'inline; filename=api-result.json',
};
const gc = () => {
  for (let i = 0; i < 4; i++) globalThis.gc();
};

function fill(store, count) {
  let payload = 0;
  for (let i = 0; i < count; i++) {
    // What the gateway stores: an exact-size buffer per body (never a pooled slice).
    const body = Buffer.allocUnsafeSlow(1000 + (i % 48));
    body.fill(120);
    const urlKey = `/w/api.php?action=query&format=json&list=allpages&apfrom=${i}&aplimit=10`;
    store.set('shared', `anon\n${urlKey}\nhttp\n-\n-`, {
      status: 200, headers: { ...headers, expires: new Date(Date.now() + i).toUTCString() }, body, storedAt: Date.now(), ttlMs: 3_600_000, urlKey, modules: ['query', 'allpages'], slot: undefined,
    });
    payload += body.length;
  }
  return payload;
}

const options = (budget) => ({
  sharedMaxBytes: budget, sessionMaxBytes: 1024 * 1024, maxEntries: 200_000, graceMs: 0, staleIfErrorMs: 0, now: () => Date.now(),
});

gc();
const before = process.memoryUsage();
const store = new CacheStore(options(4096 * MB));
const payload = fill(store, n);
gc();
const after = process.memoryUsage();

// Budget: half the payload; the store must hold at most that.
const budget = Math.floor(payload / 2);
const bounded = new CacheStore(options(budget));
fill(bounded, n);
const held = bounded.stats('shared').bytes;

console.log(JSON.stringify({
  entries: store.stats('shared').entries,
  payloadMB: payload / MB,
  rssMB: (after.rss - before.rss) / MB,
  heapMB: (after.heapUsed - before.heapUsed) / MB,
  budgetMB: budget / MB,
  heldMB: held / MB,
}));
