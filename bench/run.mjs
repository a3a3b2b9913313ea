// `npm run bench`: everything it compares is started here on loopback, measured in the same run,
// and printed as ratios (absolute figures move ±10-25 % between runs on these shared 2-core
// machines; ratios measured side by side do not). Servers under test are pinned to CPU 0, the
// load generator (wrk) and upstreams to CPU 1. Every run is bounded in time. The helpers it shares
// with the soak (processes, ports, wrk, the gateway, a throw-away wiki) are in harness.mjs.
//
//   BENCH_SECONDS (default 8)  length of each wrk run
//   BENCH_ONLY=hit,zipf,coalesce,miss,memory  run a subset
import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { request } from 'undici';
import {
  SECONDS,
  ensureBuilt,
  fmt,
  freePort,
  gateway,
  have,
  root,
  startProcess,
  stopAll,
  waitFor,
  wikiLines,
  withWiki,
  work,
  wrk,
} from './harness.mjs';

const ONLY = new Set((process.env.BENCH_ONLY ?? 'hit,zipf,coalesce,miss,memory').split(','));
const rows = [];

function row(section, what, value, note = '') {
  rows.push({ section, what, value, note });
  console.log(`  ${what.padEnd(58)} ${String(value).padStart(14)}  ${note}`);
}

// ------------------------------------------------------------------------------------- hit path
async function benchHit() {
  console.log('\n## Hit path (300-byte answer, wrk -t1 -c50, server on CPU 0)');
  const upstreamPort = await freePort();
  startProcess('fake-api', process.execPath, [path.join(root, 'bench/servers/fake-api.mjs'), String(upstreamPort)], { cpu: 1 });
  await waitFor(`http://127.0.0.1:${upstreamPort}/w/api.php`);
  const upstream = `http://127.0.0.1:${upstreamPort}`;
  const q = '/w/api.php?action=query&list=filearchive&format=json&formatversion=2';

  const barePort = await freePort();
  startProcess('bare-fastify', process.execPath, [path.join(root, 'bench/servers/bare-fastify.mjs'), String(barePort)], { cpu: 0 });
  await waitFor(`http://127.0.0.1:${barePort}/w/api.php`);
  const gw = await gateway(upstream); // logs (JSON to stdout, discarded) and metrics on, as deployed
  const gwQuiet = await gateway(upstream, { WIKIEDGE_LOG_HITS: 'false' });
  await request(`${gw.url}${q}`).then((r) => r.body.dump());
  await request(`${gwQuiet.url}${q}`).then((r) => r.body.dump());

  const results = {};
  for (let round = 0; round < 2; round++) {
    for (const [name, url] of [
      ['bare Fastify route', `http://127.0.0.1:${barePort}${q}`],
      ['wikiedge hit (log line per hit + metrics)', `${gw.url}${q}`],
      ['wikiedge hit (hits in metrics only)', `${gwQuiet.url}${q}`],
    ]) {
      const r = wrk(url);
      (results[name] ??= []).push(r);
    }
  }
  if (have('nginx')) {
    const port = await freePort();
    const conf = path.join(work, 'nginx.conf');
    writeFileSync(
      conf,
      `${process.getuid?.() === 0 ? 'user root;' : ''} worker_processes 1; daemon off; pid ${work}/nginx.pid; error_log ${work}/nginx-error.log;
events { worker_connections 1024; }
http { access_log off; proxy_cache_path ${work}/nginx-cache keys_zone=api:10m;
  upstream wiki { server 127.0.0.1:${upstreamPort}; keepalive 64; }
  server { listen 127.0.0.1:${port};
    location / { proxy_pass http://wiki; proxy_http_version 1.1; proxy_set_header Connection "";
      proxy_cache api; proxy_cache_valid 200 1m; add_header X-Cache $upstream_cache_status; } } }`,
    );
    startProcess('nginx', 'nginx', ['-c', conf, '-p', work], { cpu: 0 });
    await waitFor(`http://127.0.0.1:${port}${q}`);
    for (let round = 0; round < 2; round++) (results['nginx proxy_cache hit'] ??= []).push(wrk(`http://127.0.0.1:${port}${q}`));
  } else {
    console.log('  (nginx not installed: skipped; apt-get install nginx-light)');
  }
  if (have('varnishd')) {
    const port = await freePort();
    const admin = await freePort();
    const vcl = path.join(work, 'bench.vcl');
    writeFileSync(
      vcl,
      `vcl 4.1;\nbackend wiki { .host = "127.0.0.1"; .port = "${upstreamPort}"; }\nsub vcl_recv { return (hash); }\nsub vcl_backend_response { set beresp.ttl = 60s; return (deliver); }\n`,
    );
    startProcess('varnish', 'varnishd', [...(process.getuid?.() === 0 ? ['-j', 'none'] : []), '-F', '-a', `127.0.0.1:${port}`, '-T', `127.0.0.1:${admin}`, '-f', vcl, '-s', 'malloc,64m', '-n', path.join(work, 'varnish')], { cpu: 0 });
    await waitFor(`http://127.0.0.1:${port}${q}`, 200);
    for (let round = 0; round < 2; round++) (results['Varnish hit'] ??= []).push(wrk(`http://127.0.0.1:${port}${q}`));
  } else {
    console.log('  (varnish not installed: skipped; apt-get install varnish)');
  }
  const mean = (name) => results[name].reduce((s, r) => s + r.rps, 0) / results[name].length;
  const base = mean('bare Fastify route');
  for (const name of Object.keys(results)) {
    const rs = results[name];
    row('hit', `${name}: req/s (p50 / p99 ms)`, fmt(mean(name), 0), `${fmt(rs[0].p50)} / ${fmt(rs[0].p99)}  ×bare ${fmt(mean(name) / base)}`);
  }
  for (const name of ['wikiedge hit (log line per hit + metrics)', 'wikiedge hit (hits in metrics only)']) {
    if (results['Varnish hit']) row('hit', `${name} ÷ Varnish hit`, fmt(mean(name) / mean('Varnish hit')), 'target ≥ 0.85');
    row('hit', `${name} ÷ bare Fastify`, fmt(mean(name) / base), 'target ≥ 0.90');
  }
  stopAll();
}

