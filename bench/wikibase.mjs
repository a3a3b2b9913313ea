// The Wikibase bench: two gateway builds side by side in front of one stand-in Wikibase
// (scripts/wiki/setup.sh --wikibase, test/wiki-extension/WikiedgeWikibase), under the same load at
// the same time:
//   - a Zipf(s=1) mix of Wikibase reads over the seeded entities plus BENCH_WIKIBASE_ITEMS more
//     items (wbgetentities of 1-3 ids with various props, wbgetclaims, wbformatvalue of item
//     values, wbformatentities, wbsearchentities, list=wbsearch, prop=entityterms, wbparsevalue,
//     meta=wbcontentlanguages), the same request sequence sent to both gateways;
//   - entity edits straight at the wiki (wbsetlabel, wbsetclaimvalue on Zipf-chosen items, the
//     hot ones edited most), and a few ordinary wikitext edits (Help: pages);
//   - after each entity edit returns, a poller per gateway reads the edited entity until it shows
//     the edit: wbgetentities ids=Q… (default props: lastrevid >= the edit's revision) and, after
//     a wbsetclaimvalue, wbgetclaims entity=Q… (the new amount).
// Both gateways are in the wiki's $wgCdnServers (MediaWiki sends each PURGE to both) and both
// follow recentchanges (WIKIEDGE_RC_FOLLOW, TTL 1 h while it is healthy), as deployed.
// Figures per build: share of the mix's reads answered from the cache (X-Cache one of
// src/words/outcomes.ts HIT_DISPOSITIONS), per module and overall; staleness p50/p99/max (seconds
// from an edit's answer to the first read that showed it); requests each gateway sent the wiki.
//
//   BENCH_ONLY=wikibase npm run bench     as a section of bench/run.mjs (not in the default set)
//   node bench/wikibase.mjs               alone
//
//   BENCH_WIKIBASE_DATA            a running wiki made by setup.sh --wikibase (default: a new one, ~1-2 min)
//   BENCH_WIKIBASE_PREV (dist/main.js of the previous build, required; e.g. a worktree of 57e299d)
//   BENCH_WIKIBASE_SECONDS (60)    load, both builds at once
//   BENCH_WIKIBASE_ITEMS (200)     items created before the load (wbeditentity new=item)
//   BENCH_WIKIBASE_READ_RATE (40)  mix reads per second, per gateway
//   BENCH_WIKIBASE_EDIT_RATE (10)  entity edits per second, straight at the wiki (what it can take)
//   BENCH_WIKIBASE_READERS (6)     read loops per gateway
//   BENCH_WIKIBASE_EDITORS (4)     edit loops;  BENCH_WIKIBASE_WARM_SECONDS (20) the mix alone first
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { URLSearchParams, fileURLToPath } from 'node:url';
import { request } from 'undici';
import { ensureBuilt, fmt, gateway, prng, root, stopProcess, zipf } from './harness.mjs';

const SECONDS = Number(process.env.BENCH_WIKIBASE_SECONDS ?? 60);
const ITEMS = Number(process.env.BENCH_WIKIBASE_ITEMS ?? 200);
const READ_RATE = Number(process.env.BENCH_WIKIBASE_READ_RATE ?? 40);
const EDIT_RATE = Number(process.env.BENCH_WIKIBASE_EDIT_RATE ?? 10);
const WARM_SECONDS = Number(process.env.BENCH_WIKIBASE_WARM_SECONDS ?? 20);
/** Concurrent read loops of the mix per gateway; each paces itself to its share of READ_RATE. */
const READERS = Number(process.env.BENCH_WIKIBASE_READERS ?? 6);
/**
 * Entity-edit loops, each paced to its share of EDIT_RATE: an edit can take seconds on a busy host
 * (docs/BENCHMARKS.md, Wikibase: 4 loops made 0.6 edits/s in run WB1, one loop 0.1/s in WB2).
 */
const EDITORS = Number(process.env.BENCH_WIKIBASE_EDITORS ?? 4);
/** Trackers polling at once per gateway (edits beyond are made, not tracked). */
const MAX_TRACKED = 60;
const STALE_CAP_S = 30;
const HIT = new Set(['hit', 'hit-shared', 'stale', 'coalesced']); // src/words/outcomes.ts HIT_DISPOSITIONS
const ADMIN = { user: process.env.WIKI_ADMIN_USER ?? 'Admin', pass: process.env.WIKI_ADMIN_PASS ?? 'Adm1n-Lab-Passw0rd!' }; // scripts/wiki/setup.sh's accounts

