// The real cache store, filled with ~1 KiB answers (realistic api.php headers), in a process of
// its own (run with --expose-gc; prints one JSON line). Two measurements:
//
//   node --expose-gc bench/memory.mjs fill N [BODY_BYTES]
//       N entries (bodies of ~1 KiB, or BODY_BYTES), nothing evicted: RSS and heap growth
//       against the body bytes stored.
//   node --expose-gc bench/memory.mjs budget MB [distinct]
//       a store with a budget of MB megabytes fed 4x what it can hold, so most of what it
//       stored was evicted: RSS growth against the budget (does the budget bound the memory?).
//       `distinct`: every answer with a header set of its own (an Access-Control-Allow-Origin
//       per answer, as a client sending a new Origin each time gets), so none is shared
//       (src/cache/compact.ts): the worst case for the budget's per-entry count.
//
// Entries are made as the gateway makes them: header strings new for every answer (as undici
// parses them), the flow's removals, a body read as http/body.ts reads it (the store compacts). Run it the
// way the gateway runs (MALLOC_MMAP_THRESHOLD_=131072, see src/cluster/worker-env.ts); run.mjs does.
import { cacheKey } from '../dist/policy/request.js';
import { CacheStore } from '../dist/cache/store.js';
import { headers } from './servers/api-answer.mjs';

const [mode = 'fill', arg, variant] = process.argv.slice(2);
const DISTINCT_HEADERS = mode === 'budget' && variant === 'distinct';
const MB = 1024 * 1024;
/** A new string with the same characters, as a parser makes for every answer. */
const fresh = (s) => Buffer.from(s, 'latin1').toString('latin1');
/** What arrives from the wiki for one answer, after the flow's removals (flow.ts clientHeadersFor). */
function answerHeaders(i) {
  const h = {};
  for (const [name, value] of Object.entries(headers)) h[fresh(name)] = fresh(value);
  h[fresh('expires')] = new Date(Date.now() + i).toUTCString();
  if (DISTINCT_HEADERS) h[fresh('access-control-allow-origin')] = fresh(`https://site-${i}.example`);
  h[fresh('x-request-id')] = fresh(`req-${i}`);
  delete h['x-request-id'];
  return h;
}
const gc = () => {
  for (let i = 0; i < 4; i++) globalThis.gc();
};
const BODY_BYTES = mode === 'fill' && process.argv[4] ? Number(process.argv[4]) : 1000;
const bodyLength = (i) => BODY_BYTES + (i % 48);

function fill(store, count) {
  let payload = 0;
  for (let i = 0; i < count; i++) {
    // What the gateway reads from the wiki (http/body.ts: Buffer.concat, a slice of Node's pool);
    // the store copies it into its slabs.
    const body = Buffer.allocUnsafe(bodyLength(i));
    body.fill(120);
    const urlKey = `/w/api.php?action=query&format=json&list=allpages&apfrom=${i}&aplimit=10`;
    const keyed = { treatAsUntrusted: undefined, forwardedProto: 'http', origin: undefined };
    store.set('shared', cacheKey(urlKey, { kind: 'anonymous', loginSuppressed: false }, keyed), {
      status: 200,
      headers: answerHeaders(i),
      body,
      storedAt: Date.now(),
      ttlMs: 3_600_000,
      urlKey,
      modules: [fresh('query'), fresh('allpages')],
      slot: undefined,
      deps: [fresh('n:0')],
    });
    payload += body.length;
  }
  return payload;
}

const options = (budget) => ({
  sharedMaxBytes: budget,
  sessionMaxBytes: 64 * MB,
  maxEntries: 10_000_000,
  graceMs: 0,
  staleIfErrorMs: 0,
  now: () => Date.now(),
});

// A gateway that has served traffic has grown V8's young generation to its full size (new space
// 2 -> 32 MB here: two 16 MiB semi-spaces, grown when many objects survive a scavenge) whatever
// its cache holds. Grow it here too, with short-lived objects only (at most 20,000 alive at a
// time, so old space is not grown: memory V8 keeps from a grown old space would be reused by the
// entries and hide part of their cost), so that the baseline is a warm process and the growth
// measured is what the entries cost. BENCH_COLD_BASELINE=1 measures from a cold process instead.
if (!process.env.BENCH_COLD_BASELINE) {
  let alive = 0;
  for (let round = 0; round < 200; round++) {
    const batch = [];
    for (let i = 0; i < 20_000; i++) batch.push({ i, s: `request ${i}` });
    alive += batch.length;
  }
  if (alive < 0) console.log(alive);
}
gc();
const before = process.memoryUsage();
if (mode === 'fill') {
  const n = Number(arg ?? 100_000);
  const store = new CacheStore(options(4096 * MB));
  const payload = fill(store, n);
  gc();
  const after = process.memoryUsage();
  const s = store.stats('shared');
  console.log(
    JSON.stringify({
      entries: s.entries,
      payloadMB: payload / MB,
      rssMB: (after.rss - before.rss) / MB,
      heapMB: (after.heapUsed - before.heapUsed) / MB,
      bodyMemoryMB: s.slabBytes / MB,
    }),
  );
} else {
  const budget = Number(arg ?? 200) * MB;
  const store = new CacheStore(options(budget));
  // How many 1 KiB answers fit, then four times that.
  const fits = Math.ceil(budget / (bodyLength(0) + 1200));
  fill(store, 4 * fits);
  gc();
  const after = process.memoryUsage();
  const s = store.stats('shared');
  console.log(
    JSON.stringify({
      budgetMB: budget / MB,
      offered: 4 * fits,
      entries: s.entries,
      accountedMB: s.bytes / MB,
      bodyMemoryMB: s.slabBytes / MB,
      rssMB: (after.rss - before.rss) / MB,
      heapMB: (after.heapUsed - before.heapUsed) / MB,
    }),
  );
}
