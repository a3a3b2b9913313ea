// The invalidation bench (issue 19): load taken off the wiki against staleness, for
//   (a) the wiki direct, (b) the gateway with a 60 s TTL and no change signal, (c) with a 2 s TTL
//   and no change signal, (d) with a 1 h TTL and both change signals (MediaWiki's PURGEs through
//   $wgCdnServers, and the recentchanges follower),
// under one workload: a Zipf(s=1) read mix over ~2,000 pages of the real wiki, a concurrent edit
// stream straight at the wiki (~2 edits/s on Zipf-chosen pages, as other users' edits), and a
// reader that polls every edited page from the edit's answer until it reads the new revision.
// Figures: upstream requests per 1,000 client reads (every GET that reached the wiki while the
// load ran, the follower's polls included; the edits themselves are not counted), and staleness:
// seconds from an edit's answer to the first read that returned its revision, p50 / p99 / max.
//
// Also `dependencyCost()`: the work dependency tracking adds to a hit, isolated in a micro-bench
// (docs/BENCHMARKS.md "Invalidation").
//
//   BENCH_ONLY=invalidation npm run bench     as a section of bench/run.mjs (not in the default set)
//   node bench/invalidation.mjs               alone, on a throw-away wiki
//   BENCH_WIKI_URL=… BENCH_WIKI_DATA=… node bench/invalidation.mjs   on a wiki made by setup.sh
//
//   BENCH_INVALIDATION_SECONDS (120)    load per configuration
//   BENCH_INVALIDATION_PAGES (2000)     pages of the read mix (imported once: importDump.php)
//   BENCH_INVALIDATION_READ_RATE (200)  client reads per second of the mix
//   BENCH_INVALIDATION_EDIT_RATE (2)    edits per second
//   BENCH_INVALIDATION_CONFIGS (a,b,c,d)
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { URLSearchParams, fileURLToPath } from 'node:url';
import { request } from 'undici';
import { ensureBuilt, fmt, gateway, prng, root, stopProcess, wikiLines, withWiki, work, zipf } from './harness.mjs';

const SECONDS = Number(process.env.BENCH_INVALIDATION_SECONDS ?? 120);
const PAGES = Number(process.env.BENCH_INVALIDATION_PAGES ?? 2000);
const READ_RATE = Number(process.env.BENCH_INVALIDATION_READ_RATE ?? 200);
const EDIT_RATE = Number(process.env.BENCH_INVALIDATION_EDIT_RATE ?? 2);
const CONFIGS = (process.env.BENCH_INVALIDATION_CONFIGS ?? 'a,b,c,d').split(',');
/** Concurrent read loops of the mix; each paces itself to its share of READ_RATE. */
const READERS = 8;
/** Edits whose staleness is tracked at once (the rest are made, not tracked). */
const MAX_TRACKED = 40;
const GRACE_SECONDS = 10; // WIKIEDGE_GRACE_SECONDS' default: (b) and (c) serve stale this much longer
const BOT = { user: process.env.WIKI_BOT_LOGIN ?? 'Admin@wikiedge', pass: process.env.WIKI_BOT_PASS ?? 'wikiedgebotpasswordforthetests00' };
const TITLE = (i) => `Zipf page ${String(i).padStart(4, '0')}`;

/** Every configuration: how clients reach the wiki and how long a stale answer can last. */
const CONFIGURATIONS = {
  a: { name: '(a) direct', gateway: undefined, cdn: false, staleCapS: 10 },
  b: { name: '(b) TTL 60 s, no signal', gateway: { WIKIEDGE_TTL_PUBLIC_SECONDS: '60' }, cdn: false, staleCapS: 60 + GRACE_SECONDS + 10 },
  c: { name: '(c) TTL 2 s, no signal', gateway: { WIKIEDGE_TTL_PUBLIC_SECONDS: '2' }, cdn: false, staleCapS: 2 + GRACE_SECONDS + 10 },
  d: {
    name: '(d) TTL 1 h, PURGEs + follower',
    gateway: { WIKIEDGE_RC_FOLLOW: 'true', WIKIEDGE_TTL_FOLLOWED_SECONDS: '3600' },
    cdn: true,
    staleCapS: 30,
  },
};