// ----------------------------------------------------------------------------------- workload

const q = (params) => `/w/api.php?${new URLSearchParams({ format: 'json', ...params }).toString()}`;
const itemValue = (id) => JSON.stringify({ value: { 'entity-type': 'item', 'numeric-id': Number(id.slice(1)), id }, type: 'wikibase-entityid' });

/**
 * The read mix: [kind, weight, make(id, random)]. `id` is the Zipf-chosen item; the rank order is
 * a fixed shuffle of the items, so the hot ones are not simply the seeded Q1-Q7.
 */
function mix(items) {
  const next = (id, k) => items[(items.indexOf(id) + k) % items.length];
  return [
    ['wbgetentities', 12, (id) => q({ action: 'wbgetentities', ids: id })],
    ['wbgetentities', 8, (id) => q({ action: 'wbgetentities', ids: id, props: 'labels' })],
    ['wbgetentities', 6, (id) => q({ action: 'wbgetentities', ids: id, props: 'labels|descriptions', languages: 'en' })],
    ['wbgetentities', 5, (id) => q({ action: 'wbgetentities', ids: id, props: 'claims' })],
    [
      'wbgetentities',
      4,
      (id, r) => q({ action: 'wbgetentities', ids: [id, next(id, 1), next(id, 2)].slice(0, 2 + Math.floor(r() * 2)).join('|'), props: 'labels' }),
    ],
    ['wbgetclaims', 15, (id) => q({ action: 'wbgetclaims', entity: id })],
    ['wbformatvalue', 10, (id) => q({ action: 'wbformatvalue', datavalue: itemValue(id), generate: 'text/plain' })],
    ['wbformatentities', 8, (id) => q({ action: 'wbformatentities', ids: `${id}|P2` })],
    ['wbsearchentities', 8, (id) => q({ action: 'wbsearchentities', search: `Bench item ${id.slice(1)}`, language: 'en', type: 'item' })],
    ['list=wbsearch', 5, (id) => q({ action: 'query', list: 'wbsearch', wbssearch: `Bench item ${id.slice(1)}`, wbslanguage: 'en' })],
    ['prop=entityterms', 7, (id) => q({ action: 'query', prop: 'entityterms', titles: `Item:${id}` })],
    ['wbparsevalue', 6, (_id, r) => q({ action: 'wbparsevalue', datatype: 'time', values: String(1900 + Math.floor(r() * 20)) })],
    ['wbcontentlanguages', 6, (_id, r) => q({ action: 'query', meta: 'wbcontentlanguages', wbclprop: r() < 0.5 ? 'code' : 'code|name' })],
  ];
}

const percentile = (xs, p) => (xs.length === 0 ? NaN : [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.ceil((p / 100) * xs.length) - 1)]);

// --------------------------------------------------------------------------------- the wiki
/** A logged-in client straight at the wiki, as setup.sh's Admin. */
async function client(wikiUrl) {
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
    const body = new URLSearchParams({ format: 'json', ...params }).toString();
    const res =
      method === 'GET'
        ? await request(`${api}?${body}`, { headers: { cookie: cookie() } })
        : await request(api, { method: 'POST', headers: { cookie: cookie(), 'content-type': 'application/x-www-form-urlencoded' }, body });
    keep(res);
    return res.body.json();
  };
  const loginToken = (await call('GET', { action: 'query', meta: 'tokens', type: 'login' })).query.tokens.logintoken;
  // clientlogin with the main password: setup.sh's bot password has no createeditmovepage grant (new items).
  const login = await call('POST', {
    action: 'clientlogin',
    username: ADMIN.user,
    password: ADMIN.pass,
    logintoken: loginToken,
    loginreturnurl: `${wikiUrl}/`,
  });
  if (login.clientlogin?.status !== 'PASS') throw new Error(`bench editor: login failed: ${JSON.stringify(login)}`);
  const token = (await call('GET', { action: 'query', meta: 'tokens' })).query.tokens.csrftoken;
  return { call, post: (params) => call('POST', { ...params, token }) };
}

