// Two sections of `npm run bench` for the security round (issue 17):
//
// flood           a cache-busting flood (every request a new URL, so every one a miss) from one
//                 client address, and from "many" (the per-client limits off, as when the flood
//                 comes from many addresses), while a well-behaved client makes misses of its own
//                 from another loopback address and a third reads a cached answer. Measured with
//                 the limits as shipped and with every limit off: what the wiki served, what the
//                 flood got, the honest client's miss latency and success, the hit latency.
// credential-net  what the checks that decide who is asking cost per request, beside a hit's
//                 whole CPU cost (the hit section's µs per request): the cookie-less check every
//                 fresh hit makes, and the full identity decision with a browser's cookie header.
//
// Loopback is 127.0.0.0/8: the honest client binds 127.0.0.2 and the reader 127.0.0.3, so the
// per-client limits see three clients, as they would see three hosts.
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { Agent as HttpAgent, get as httpGet } from 'node:http';
import { request } from 'undici';
import { SECONDS, fmt, gateway, parseWrk, root, startProcess, stopAll, stopProcess, wikiLines, work } from './harness.mjs';

/** Every limit off: what the gateway did before the security round. */
const NO_LIMITS = {
  WIKIEDGE_UPSTREAM_MAX_CONCURRENCY: '4096',
  WIKIEDGE_UPSTREAM_QUEUE_MAX: '1000000',
  WIKIEDGE_CLIENT_MAX_CONCURRENCY: '0',
  WIKIEDGE_CLIENT_MISS_RATE: '0',
  WIKIEDGE_CLIENT_STORE_BYTES_PER_SECOND: '0',
};
/** The global gate as shipped, the per-client limits off: a flood from many addresses. */
const GLOBAL_GATE_ONLY = { WIKIEDGE_CLIENT_MAX_CONCURRENCY: '0', WIKIEDGE_CLIENT_MISS_RATE: '0', WIKIEDGE_CLIENT_STORE_BYTES_PER_SECOND: '0' };

const FLOOD_CONNECTIONS = 64;

/** wrk script: every request a URL never asked before (a counter), so every one a miss. */
function floodScript() {
  const file = path.join(work, 'flood.lua');
  writeFileSync(
    file,
    [
      'local n = 0',
      'request = function()',
      '  n = n + 1',
      '  return wrk.format("GET", "/w/api.php?action=query&meta=siteinfo&format=json&requestid=flood-" .. n)',
      'end',
    ].join('\n'),
  );
  return file;
}

/** One GET through `agent`: its status (0: no answer at all), the body read and dropped. */
function get(url, agent) {
  return new Promise((resolve) => {
    const req = httpGet(url, { agent, timeout: 30_000 }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
      res.on('error', () => resolve(0));
    });
    req.on('timeout', () => req.destroy());
    req.on('error', () => resolve(0));
  });
}

/**
 * Requests one after another from `localAddress` until `untilMs`: latencies in ms and statuses.
 * node:http's Agent, because it binds the local address (undici's connector does not).
 */
async function sequential(urlOf, localAddress, untilMs, pauseMs) {
  const agent = new HttpAgent({ keepAlive: true, localAddress });
  const latencies = [];
  const statuses = new Map();
  for (let i = 0; performance.now() < untilMs; i++) {
    const t0 = performance.now();
    const status = await get(urlOf(i), agent);
    latencies.push(performance.now() - t0);
    statuses.set(status, (statuses.get(status) ?? 0) + 1);
    if (pauseMs) await new Promise((r) => setTimeout(r, pauseMs));
  }
  agent.destroy();
  return { latencies, statuses };
}

const pct = (xs, p) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * p))];
const statusText = (m) =>
  [...m.entries()]
    .sort((a, b) => a[0] - b[0])
    .map(([s, c]) => `${s || 'none'}×${c}`)
    .join(' ');

/** The flood and the two clients against one gateway configuration; the wiki's log counts what reached it. */
async function underFlood(wikiUrl, data, env, label, row) {
  const gw = await gateway(wikiUrl, env);
  const hitUrl = `${gw.url}/w/api.php?action=query&list=allpages&aplimit=20&format=json&requestid=flood-bench-hit`;
  await (await request(hitUrl)).body.dump(); // the reader's answer, cached
  const before = wikiLines(data).length;
  const seconds = SECONDS;
  const flood = startProcess('wrk-flood', 'taskset', ['-c', '1', 'wrk', '-t1', `-c${FLOOD_CONNECTIONS}`, `-d${seconds}s`, '-s', floodScript(), gw.url], {
    stdout: 'pipe',
  });
  let floodOut = '';
  flood.stdout.on('data', (c) => (floodOut += c));
  const floodDone = new Promise((r) => flood.once('exit', r));
  const until = performance.now() + (seconds - 1) * 1000;
  // The honest client: a miss every 100 ms (10/s, under its 20/s budget), from its own address.
  const honest = sequential((i) => `${gw.url}/w/api.php?action=query&meta=siteinfo&format=json&requestid=honest-${label}-${i}`, '127.0.0.2', until, 100);
  // The reader: the cached answer, one after another.
  const reader = sequential(() => hitUrl, '127.0.0.3', until, 0);
  const [h, r] = await Promise.all([honest, reader]);
  await floodDone;
  await stopProcess(gw.child);
  const served = wikiLines(data).length - before;
  const floodTotal = Number(/(\d+) requests in/.exec(floodOut)?.[1] ?? NaN);
  const floodRefused = parseWrk(floodOut).non2xx;
  const honestOk = h.statuses.get(200) ?? 0;
  row(
    'flood',
    `${label}: wiki served req/s`,
    fmt(served / seconds, 0),
    `the flood sent ${fmt(floodTotal / seconds, 0)}/s, ${fmt((100 * floodRefused) / floodTotal, 1)} % refused (429/503)`,
  );
  row(
    'flood',
    `${label}: honest client's misses p50 / p99 ms`,
    `${fmt(pct(h.latencies, 0.5), 1)} / ${fmt(pct(h.latencies, 0.99), 1)}`,
    `${honestOk} of ${h.latencies.length} answered 200 (${statusText(h.statuses)})`,
  );
  row(
    'flood',
    `${label}: hit p50 / p99 ms`,
    `${fmt(pct(r.latencies, 0.5), 2)} / ${fmt(pct(r.latencies, 0.99), 2)}`,
    `${r.latencies.length} hits, ${statusText(r.statuses)}`,
  );
  return { served, honest: h, reader: r };
}