// ----------------------------------------------------------------------------------- workload

const readPath = (i) =>
  `/w/api.php?action=query&prop=revisions&rvprop=ids%7Ccontent&rvslots=main&titles=${encodeURIComponent(TITLE(i))}&format=json&formatversion=2`;

/** One read: the revision id it returned (undefined when the answer was not one). */
async function readRevid(base, i) {
  const res = await request(`${base}${readPath(i)}`);
  const text = await res.body.text();
  if (res.statusCode !== 200) return undefined;
  return JSON.parse(text).query?.pages?.[0]?.revisions?.[0]?.revid;
}

const percentile = (xs, p) => (xs.length === 0 ? NaN : [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.ceil((p / 100) * xs.length) - 1)]);

// --------------------------------------------------------------------------------- the wiki
/** The bench's pages, imported once with the wiki's own importDump.php (about 45 s for 2,000). */
function ensurePages(wikiUrl, data) {
  const last = execFileSync('curl', ['-s', `${wikiUrl}/w/api.php?action=query&titles=${encodeURIComponent(TITLE(PAGES - 1))}&format=json&formatversion=2`], {
    encoding: 'utf8',
  });
  if (!JSON.parse(last).query.pages[0].missing) return;
  const t0 = Date.now();
  const pages = Array.from(
    { length: PAGES },
    (_, i) =>
      `<page><title>${TITLE(i)}</title><ns>0</ns><revision><timestamp>2026-01-01T00:00:00Z</timestamp><contributor><username>Admin</username></contributor>` +
      `<model>wikitext</model><format>text/x-wiki</format><text xml:space="preserve">Page ${i} of the invalidation bench.</text></revision></page>`,
  );
  const dump = path.join(work, 'invalidation-pages.xml');
  writeFileSync(dump, `<mediawiki xmlns="http://www.mediawiki.org/xml/export-0.11/" version="0.11" xml:lang="en">${pages.join('')}</mediawiki>`);
  execFileSync('php', ['/usr/share/mediawiki/maintenance/importDump.php', '--conf', path.join(data, 'LocalSettings.php'), '--no-updates', '--quiet', dump], {
    stdio: 'ignore',
  });
  console.log(`  (imported ${PAGES} pages in ${((Date.now() - t0) / 1000).toFixed(0)} s)`);
}

/** $wgCdnServers: MediaWiki sends its PURGEs through these (scripts/wiki/toggle.sh). */
function setCdn(data, hosts) {
  execFileSync('bash', [path.join(root, 'scripts/wiki/toggle.sh'), data, `cdn=${hosts.join(',')}`], { stdio: 'ignore' });
}

/** A logged-in editor straight at the wiki (the bot password of setup.sh's Admin): edit(i) → new revid. */
async function editor(wikiUrl) {
  const api = `${wikiUrl}/w/api.php`;
  const jar = new Map();
  const keep = (res) => {
    for (const c of [res.headers['set-cookie'] ?? []].flat()) {
      const [pair] = c.split(';');
      const eq = pair.indexOf('=');
      jar.set(pair.slice(0, eq), pair.slice(eq + 1));
    }
  };
  const cookie = () => [...jar].map(([k, v]) => `${k}=${v}`).join('; ');
  const call = async (method, params) => {
    const body = new URLSearchParams({ format: 'json', formatversion: '2', ...params }).toString();
    const res =
      method === 'GET'
        ? await request(`${api}?${body}`, { headers: { cookie: cookie() } })
        : await request(api, { method: 'POST', headers: { cookie: cookie(), 'content-type': 'application/x-www-form-urlencoded' }, body });
    keep(res);
    return res.body.json();
  };
  const loginToken = (await call('GET', { action: 'query', meta: 'tokens', type: 'login' })).query.tokens.logintoken;
  const login = await call('POST', { action: 'login', lgname: BOT.user, lgpassword: BOT.pass, lgtoken: loginToken });
  if (login.login?.result !== 'Success') throw new Error(`bench editor: login failed: ${JSON.stringify(login)}`);
  const token = (await call('GET', { action: 'query', meta: 'tokens' })).query.tokens.csrftoken;
  let n = 0;
  return async (i) => {
    const r = await call('POST', {
      action: 'edit',
      title: TITLE(i),
      text: `Page ${i} of the invalidation bench, edit ${++n} at ${Date.now()}.`,
      bot: '1',
      token,
    });
    return r.edit?.newrevid;
  };
}

