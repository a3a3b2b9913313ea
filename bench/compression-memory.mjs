// The memory part of bench/compression.mjs, in a process of its own (run with --expose-gc;
// prints one JSON line): a shared tier of BUDGET_MB filled with the corpus's answers, again and
// again under new keys, either as they are (`identity`: as before compression) or in their
// stored form (`stored`: src/http/codings.ts storedForm); entries held, RSS growth, and
// the bytes each size of answer takes per entry in the budget.
//   node --expose-gc bench/compression-memory.mjs identity|stored CORPUS.json BUDGET_MB
import { readFileSync } from 'node:fs';

const MB = 1024 * 1024;

/** In its own process: fill a 100 MB store with the corpus, again and again under new keys. */
async function memoryChild(mode, file, budgetMb) {
  const { CacheStore, entrySize } = await import('../dist/cache/store.js');
  const { storedForm } = await import('../dist/http/codings.js');
  const corpus = JSON.parse(readFileSync(file, 'utf8')).map((a) => ({ ...a, body: Buffer.from(a.body, 'base64') }));
  // Each answer's stored form, made once (as the gateway makes it once per entry).
  const started = performance.now();
  const forms = [];
  for (const a of corpus) forms.push(mode === 'stored' ? (await storedForm(a.body)).form : { coding: 'identity' });
  const storeSeconds = (performance.now() - started) / 1000;
  const entryOf = (a, form, i) => {
    const urlKey = `/w/api.php?${a.q}&bench=${i}`;
    const base = { status: 200, storedAt: Date.now(), ttlMs: 3_600_000, urlKey, modules: ['query'], slot: undefined, deps: ['*'] };
    return form.coding === 'gzip'
      ? { ...base, headers: { ...a.headers }, body: form.body, coding: 'gzip', identityBytes: a.body.length }
      : { ...base, headers: { ...a.headers }, body: a.body };
  };
  const bySize = {};
  const sizeLabel = (n) => (n < 1024 ? 'under 1 KiB' : n < 4096 ? '1-4 KiB' : n < 16384 ? '4-16 KiB' : '16 KiB and up');
  corpus.forEach((a, i) => {
    const s = (bySize[sizeLabel(a.body.length)] ??= { n: 0, bytes: 0 });
    s.n++;
    s.bytes += entrySize(`${a.q}&bench=0\nanon\n=http\n-\n-`, entryOf(a, forms[i], 0));
  });
  for (const s of Object.values(bySize)) s.perEntry = s.bytes / s.n;
  const gc = () => {
    for (let i = 0; i < 4; i++) globalThis.gc();
  };
  // A warm process, as bench/memory.mjs makes it (V8's young generation grown first).
  for (let round = 0; round < 200; round++) {
    const batch = [];
    for (let i = 0; i < 20_000; i++) batch.push({ i, s: `request ${i}` });
  }
  gc();
  const before = process.memoryUsage();
  const budget = Number(budgetMb) * MB;
  const store = new CacheStore({
    sharedMaxBytes: budget,
    sessionMaxBytes: 64 * MB,
    maxEntries: 10_000_000,
    graceMs: 0,
    staleIfErrorMs: 0,
    now: () => Date.now(),
  });
  // Enough rounds of the corpus to fill the budget twice over.
  const perRound = corpus.reduce((n, a, i) => n + entrySize(`${a.q}\nanon`, entryOf(a, forms[i], 0)), 0);
  const rounds = Math.ceil((2 * budget) / perRound);
  let offered = 0;
  for (let r = 0; r < rounds; r++)
    corpus.forEach((a, i) => {
      const e = entryOf(a, forms[i], r);
      store.set('shared', `${e.urlKey}\nanon\n=http\n-\n-`, e);
      offered++;
    });
  gc();
  const after = process.memoryUsage();
  const s = store.stats('shared');
  console.log(
    JSON.stringify({
      mode,
      corpus: corpus.length,
      offered,
      entries: s.entries,
      accountedMB: s.bytes / MB,
      bodyMB: s.bodyBytes / MB,
      identityMB: s.identityBytes / MB,
      slabMB: s.slabBytes / MB,
      rssMB: (after.rss - before.rss) / MB,
      heapMB: (after.heapUsed - before.heapUsed) / MB,
      storeSeconds,
      bySize,
    }),
  );
}

const [mode, file, budgetMb] = process.argv.slice(2);
await memoryChild(mode, file, budgetMb);