// --------------------------------------------------------------------------- real-wiki benches
async function benchZipf(wikiUrl, data) {
  console.log('\n## Anonymous read mix: Zipf(s=1) over 1000 distinct api.php requests');
  const gw = await gateway(wikiUrl, { WIKIEDGE_LOG_HITS: 'false' });
  const script = path.join(root, 'bench/zipf.lua');
  const direct = wrk(wikiUrl, { connections: 4, script });
  // Steady state: an operator's cache is warm. Fill it once (1000 misses at the wiki's pace),
  // then measure; the cold fill is reported separately.
  const beforeFill = wikiLines(data).length;
  const urls = Array.from({ length: 1000 }, (_, i) =>
    `${gw.url}/w/api.php?action=query&list=allpages&format=json&aplimit=${1 + (i % 50)}&apfrom=${String.fromCharCode(65 + Math.floor(i / 50))}`);
  for (let i = 0; i < urls.length; i += 8) {
    await Promise.all(urls.slice(i, i + 8).map((u) => request(u).then((r) => r.body.dump())));
  }
  const filled = wikiLines(data).length - beforeFill;
  const before = wikiLines(data).length;
  const viaGateway = wrk(gw.url, { connections: 50, script });
  const reached = wikiLines(data).length - before;
  row('zipf', 'cache fill: wiki requests for the 1000 distinct URLs', filled);
  const total = Math.round(viaGateway.rps * SECONDS);
  row('zipf', 'wiki direct (wrk -c4, php -S 4 workers): req/s', fmt(direct.rps, 0));
  row('zipf', 'through wikiedge (wrk -c50): req/s', fmt(viaGateway.rps, 0), `non-2xx ${viaGateway.non2xx}`);
  row('zipf', 'throughput ratio gateway ÷ direct', fmt(viaGateway.rps / direct.rps, 1), 'target ≥ 100');
  row('zipf', 'requests that reached the wiki while measured (incl. wrk warm-up)', reached, `of ~${total} measured client requests`);
  stopAll();
}