// ------------------------------------------------------------------------------- one config
async function runConfiguration(key, wikiUrl, data, edit) {
  const cfg = CONFIGURATIONS[key];
  let gw;
  if (cfg.gateway) {
    gw = await gateway(wikiUrl, {
      WIKIEDGE_CLIENT_MAX_CONCURRENCY: '0',
      WIKIEDGE_CLIENT_MISS_RATE: '0',
      WIKIEDGE_CLIENT_STORE_BYTES_PER_SECOND: '0',
      WIKIEDGE_TTL_JITTER_RATIO: '0',
      ...cfg.gateway,
    });
    if (cfg.cdn) setCdn(data, [new URL(gw.url).host]);
  }
  const base = gw?.url ?? wikiUrl;
  try {
    if (gw) {
      // Steady state, as an operator runs it: every page read once (not counted).
      for (let i = 0; i < PAGES; i += 8) await Promise.all(Array.from({ length: Math.min(8, PAGES - i) }, (_, j) => readRevid(base, i + j)));
      if (cfg.gateway.WIKIEDGE_RC_FOLLOW) await untilFollowerUp(gw.admin);
    }
    const pick = zipf(PAGES, prng(19));
    const counts = { reads: 0, pollReads: 0, failed: 0, edits: 0, tracked: 0, untracked: 0, unresolved: 0 };
    const staleness = [];
    const trackers = new Set();
    const before = wikiLines(data).length;
    const t0 = Date.now();
    const end = t0 + SECONDS * 1000;

    /** Poll page i from the edit's answer (at `at`) until it returns revision `revid`. */
    const track = async (i, revid, at) => {
      const cap = at + cfg.staleCapS * 1000;
      for (;;) {
        const sent = Date.now();
        const got = await readRevid(base, i).catch(() => undefined);
        counts.pollReads++;
        if (got !== undefined && got >= revid) return staleness.push(Math.max(0, sent - at) / 1000);
        if (Date.now() > cap) return counts.unresolved++;
        await sleep(Date.now() - at < 2_000 ? 50 : 250);
      }
    };
    const readers = Array.from({ length: READERS }, async () => {
      let next = Date.now();
      while (Date.now() < end) {
        await readRevid(base, pick()).then(
          () => counts.reads++,
          () => counts.failed++,
        );
        next += (READERS * 1000) / READ_RATE;
        const wait = next - Date.now();
        if (wait > 0) await sleep(wait);
      }
    });
    const edits = (async () => {
      let next = Date.now();
      while (Date.now() < end) {
        const i = pick();
        const revid = await edit(i).catch(() => undefined);
        const at = Date.now();
        if (revid !== undefined) {
          counts.edits++;
          if (trackers.size < MAX_TRACKED) {
            counts.tracked++;
            const t = track(i, revid, at).finally(() => trackers.delete(t));
            trackers.add(t);
          } else counts.untracked++;
        }
        next += 1000 / EDIT_RATE;
        const wait = next - Date.now();
        if (wait > 0) await sleep(wait);
      }
    })();
    await Promise.all([...readers, edits]);
    const loadSeconds = (Date.now() - t0) / 1000;
    const allReads = counts.reads + counts.pollReads;
    const upstream = wikiLines(data)
      .slice(before)
      .filter((l) => !l.startsWith('POST')).length;
    // Trackers still polling go on until their page is fresh (or their cap): not counted as load.
    await Promise.all([...trackers]);
    const metrics = gw ? await request(`${gw.admin}/metrics`).then((r) => r.body.text()) : '';
    const gaps = [...metrics.matchAll(/^wikiedge_change_follower_gaps_total\{[^}]*\} (\S+)/gm)].reduce((s, m) => s + Number(m[1]), 0);
    return {
      name: cfg.name,
      readsPerSecond: counts.reads / loadSeconds,
      edits: counts.edits,
      upstreamPer1000: (upstream * 1000) / Math.max(1, allReads),
      p50: percentile(staleness, 50),
      p99: percentile(staleness, 99),
      max: staleness.length ? Math.max(...staleness) : NaN,
      tracked: counts.tracked,
      unresolved: counts.unresolved,
      failed: counts.failed,
      gaps,
    };
  } finally {
    if (cfg.cdn) setCdn(data, []);
    if (gw) await stopProcess(gw.child);
  }
}