export async function benchFlood(wikiUrl, data, row) {
  console.log(`\n## Flood: ${FLOOD_CONNECTIONS} connections of cache-busting misses; an honest client (10 misses/s) and a reader beside it`);
  // The baseline: no flood, limits as shipped (what the two clients get on a quiet wiki).
  const quiet = await (async () => {
    const gw = await gateway(wikiUrl);
    const hitUrl = `${gw.url}/w/api.php?action=query&list=allpages&aplimit=20&format=json&requestid=flood-bench-hit`;
    await (await request(hitUrl)).body.dump();
    const until = performance.now() + (SECONDS - 1) * 1000;
    const [h, r] = await Promise.all([
      sequential((i) => `${gw.url}/w/api.php?action=query&meta=siteinfo&format=json&requestid=quiet-${i}`, '127.0.0.2', until, 100),
      sequential(() => hitUrl, '127.0.0.3', until, 0),
    ]);
    await stopProcess(gw.child);
    return { h, r };
  })();
  row(
    'flood',
    "no flood: honest client's misses p50 / p99 ms",
    `${fmt(pct(quiet.h.latencies, 0.5), 1)} / ${fmt(pct(quiet.h.latencies, 0.99), 1)}`,
    statusText(quiet.h.statuses),
  );
  row(
    'flood',
    'no flood: hit p50 / p99 ms',
    `${fmt(pct(quiet.r.latencies, 0.5), 2)} / ${fmt(pct(quiet.r.latencies, 0.99), 2)}`,
    `${quiet.r.latencies.length} hits`,
  );
  await underFlood(wikiUrl, data, NO_LIMITS, 'every limit off, one flooding address', row);
  await underFlood(wikiUrl, data, {}, 'limits as shipped, one flooding address', row);
  await underFlood(wikiUrl, data, GLOBAL_GATE_ONLY, 'global gate only (a flood from many addresses)', row);
  stopAll();
}

/** ns per call of `fn` over `n` calls, after a warm-up (median of 5 batches). */
function nsPerCall(fn, n = 1_000_000) {
  for (let i = 0; i < n / 10; i++) fn(i);
  const batches = [];
  for (let b = 0; b < 5; b++) {
    const t0 = process.hrtime.bigint();
    for (let i = 0; i < n; i++) fn(i);
    batches.push(Number(process.hrtime.bigint() - t0) / n);
  }
  return batches.sort((a, b) => a - b)[2];
}

export async function benchCredentialNet(row) {
  console.log('\n## Credential net: the identity checks per request, in this process (dist/)');
  const { identityRules, mayCarryCredentials, identityFromHeaders } = await import(path.join(root, 'dist/mediawiki/identity.js'));
  const { parsePhpQuery } = await import(path.join(root, 'dist/mediawiki/php-input.js'));
  const rules = identityRules({ cookiePrefix: 'wiki', sessionName: '', sessionJwtCookie: false, secret: Buffer.alloc(32, 1) });
  // What a bot sends (a fresh hit: no cookie), and what a browser that never logged in sends.
  const bot = { host: 'wiki.example', 'user-agent': 'mwn/3.0 (bench)', accept: 'application/json', 'accept-encoding': 'gzip, br' };
  const browser = {
    ...bot,
    cookie: 'wikimwuser-sessionId=3f1a9c0b2d; _ga=GA1.2.12345.67890; wikiEditor-0-toolbar-section=advanced; VEE=wikitext; theme=dark; lang=en',
  };
  const query = parsePhpQuery('action=query&meta=siteinfo&format=json');
  let sink = 0;
  const check = nsPerCall(() => (sink += mayCarryCredentials(bot, rules) ? 1 : 0));
  row('credential-net', "fresh hit's check (no cookie, no credential header) ns", fmt(check, 1), 'on every request that reaches the fast hit path');
  const anonymous = nsPerCall(() => (sink += identityFromHeaders(browser, query, rules).kind.length), 200_000);
  row('credential-net', 'identity of a browser with 6 harmless cookies ns', fmt(anonymous, 0), 'full path only: requests with a Cookie header');
  if (sink < 0) console.log(sink); // keep the calls observable
}