/** ITEMS more items (labels en/de, a description, a population and an instance-of statement), 4 at a time. */
async function createItems(wiki) {
  const t0 = Date.now();
  let made = 0;
  const random = prng(7);
  const work = Array.from({ length: ITEMS }, (_, i) => i);
  await Promise.all(
    Array.from({ length: 4 }, async () => {
      for (let i = work.shift(); i !== undefined; i = work.shift()) {
        const target = `Q${1 + Math.floor(random() * 7)}`;
        const data = {
          labels: { en: { language: 'en', value: `Bench item ${i}` }, de: { language: 'de', value: `Testobjekt ${i}` } },
          descriptions: { en: { language: 'en', value: `item ${i} of the Wikibase bench` } },
          claims: [
            {
              mainsnak: { snaktype: 'value', property: 'P2', datavalue: { value: { amount: `+${1000 + i}`, unit: '1' }, type: 'quantity' } },
              type: 'statement',
              rank: 'normal',
            },
            { mainsnak: { snaktype: 'value', property: 'P1', datavalue: JSON.parse(itemValue(target)) }, type: 'statement', rank: 'normal' },
          ],
        };
        const r = await wiki.post({ action: 'wbeditentity', new: 'item', data: JSON.stringify(data) });
        if (r.success !== 1) throw new Error(`wbeditentity new=item: ${JSON.stringify(r).slice(0, 300)}`);
        made++;
      }
    }),
  );
  console.log(`  (created ${made} items in ${((Date.now() - t0) / 1000).toFixed(0)} s)`);
}

/** Every item and the GUID of its population statement (the one wbsetclaimvalue edits). */
async function itemsAndClaims(wiki) {
  const out = new Map();
  for (let n = 1; ; n += 50) {
    const ids = Array.from({ length: 50 }, (_, k) => `Q${n + k}`);
    const r = await wiki.call('GET', { action: 'wbgetentities', ids: ids.join('|'), props: 'claims' });
    let any = false;
    for (const [id, e] of Object.entries(r.entities ?? {})) {
      if (e.missing !== undefined || e.redirects) continue;
      any = true;
      out.set(id, e.claims?.P2?.[0]?.id);
    }
    if (!any) return out;
  }
}

// ------------------------------------------------------------------------------------ the run
async function get(base, p) {
  const res = await request(`${base}${p}`);
  const text = await res.body.text();
  return { status: res.statusCode, cache: String(res.headers['x-cache'] ?? ''), text };
}

/**
 * The previous build (BENCH_WIKIBASE_PREV) and this tree`s dist/ at once, on the same wiki and load. Returns one result per build.
 */