async function untilFollowerUp(admin) {
  for (let i = 0; i < 100; i++) {
    const text = await request(`${admin}/metrics`).then((r) => r.body.text());
    if (/^wikiedge_change_follower_up 1/m.test(text)) return;
    await sleep(100);
  }
  throw new Error('the change follower did not become healthy');
}

// ---------------------------------------------------------------------------------- sections
/**
 * The four configurations one after another on the same wiki, printed side by side. `record`
 * (bench/run.mjs, into results.json) takes each figure as `a · b · c · d`.
 */
export async function benchInvalidation(wikiUrl, data, record = () => undefined) {
  console.log(`\n## Invalidation: Zipf reads over ${PAGES} pages at ${READ_RATE}/s, ${EDIT_RATE} edits/s straight at the wiki, ${SECONDS} s per configuration`);
  ensurePages(wikiUrl, data);
  const edit = await editor(wikiUrl);
  const results = [];
  for (const key of CONFIGS) {
    console.log(`  running ${CONFIGURATIONS[key].name} …`);
    results.push(await runConfiguration(key, wikiUrl, data, edit));
  }
  const lines = [
    ['', ...results.map((r) => r.name)],
    ['client reads/s (mix)', ...results.map((r) => fmt(r.readsPerSecond, 0))],
    ['edits made', ...results.map((r) => String(r.edits))],
    ['upstream requests per 1000 reads', ...results.map((r) => fmt(r.upstreamPer1000, 1))],
    ['staleness p50 (s)', ...results.map((r) => fmt(r.p50, 2))],
    ['staleness p99 (s)', ...results.map((r) => fmt(r.p99, 2))],
    ['staleness max (s)', ...results.map((r) => fmt(r.max, 2))],
    ['edits tracked / not fresh within cap', ...results.map((r) => `${r.tracked} / ${r.unresolved}`)],
    ['failed reads; follower gaps (1: the start)', ...results.map((r) => `${r.failed}; ${r.gaps}`)],
  ];
  const widths = lines[0].map((_, c) => Math.max(...lines.map((l) => l[c].length)));
  for (const l of lines) console.log(`  ${l.map((cell, c) => (c === 0 ? cell.padEnd(widths[c]) : cell.padStart(widths[c]))).join('  ')}`);
  for (const l of lines.slice(1)) record('invalidation', `${l[0]} (${CONFIGS.join(' · ')})`, l.slice(1).join(' · '));
  return results;
}

/**
 * What dependency tracking adds to a hit, isolated: a fresh hit compares the entry's storedAt
 * with the instant of the last gap (freshness.ts), and a request that carries cookies (the full
 * path) looks for MediaWiki's UseCDNCache/UseDC cookies (policy.ts writerBypasses). Each is timed
 * against the same function without it; the store's per-entry index work (on a store, not a hit)
 * is timed too.
 */