async function benchCoalesce(wikiUrl, data) {
  console.log('\n## 200 concurrent identical misses');
  const gw = await gateway(wikiUrl, { WIKIEDGE_LOG_HITS: 'false' });
  const id = randomUUID();
  const answers = await Promise.all(
    Array.from({ length: 200 }, () =>
      request(`${gw.url}/w/api.php?action=query&meta=siteinfo&format=json&requestid=${id}`).then(async (r) => {
        await r.body.dump();
        return r.statusCode;
      }),
    ),
  );
  const upstream = wikiLines(data).filter((l) => l.includes(id)).length;
  row('coalesce', 'upstream requests for 200 concurrent identical misses', upstream, `all 200 OK: ${answers.every((s) => s === 200)}; target 1`);
  stopAll();
}

async function benchMiss(wikiUrl) {
  console.log('\n## Miss overhead: sequential misses, gateway vs the wiki direct');
  const gw = await gateway(wikiUrl, { WIKIEDGE_LOG_HITS: 'false' });
  const time = async (base) => {
    const t = [];
    for (let i = 0; i < 150; i++) {
      const url = `${base}/w/api.php?action=query&meta=siteinfo&format=json&requestid=${randomUUID()}`;
      const t0 = performance.now();
      const r = await request(url);
      await r.body.dump();
      t.push(performance.now() - t0);
    }
    t.sort((a, b) => a - b);
    return { p50: t[Math.floor(t.length * 0.5)], p99: t[Math.floor(t.length * 0.99)] };
  };
  await time(gw.url); // warm both
  const direct = [];
  const via = [];
  for (let round = 0; round < 2; round++) {
    direct.push(await time(wikiUrl));
    via.push(await time(gw.url));
  }
  const avg = (xs, k) => xs.reduce((s, x) => s + x[k], 0) / xs.length;
  row('miss', 'wiki direct p50 / p99 ms', `${fmt(avg(direct, 'p50'))} / ${fmt(avg(direct, 'p99'))}`);
  row('miss', 'through wikiedge (miss) p50 / p99 ms', `${fmt(avg(via, 'p50'))} / ${fmt(avg(via, 'p99'))}`);
  row('miss', 'added p50 / p99 ms', `${fmt(avg(via, 'p50') - avg(direct, 'p50'))} / ${fmt(avg(via, 'p99') - avg(direct, 'p99'))}`, 'target p50 ≤ 1 ms');
  stopAll();
}

function benchMemory() {
  console.log('\n## Memory: entries held vs payload bytes (separate process, forced GC)');
  for (const n of [10_000, 100_000]) {
    const out = execFileSync(process.execPath, ['--expose-gc', path.join(root, 'bench/memory.mjs'), String(n)], { encoding: 'utf8' });
    const r = JSON.parse(out);
    row('memory', `${n} entries: payload MB / RSS growth MB / heap growth MB`, `${fmt(r.payloadMB, 1)} / ${fmt(r.rssMB, 1)} / ${fmt(r.heapMB, 1)}`, `RSS ÷ payload ${fmt(r.rssMB / r.payloadMB)} (target ≤ 1.5)`);
    row('memory', `${n} entries into a budget of ${fmt(r.budgetMB, 0)} MB: held MB`, fmt(r.heldMB, 1), `within budget: ${r.heldMB <= r.budgetMB * 1.05}`);
  }
}

console.log(`# wikiedge benchmarks ${new Date().toISOString()} · ${process.version} · ${(await import('node:os')).cpus().length} CPUs · ${SECONDS}s per wrk run`);
if (!have('wrk')) {
  console.error('wrk is required (apt-get install wrk)');
  process.exit(1);
}
ensureBuilt();
if (ONLY.has('hit')) await benchHit();
if (ONLY.has('zipf') || ONLY.has('coalesce') || ONLY.has('miss')) {
  await withWiki(async (wikiUrl, data) => {
    if (ONLY.has('zipf')) await benchZipf(wikiUrl, data);
    if (ONLY.has('coalesce')) await benchCoalesce(wikiUrl, data);
    if (ONLY.has('miss')) await benchMiss(wikiUrl);
  });
}
if (ONLY.has('memory')) benchMemory();
writeFileSync(path.join(work, 'results.json'), JSON.stringify(rows, null, 2));
console.log(`\nresults: ${path.join(work, 'results.json')}`);
stopAll();
process.exit(0);