export async function benchWikibase(record = () => undefined) {
  const prevMain = process.env.BENCH_WIKIBASE_PREV;
  if (!prevMain || !existsSync(prevMain)) throw new Error('BENCH_WIKIBASE_PREV must name the previous build`s dist/main.js');
  const builds = [
    { name: 'previous', main: prevMain },
    { name: 'current', main: path.join(root, 'dist/main.js') },
  ];
  console.log(
    `\n## Wikibase: Zipf reads at ${READ_RATE}/s per gateway, ${EDIT_RATE} entity edits/s straight at the wiki, ${SECONDS} s, builds ${builds.map((b) => b.name).join(' · ')} side by side`,
  );
  // 8 php -S workers, not 4: an edit holds one while MediaWiki sends its PURGEs, and the current
  // build answers a PURGE after asking the wiki (src/invalidation/purge-confirmation.ts), which
  // needs another free worker.
  // BENCH_WIKIBASE_DATA: a wiki made by `setup.sh --wikibase` that is running (kept afterwards).
  const given = process.env.BENCH_WIKIBASE_DATA;
  const data = given ?? path.join(mkdtempSync(path.join(tmpdir(), 'wikiedge-wbbench.')), 'wiki');
  const out = given
    ? `WIKI_URL=http://127.0.0.1:${readFileSync(path.join(data, 'port'), 'utf8').trim()}`
    : execFileSync('bash', [path.join(root, 'scripts/wiki/setup.sh'), '--data', data, '--no-debug', '--wikibase', '--workers', '8'], {
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'ignore'],
      });
  const wikiUrl = /WIKI_URL=(\S+)/.exec(out)[1];
  const gws = [];
  try {
    const wiki = await client(wikiUrl);
    let claims = await itemsAndClaims(wiki);
    if (claims.size < ITEMS) {
      await createItems(wiki);
      claims = await itemsAndClaims(wiki);
    }
    // The Zipf ranks: a fixed shuffle of every item.
    const items = [...claims.keys()];
    const shuffle = prng(11);
    for (let i = items.length - 1; i > 0; i--) {
      const j = Math.floor(shuffle() * (i + 1));
      [items[i], items[j]] = [items[j], items[i]];
    }
    const kinds = mix(items);
    const totalWeight = kinds.reduce((s, k) => s + k[1], 0);

    const env = {
      WIKIEDGE_CLIENT_MAX_CONCURRENCY: '0',
      WIKIEDGE_CLIENT_MISS_RATE: '0',
      WIKIEDGE_CLIENT_STORE_BYTES_PER_SECOND: '0',
      WIKIEDGE_TTL_JITTER_RATIO: '0',
      WIKIEDGE_RC_FOLLOW: 'true',
    };
    for (const b of builds) gws.push({ ...b, commit: buildCommit(b.main), ...(await gateway(wikiUrl, env, { main: b.main })) });
    execFileSync('bash', [path.join(root, 'scripts/wiki/toggle.sh'), data, `cdn=${gws.map((g) => new URL(g.url).host).join(',')}`, 'useCdn=true']);
    for (const g of gws) await untilFollowerUp(g.admin);

    const stats = gws.map(() => ({
      reads: 0,
      hits: 0,
      failed: 0,
      byKind: new Map(),
      stale: { entities: [], claims: [] },
      tracked: 0,
      unresolved: 0,
      superseded: 0,
      polls: 0,
    }));
    let measuring = false;
    const sentBefore = await Promise.all(gws.map((g) => upstreamRequests(g.admin)));
    /**
     * READERS loops per gateway, each paced to its share of READ_RATE; loop k sends the same
     * sequence (seed seedBase + k) to every gateway, without waiting for the other gateway's answer.
     */
    const readers = (until, seedBase) =>
      gws.flatMap((g, gi) =>
        Array.from({ length: READERS }, async (_, k) => {
          const r = prng(seedBase + k);
          const pick = zipf(items.length, r);
          const s = stats[gi];
          let next = Date.now();
          while (Date.now() < until) {
            let w = r() * totalWeight;
            const kind = kinds.find((x) => (w -= x[1]) < 0) ?? kinds[0];
            const res = await get(g.url, kind[2](items[pick()], r)).catch(() => undefined);
            if (measuring) {
              s.reads++;
              if (!res || res.status !== 200) s.failed++;
              const hit = res !== undefined && HIT.has(res.cache);
              if (hit) s.hits++;
              const kk = s.byKind.get(kind[0]) ?? { reads: 0, hits: 0 };
              kk.reads++;
              if (hit) kk.hits++;
              s.byKind.set(kind[0], kk);
            }
            next += (READERS * 1000) / READ_RATE;
            const wait = next - Date.now();
            if (wait > 0) await sleep(wait);
          }
        }),
      );

    // Warm-up: the mix alone, not counted.
    await Promise.all(readers(Date.now() + WARM_SECONDS * 1000, 1000));

    // The load.
    measuring = true;
    const t0 = Date.now();
    const end = t0 + SECONDS * 1000;
    const trackers = gws.map(() => new Set());
    /** The last amount each claim was set to (a later edit supersedes a tracker's value). */
    const lastAmount = new Map();
    const track = (gi, p, fresh, at, into, superseded = () => false) => {
      const s = stats[gi];
      if (trackers[gi].size >= MAX_TRACKED) return;
      s.tracked++;
      const t = (async () => {
        for (;;) {
          const sent = Date.now();
          const res = await get(gws[gi].url, p).catch(() => undefined);
          s.polls++;
          if (res && res.status === 200 && fresh(JSON.parse(res.text))) return into.push(Math.max(0, sent - at) / 1000);
          if (superseded()) return s.superseded++;
          if (Date.now() > at + STALE_CAP_S * 1000) {
            if (s.unresolved++ < 2)
              console.log(`  (${gws[gi].name}: not fresh in ${STALE_CAP_S} s: ${p} -> ${res?.status} ${res?.cache} ${res?.text.slice(0, 160)})`);
            return;
          }
          await sleep(Date.now() - at < 2_000 ? 50 : 250);
        }
      })().finally(() => trackers[gi].delete(t));
      trackers[gi].add(t);
    };
    const counts = { labels: 0, claims: 0, wikitext: 0, failed: 0 };
    let edits = 0;
    const editMs = [];
    const editors = Array.from({ length: EDITORS }, async (_, k) => {
      const r = prng(500 + k);
      const pick = zipf(items.length, r);
      let next = Date.now();
      while (Date.now() < end) {
        const id = items[pick()];
        const n = ++edits;
        const sent = Date.now();
        try {
          if (r() < 0.5 || !claims.get(id)) {
            const res = await wiki.post({ action: 'wbsetlabel', id, language: 'en', value: `Bench item ${id.slice(1)} edit ${n}` });
            const at = Date.now();
            const revid = res.entity?.lastrevid;
            if (!revid) throw new Error(JSON.stringify(res).slice(0, 200));
            counts.labels++;
            editMs.push(at - sent);
            gws.forEach((_, gi) =>
              track(gi, q({ action: 'wbgetentities', ids: id }), (j) => j.entities?.[id]?.lastrevid >= revid, at, stats[gi].stale.entities),
            );
          } else {
            const guid = claims.get(id);
            const amount = `+${100000 + n}`;
            lastAmount.set(guid, amount);
            const res = await wiki.post({ action: 'wbsetclaimvalue', claim: guid, snaktype: 'value', value: JSON.stringify({ amount, unit: '1' }) });
            const at = Date.now();
            const revid = res.pageinfo?.lastrevid;
            if (!revid) throw new Error(JSON.stringify(res).slice(0, 200));
            counts.claims++;
            editMs.push(at - sent);
            gws.forEach((_, gi) => {
              track(gi, q({ action: 'wbgetentities', ids: id }), (j) => j.entities?.[id]?.lastrevid >= revid, at, stats[gi].stale.entities);
              track(
                gi,
                q({ action: 'wbgetclaims', entity: id }),
                (j) => JSON.stringify(j).includes(`"${amount}"`),
                at,
                stats[gi].stale.claims,
                () => lastAmount.get(guid) !== amount,
              );
            });
          }
        } catch (err) {
          if (counts.failed++ < 3) console.log(`  (an edit failed: ${err.message})`);
        }
        next += (EDITORS * 1000) / EDIT_RATE;
        const wait = next - Date.now();
        if (wait > 0) await sleep(wait);
      }
    });
    // Ordinary wikitext edits, one every 2 s, on Help: pages.
    const wikitext = (async () => {
      for (let n = 0; Date.now() < end; n++) {
        const res = await wiki
          .post({ action: 'edit', title: `Help:Bench ${n % 20}`, text: `Help page ${n % 20}, edit ${n} at ${Date.now()}.`, bot: '1' })
          .catch(() => undefined);
        if (res?.edit?.result === 'Success') counts.wikitext++;
        await sleep(2000);
      }
    })();
    await Promise.all([...readers(end, 2000), ...editors, wikitext]);
    const loadSeconds = (Date.now() - t0) / 1000;
    measuring = false;
    await Promise.all(trackers.flatMap((t) => [...t]));
    const sentAfter = await Promise.all(gws.map((g) => upstreamRequests(g.admin)));

    const results = gws.map((g, gi) => {
      const s = stats[gi];
      return {
        name: `${g.name} (${g.commit})`,
        readsPerSecond: s.reads / loadSeconds,
        hitShare: s.hits / Math.max(1, s.reads),
        byKind: s.byKind,
        failed: s.failed,
        upstream: sentAfter[gi] - sentBefore[gi],
        ent: s.stale.entities,
        clm: s.stale.claims,
        tracked: s.tracked,
        unresolved: s.unresolved,
        superseded: s.superseded,
      };
    });
    const entityEdits = counts.labels + counts.claims;
    console.log(
      `  entity edits made: ${entityEdits} in ${fmt(loadSeconds, 0)} s (${fmt(entityEdits / loadSeconds, 1)}/s: ${counts.labels} wbsetlabel, ${counts.claims} wbsetclaimvalue, ${counts.failed} failed); ${counts.wikitext} wikitext edits; ${items.length} items; an entity edit took ${fmt(percentile(editMs, 50) / 1000, 2)} s p50, ${fmt(percentile(editMs, 99) / 1000, 2)} s p99`,
    );
    const kindNames = [...new Set(kinds.map((k) => k[0]))];
    const st = (xs) => `${fmt(percentile(xs, 50), 2)} / ${fmt(percentile(xs, 99), 2)} / ${fmt(xs.length ? Math.max(...xs) : NaN, 2)} (${xs.length})`;
    const lines = [
      ['', ...results.map((r) => r.name)],
      ['mix reads/s per gateway', ...results.map((r) => fmt(r.readsPerSecond, 1))],
      ['share of reads from the cache', ...results.map((r) => fmt(100 * r.hitShare, 1) + ' %')],
      ...kindNames.map((k) => [
        `  ${k}`,
        ...results.map((r) => {
          const v = r.byKind.get(k);
          return v ? `${fmt((100 * v.hits) / v.reads, 1)} % of ${v.reads}` : 'n/a';
        }),
      ]),
      [
        'requests for clients sent to the wiki (wikiedge_upstream_requests_total: misses and passes; not the follower, not PURGE confirmations)',
        ...results.map((r) => String(r.upstream)),
      ],
      ['staleness s, wbgetentities: p50 / p99 / max (n)', ...results.map((r) => st(r.ent))],
      ['staleness s, wbgetclaims after wbsetclaimvalue', ...results.map((r) => st(r.clm))],
      ['tracked / not fresh in 30 s / superseded', ...results.map((r) => `${r.tracked} / ${r.unresolved} / ${r.superseded}`)],
      ['failed reads (not 200)', ...results.map((r) => String(r.failed))],
    ];
    const widths = lines[0].map((_, c) => Math.max(...lines.map((l) => l[c].length)));
    for (const l of lines) console.log(`  ${l.map((cell, c) => (c === 0 ? cell.padEnd(widths[c]) : cell.padStart(widths[c]))).join('  ')}`);
    const [a, b] = results;
    console.log(
      `  ratio current / previous: hit share ${fmt(b.hitShare / a.hitShare, 2)}x, requests for clients to the wiki ${fmt(b.upstream / Math.max(1, a.upstream), 2)}x`,
    );
    for (const l of lines.slice(1)) record('wikibase', `${l[0].trim()} (${builds.map((x) => x.name).join(' · ')})`, l.slice(1).join(' · '));
    return results;
  } finally {
    for (const g of gws) await stopProcess(g.child);
    if (given) execFileSync('bash', [path.join(root, 'scripts/wiki/toggle.sh'), data, 'cdn=', 'useCdn=false']);
    else execFileSync('bash', [path.join(root, 'scripts/wiki/stop.sh'), data, '--purge'], { stdio: 'ignore' });
  }
}

/** The commit a build was made from (its dist/build-info.json, written by `npm run build`). */
function buildCommit(main) {
  try {
    return JSON.parse(readFileSync(path.join(path.dirname(main), 'build-info.json'), 'utf8')).commit.slice(0, 7);
  } catch {
    return 'unknown';
  }
}

/** Requests the gateway sent the wiki so far: the sum of its upstream request counter (0 if it has none). */
async function upstreamRequests(admin) {
  const text = await request(`${admin}/metrics`).then((r) => r.body.text());
  return [...text.matchAll(/^wikiedge_upstream_requests_total(?:\{[^}]*\})? (\S+)/gm)].reduce((s, m) => s + Number(m[1]), 0);
}

async function untilFollowerUp(admin) {
  for (let i = 0; i < 150; i++) {
    const text = await request(`${admin}/metrics`).then((r) => r.body.text());
    if (/^wikiedge_change_follower_up 1/m.test(text)) return;
    await sleep(100);
  }
  throw new Error('the change follower did not become healthy');
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  ensureBuilt();
  await benchWikibase();
  process.exit(0);
}