export async function dependencyCost(record = () => undefined) {
  console.log('\n## Invalidation: the hit path`s cost of dependency tracking (micro-bench, ns per call)');
  const { freshnessAt } = await import(path.join(root, 'dist/policy/freshness.js'));
  const { writerBypasses } = await import(path.join(root, 'dist/policy/policy.js'));
  const { CacheStore } = await import(path.join(root, 'dist/cache/store.js'));
  const w = { graceMs: 10_000, staleIfErrorMs: 300_000 };
  const now = Date.now();
  const entries = Array.from({ length: 1024 }, (_, i) => ({ storedAt: now - i * 100, ttlMs: 60_000 }));
  // freshnessAt as it was before the gap check: the baseline.
  const withoutGap = (e, t, win) => {
    const age = t - e.storedAt;
    if (age < e.ttlMs) return 'fresh';
    if (age < e.ttlMs + win.graceMs) return 'grace';
    if (age < e.ttlMs + win.staleIfErrorMs) return 'stale-if-error';
    return 'dead';
  };
  // The same with the gap check (freshness.ts): the delta is the check alone.
  const withGap = (e, t, win, staleBefore = 0) => {
    const age = t - e.storedAt;
    if (e.storedAt < staleBefore) return age < e.ttlMs + win.staleIfErrorMs ? 'stale-if-error' : 'dead';
    if (age < e.ttlMs) return 'fresh';
    if (age < e.ttlMs + win.graceMs) return 'grace';
    if (age < e.ttlMs + win.staleIfErrorMs) return 'stale-if-error';
    return 'dead';
  };
  const cookies = ['wikiUserName=Someone; _pk_id=abc.123; mwPhp7Seed=1a2', 'GeoIP=DE:BE:Berlin:52.5:13.4:v4; WMF-Last-Access=01-Mar-2026'];
  // The fastest of 7 runs: a neighbour's load only ever adds time.
  const time = (fn, n = 2_000_000) => {
    for (let i = 0; i < n / 10; i++) fn(i);
    let best = Infinity;
    for (let run = 0; run < 7; run++) {
      const t = process.hrtime.bigint();
      for (let i = 0; i < n; i++) fn(i);
      best = Math.min(best, Number(process.hrtime.bigint() - t) / n);
    }
    return best;
  };
  let sink = 0;
  const base = time((i) => (sink += withoutGap(entries[i & 1023], now, w).length));
  const gap = time((i) => (sink += withGap(entries[i & 1023], now, w, 0).length));
  const deployed = time((i) => (sink += freshnessAt(entries[i & 1023], now, w, 0).length));
  const noCookie = time((i) => (sink += i & 1));
  const cookie = time((i) => (sink += writerBypasses(cookies[i & 1]) ? 1 : i & 1));
  const store = (deps) => {
    const s = new CacheStore({
      sharedMaxBytes: 256 << 20,
      sessionMaxBytes: 16 << 20,
      maxEntries: 1e6,
      graceMs: 10_000,
      staleIfErrorMs: 300_000,
      now: Date.now,
    });
    const body = Buffer.alloc(1024);
    const n = 100_000;
    const t = process.hrtime.bigint();
    for (let i = 0; i < n; i++) {
      s.set('shared', `k${i}`, {
        status: 200,
        headers: { 'content-type': 'application/json' },
        body,
        storedAt: Date.now(),
        ttlMs: 60_000,
        urlKey: `/w/api.php?titles=P${i}`,
        modules: ['query+revisions'],
        slot: undefined,
        deps: deps(i),
      });
    }
    const setNs = Number(process.hrtime.bigint() - t) / n;
    const t2 = process.hrtime.bigint();
    for (let i = 0; i < 1000; i++) s.invalidate([`p:P${i}`]);
    return { setNs, invalidateUs: Number(process.hrtime.bigint() - t2) / 1000 / 1000 };
  };
  const bare = store(() => []);
  const tagged = store((i) => ['*', `p:P${i}`, `i:${i}`, 'n:0']);
  if (sink === -1) console.log(sink);
  const out = [
    ['freshness of an entry: without the gap check', fmt(base, 1)],
    ['freshness of an entry: with it', fmt(gap, 1)],
    ['freshness of an entry: the store`s function (dist/, as deployed)', fmt(deployed, 1)],
    ['UseCDNCache/UseDC look-up in a cookie header (full path only)', fmt(cookie - noCookie, 1)],
    ['store an entry: no dependencies (µs)', fmt(bare.setNs / 1000, 2)],
    ['store an entry: 4 dependency tags (µs)', fmt(tagged.setNs / 1000, 2)],
    ['invalidate one page among 100k entries (µs)', fmt(tagged.invalidateUs, 2)],
  ];
  for (const [what, v] of out) {
    console.log(`  ${what.padEnd(64)} ${v.padStart(10)}`);
    record('invalidation', what, v);
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  ensureBuilt();
  const run = async (wikiUrl, data) => {
    await benchInvalidation(wikiUrl, data);
    await dependencyCost();
  };
  if (process.env.BENCH_WIKI_URL && process.env.BENCH_WIKI_DATA) await run(process.env.BENCH_WIKI_URL, process.env.BENCH_WIKI_DATA);
  else await withWiki(run);
  process.exit(0);
}
