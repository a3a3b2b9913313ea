// Fill the real cache store with N entries of ~1 KiB (realistic api.php headers) and report the
// process's RSS and heap growth against the payload bytes, and whether a byte budget holds.
// Entries are made as the gateway makes them: header strings new for every answer (as undici
// parses them), the flow's removals, then compactEntry. Run with --expose-gc; prints one JSON line.
import { compactEntry } from '../dist/cache/compact.js';
import { CacheStore } from '../dist/cache/store.js';
import { headers } from './servers/api-answer.mjs';

const n = Number(process.argv[2] ?? 10_000);
const MB = 1024 * 1024;
/** A new string with the same characters, as a parser makes for every answer. */
const fresh = (s) => Buffer.from(s, 'latin1').toString('latin1');
/** What arrives from the wiki for one answer, after the flow's removals (flow.ts clientHeadersFor). */
function answerHeaders(i) {
  const h = {};
  for (const [name, value] of Object.entries(headers)) h[fresh(name)] = fresh(value);
  h[fresh('expires')] = new Date(Date.now() + i).toUTCString();
  h[fresh('x-request-id')] = fresh(`req-${i}`);
  delete h['x-request-id'];
  return h;
}
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
    store.set('shared', `anon\n${urlKey}\nhttp\n-\n-`, compactEntry({
      status: 200, headers: answerHeaders(i), body, storedAt: Date.now(), ttlMs: 3_600_000, urlKey, modules: [fresh('query'), fresh('allpages')], slot: undefined,
    }));
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
