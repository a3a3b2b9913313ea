// The miss path beside nginx and Varnish: `BENCH_ONLY=miss-throughput npm run bench` (not in the
// default set). nginx proxy_cache, Varnish 7.1 and the gateway, each pinned to CPU 0, in front of
// one stand-in wiki (bench/servers/miss-api.mjs: a 2,127-byte JSON answer with MediaWiki's public
// cache headers, answered at once) on CPU 1, with the load generator and this process on CPU 1
// too; every request a new URL, so every one is a miss. Per candidate and round:
//
//   sequential   BENCH_MISS_PAIRS (200) misses, one connection, each paired with a request
//                straight to the stand-in (their order swapped every pair); added latency =
//                through the server minus direct, p50 and p99 of the round;
//   logged-in    the same with a session cookie, which the stand-in answers `private` as
//                MediaWiki does: nginx and Varnish pass it, the gateway keeps it for that
//                session only;
//   gzip client  the same with Accept-Encoding: gzip on both sides, as mwn, pywikibot and
//                requests send it: the gateway makes its stored gzip before it answers such a
//                client (src/steps/flow.ts, `madeNow`) and sends that; the stand-in, the bare
//                proxy, nginx and Varnish (neither cache compresses unless told to) send the
//                answer as it is, and so does the gateway without compression at store. Timed to
//                the last byte; a gzip body is decoded and checked after the clock stops;
//   throughput   BENCH_SECONDS of misses on 16 connections (wrk with bench/miss-urls.lua or
//                bench/miss-load.mjs, whichever measured faster at the start of the run), after
//                BENCH_MISS_WARMUP_SECONDS (6) of the same (a new process's misses cost several
//                times more for its first thousands: V8 tiers up); misses per second, CPU seconds
//                and minor page faults per miss of the server's whole process tree (/proc). No
//                Accept-Encoding; then, for the gateway as deployed only (the one candidate whose
//                work depends on it, and one more load of BENCH_SECONDS in its turn), the same
//                load again with Accept-Encoding: gzip.
//
// The candidates: nginx, Varnish, a bare Node proxy (bench/servers/bare-proxy.mjs: node:http and
// the gateway's undici Pool, no cache: the floor a Node gateway stands on, as the bare Fastify
// route is for hits), the gateway as deployed (answers stored as gzip), the gateway
// without compression at store (bench/no-store-gzip.mjs: no configuration key turns it off), with
// BENCH_MISS_TRIM=1 the gateway with glibc's trim threshold raised (TRIM below), and with BENCH_BASELINE=<ref> the gateway built from that ref (bench/baseline.mjs). Fresh
// processes every round; in a round they are measured one after another, in an order rotated
// every round, the others stopped (SIGSTOP) meanwhile (not Varnish: its manager restarts a child
// that misses its pings), as the hit section does. Medians of BENCH_ROUNDS rounds, and the
// medians of the per-round ratios gateway ÷ Varnish, gateway ÷ nginx and gateway ÷ bare Node
// proxy (and the bare proxy's own beside Varnish and nginx).
//
// BENCH_PROFILE=1 then runs the gateway as deployed, again without compression at store, and the
// bare Node proxy, each under `node --cpu-prof` for the same warm-up and load, and prints where
// their CPU went, by group and by step of the request's path (bench/cpuprofile.mjs): what the
// gateway spends beyond the floor, step by step. BENCH_ROUNDS=0 BENCH_PROFILE=1: the profiles alone;
// BENCH_PROFILE_CODING=gzip: profiled with clients that take gzip.
//
// BENCH_MISS_CACHE_MIB (256): the gateways' shared budget and Varnish's storage (see CACHE_MIB).
//
// BENCH_HEAP=1 then runs the gateway as deployed under V8's sampling heap profiler (bench/heap-sample.mjs,
// freed objects kept) for the same warm-up and load, and prints what a miss allocates and where
// (bench/heapprofile.mjs): the bytes behind its GC time.
import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { copyFileSync, existsSync, mkdirSync, readFileSync, readdirSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { gunzipSync } from 'node:zlib';
import { Client } from 'undici';
import { startNginx, startVarnish, ensureCaches } from './caches.mjs';
import { printGroups, printSummary, summarise } from './cpuprofile.mjs';
import { printHeapSummary, summariseHeap } from './heapprofile.mjs';
import { SECONDS, fmt, freePort, gateway, parseWrk, root, startProcess, stopProcess, waitFor, work } from './harness.mjs';
import { median, signalTree, treeCpuSeconds, treePageFaults } from './proc.mjs';
import { ANSWER_BYTES } from './servers/miss-api.mjs';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const PAIRS = Number(process.env.BENCH_MISS_PAIRS ?? 200);
const WARMUP_SECONDS = Number(process.env.BENCH_MISS_WARMUP_SECONDS ?? 6);
const CONNECTIONS = 16;
const QUERY = '/w/api.php?action=query&meta=siteinfo&format=json&requestid=';
/** A session cookie as MediaWiki sets it (CookieSessionProvider, `$wgCookiePrefix` `wiki`). */
const SESSION = `wiki_session=${'b'.repeat(32)}; wikiUserName=LabUser; wikiUserID=3`;
/** As run.mjs MANY_CLIENTS: one loopback address plays many readers; the limits have their own section. */
/**
 * BENCH_MISS_CACHE_MIB: the gateways' shared budget and Varnish's storage, in MiB (256 by
 * default, the gateway's own default: its cache then fills for the whole load and never evicts).
 * A small one (16) measures the steady state of a flood of misses into a full cache, where
 * every store evicts.
 */
const CACHE_MIB = Number(process.env.BENCH_MISS_CACHE_MIB ?? 256);
const MANY_CLIENTS = {
  WIKIEDGE_CLIENT_MAX_CONCURRENCY: '0',
  WIKIEDGE_CLIENT_MISS_RATE: '0',
  WIKIEDGE_CLIENT_STORE_BYTES_PER_SECOND: '0',
  WIKIEDGE_CACHE_SHARED_MAX_BYTES: String(CACHE_MIB * 1024 * 1024),
};
const NGINX = 'nginx proxy_cache';
const VARNISH = 'Varnish 7.1';
const GATEWAY = 'wikiedge (gzip at store, as deployed)';
const NO_GZIP = 'wikiedge, no compression at store';
const BARE_PROXY = 'bare Node proxy (node:http + undici, no cache)';
const GZIP_CLIENT = { 'accept-encoding': 'gzip' };
/** BENCH_PROFILE_CODING=gzip: the profiled load's clients send Accept-Encoding: gzip (mwn's, pywikibot's). */
const PROFILE_CODING = process.env.BENCH_PROFILE_CODING || undefined;
/**
 * As deployed, but for glibc's trim threshold. `npm start` and the image set
 * MALLOC_MMAP_THRESHOLD_=131072, which also stops glibc from raising M_TRIM_THRESHOLD from its
 * 128 KiB (mallopt(3)): memory freed at the top of the heap beyond that goes back to the kernel
 * at once, and comes back page fault by page fault on the next allocation. A gzip at store
 * allocates and frees ~256 KiB of deflate state per answer (zconf.h).
 */
const TRIM = 'wikiedge, MALLOC_TRIM_THRESHOLD_=64 MiB';
const run = randomUUID().slice(0, 8);

// ------------------------------------------------------------------------------ generators

/**
 * wrk, one thread on CPU 1, every request a new URL, with Accept-Encoding `acceptEncoding` when
 * given; `{ requests, rps, non2xx }`.
 */
function wrkLoad(base, seconds, prefix, cookie, acceptEncoding) {
  const header = acceptEncoding ? ['-H', `Accept-Encoding: ${acceptEncoding}`] : [];
  const script = path.join(root, 'bench/miss-urls.lua');
  const args = ['-c', '1', 'wrk', '-t1', `-c${CONNECTIONS}`, `-d${seconds}s`, ...header, '-s', script, `${base}${QUERY}`, '--', prefix];
  if (cookie) args.push(cookie);
  const r = parseWrk(execFileSync('taskset', args, { encoding: 'utf8' }));
  return { requests: r.requests, rps: r.rps, non2xx: r.non2xx + Object.values(r.socketErrors).reduce((a, b) => a + b, 0) };
}

/** bench/miss-load.mjs (undici) on CPU 1, the same load. */
function undiciLoad(base, seconds, prefix, cookie, acceptEncoding) {
  const args = ['-c', '1', process.execPath, path.join(root, 'bench/miss-load.mjs'), `${base}${QUERY}`, String(CONNECTIONS), String(seconds), prefix];
  if (cookie || acceptEncoding) args.push(cookie ?? '');
  if (acceptEncoding) args.push(acceptEncoding);
  const r = JSON.parse(execFileSync('taskset', args, { encoding: 'utf8' }));
  return { requests: r.requests, rps: r.rps, non2xx: r.non2xx + r.errors };
}

/**
 * The faster of the two generators, measured against a stand-in of its own on CPU 0 (the
 * place of a server under test), 3 s each, twice in alternation.
 */
async function chooseGenerator() {
  const port = await freePort();
  const probe = startProcess('miss-api (generator check)', process.execPath, [path.join(root, 'bench/servers/miss-api.mjs'), String(port)], { cpu: 0 });
  try {
    await waitFor(`http://127.0.0.1:${port}/w/api.php`);
    const base = `http://127.0.0.1:${port}`;
    const seen = { wrk: [], undici: [] };
    for (let i = 0; i < 2; i++) {
      seen.wrk.push(wrkLoad(base, 3, `${run}-g${i}`).rps);
      seen.undici.push(undiciLoad(base, 3, `${run}-h${i}`).rps);
    }
    const wrkRps = Math.max(...seen.wrk);
    const undiciRps = Math.max(...seen.undici);
    const chosen = wrkRps >= undiciRps ? { name: 'wrk + bench/miss-urls.lua', load: wrkLoad } : { name: 'undici (bench/miss-load.mjs)', load: undiciLoad };
    console.log(
      `  generators, ${CONNECTIONS} connections of new URLs on CPU 1 against a bare stand-in on CPU 0: wrk ${seen.wrk.map((x) => fmt(x, 0)).join(' · ')} req/s, undici ${seen.undici.map((x) => fmt(x, 0)).join(' · ')}: using ${chosen.name}`,
    );
    return { ...chosen, ceiling: Math.max(wrkRps, undiciRps) };
  } finally {
    await stopProcess(probe);
  }
}

// ------------------------------------------------------------------------------ candidates

/** One round's candidates, started in an order rotated every round. */
async function startCandidates(upstreamPort, round, tools, baseline) {
  const upstream = `http://127.0.0.1:${upstreamPort}`;
  const probe = `${QUERY}${run}-probe-${round}`;
  const starters = [];
  if (tools.has('nginx'))
    starters.push(async () => ({ name: NGINX, ...(await startNginx({ upstreamPort, dir: path.join(work, `miss-nginx-${round}`), probe })) }));
  if (tools.has('varnishd'))
    starters.push(async () => ({
      name: VARNISH,
      // Varnish's builtin VCL alone; storage the size of the gateway's shared budget.
      ...(await startVarnish({ upstreamPort, dir: path.join(work, `miss-varnish-${round}`), probe, storage: `malloc,${CACHE_MIB}m` })),
    }));
  const gatewayStarter =
    (name, { env, ...opts }) =>
    async () => {
      const g = await gateway(upstream, { ...MANY_CLIENTS, ...env }, opts);
      return { name, url: g.url, pid: g.child.pid, child: g.child };
    };
  starters.push(async () => ({ name: BARE_PROXY, ...(await bareProxy(upstream, probe)) }));
  starters.push(gatewayStarter(GATEWAY, {}));
  starters.push(gatewayStarter(NO_GZIP, { nodeArgs: ['--import', path.join(root, 'bench/no-store-gzip.mjs')] }));
  if (process.env.BENCH_MISS_TRIM === '1') starters.push(gatewayStarter(TRIM, { env: { MALLOC_TRIM_THRESHOLD_: String(64 * 1024 * 1024) } }));
  if (baseline) starters.push(gatewayStarter(baselineName(baseline), { main: baseline.main }));
  const candidates = new Array(starters.length);
  for (let i = 0; i < starters.length; i++) {
    const at = (i + round) % starters.length;
    candidates[at] = await starters[at]();
  }
  return candidates;
}

const baselineName = (baseline) => `wikiedge baseline ${baseline.label}`;

/** The bare Node proxy on CPU 0, answering. */
async function bareProxy(upstream, probe = QUERY, nodeArgs = []) {
  const port = await freePort();
  const child = startProcess('bare-proxy', process.execPath, [...nodeArgs, path.join(root, 'bench/servers/bare-proxy.mjs'), String(port), upstream], {
    cpu: 0,
  });
  await waitFor(`http://127.0.0.1:${port}${probe}`);
  return { url: `http://127.0.0.1:${port}`, pid: child.pid, child };
}

// ------------------------------------------------------------------------------ measurements

/**
 * `PAIRS` sequential misses through `base`, each paired with one straight to the stand-in, both
 * sent `headers` (a session cookie, Accept-Encoding).
 */
async function sequential(base, upstream, prefix, headers = {}) {
  const via = new Client(base, { pipelining: 1 });
  const direct = new Client(upstream, { pipelining: 1 });
  const xcache = new Set();
  const codings = new Set();
  const once = async (client, n, side) => {
    const t0 = performance.now();
    const r = await client.request({ method: 'GET', path: `${QUERY}${prefix}-${side}-${n}`, headers });
    const received = Buffer.from(await r.body.arrayBuffer());
    const ms = performance.now() - t0;
    const coding = String(r.headers['content-encoding'] ?? 'identity');
    const body = coding === 'gzip' ? gunzipSync(received) : received;
    if (r.statusCode !== 200 || body.length !== ANSWER_BYTES || !['gzip', 'identity'].includes(coding))
      throw new Error(`${base}: ${r.statusCode}, ${coding}, ${body.length} bytes`);
    if (client === via) {
      xcache.add(String(r.headers['x-cache'] ?? (r.headers['x-varnish'] ? `x-varnish ${String(r.headers['x-varnish']).split(' ').length} id` : '-')));
      codings.add(`${coding} ${received.length} B`);
    }
    return ms;
  };
  const times = { via: [], direct: [] };
  try {
    for (let i = 0; i < PAIRS; i++) {
      // Paired, order swapped every pair: the stand-in's and the host's drift lands on both sides.
      if (i % 2 === 0) times.direct.push(await once(direct, i, 'd'));
      times.via.push(await once(via, i, 'v'));
      if (i % 2 === 1) times.direct.push(await once(direct, i, 'd'));
    }
  } finally {
    await Promise.all([via.close(), direct.close()]);
  }
  const q = (xs, p) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length * p)];
  return {
    p50: q(times.via, 0.5) - q(times.direct, 0.5),
    p99: q(times.via, 0.99) - q(times.direct, 0.99),
    direct50: q(times.direct, 0.5),
    xcache: [...xcache].join(','),
    codings: [...codings].join(','),
  };
}

/** One candidate's figures for one round. */
async function measure(c, upstream, generator, round) {
  const prefix = `${run}-${round}-${c.name.replace(/\W+/g, '')}`;
  generator.load(c.url, WARMUP_SECONDS, `${prefix}-w`);
  const anon = await sequential(c.url, upstream, `${prefix}-s`);
  const logged = await sequential(c.url, upstream, `${prefix}-l`, { cookie: SESSION });
  const gzip = await sequential(c.url, upstream, `${prefix}-z`, GZIP_CLIENT);
  const load = throughput(c, generator, `${prefix}-t`);
  const gzipLoad = c.name === GATEWAY ? throughput(c, generator, `${prefix}-tz`, GZIP_CLIENT['accept-encoding']) : undefined;
  return { anon, logged, gzip, ...load, gzipLoad };
}

/** `SECONDS` of misses through `c`; misses/s, CPU µs and minor page faults per miss of its process tree. */
function throughput(c, generator, prefix, acceptEncoding) {
  const before = treeCpuSeconds(c.pid);
  const faultsBefore = treePageFaults(c.pid);
  const load = generator.load(c.url, SECONDS, prefix, undefined, acceptEncoding);
  const cpuUs = ((treeCpuSeconds(c.pid) - before) * 1e6) / load.requests;
  const faults = (treePageFaults(c.pid) - faultsBefore) / load.requests;
  return { rps: load.rps, cpuUs, faults, failed: load.non2xx };
}

// ------------------------------------------------------------------------------ the section

/** Pins this process (every thread) to `cpus`; returns the mask it had. */
function pinSelf(cpus) {
  const was = /:\s*([0-9a-f]+)\s*$/.exec(execFileSync('taskset', ['-p', String(process.pid)], { encoding: 'utf8' }))?.[1];
  execFileSync('taskset', ['-a', '-p', '-c', cpus, String(process.pid)], { stdio: 'ignore' });
  return was;
}

export async function benchMissThroughput(row, { baseline } = {}) {
  console.log(
    `\n## Miss path beside nginx and Varnish (a ${ANSWER_BYTES}-byte answer, every request a new URL, a ${CACHE_MIB} MiB cache; servers on CPU 0, the stand-in, the load and this process on CPU 1; ${ROUNDS} rounds, fresh processes each, interleaved; medians)`,
  );
  const [l1, l5, l15] = os.loadavg();
  console.log(`  load average at the start: ${fmt(l1)} ${fmt(l5)} ${fmt(l15)} (${os.cpus().length} CPUs)`);
  const tools = ensureCaches();
  if (!tools.has('wrk')) console.log('  (wrk missing: the undici generator is used)');
  const mask = pinSelf('1');
  const upstreamPort = await freePort();
  const upstream = `http://127.0.0.1:${upstreamPort}`;
  const stand = startProcess('miss-api', process.execPath, [path.join(root, 'bench/servers/miss-api.mjs'), String(upstreamPort)], { cpu: 1 });
  const results = new Map();
  try {
    await waitFor(`${upstream}/w/api.php`);
    const generator = tools.has('wrk') ? await chooseGenerator() : { name: 'undici', load: undiciLoad, ceiling: NaN };
    for (let round = 0; round < ROUNDS; round++) {
      const candidates = await startCandidates(upstreamPort, round, tools, baseline);
      try {
        for (let i = 0; i < candidates.length; i++) {
          const c = candidates[(i + round) % candidates.length];
          const others = candidates.filter((o) => o !== c && o.name !== VARNISH);
          for (const o of others) signalTree(o.pid, 'SIGSTOP');
          try {
            if (!results.has(c.name)) results.set(c.name, []);
            results.get(c.name).push(await measure(c, upstream, generator, round));
          } finally {
            for (const o of others) signalTree(o.pid, 'SIGCONT');
          }
        }
      } finally {
        await Promise.all(candidates.map((c) => stopProcess(c.child)));
      }
      console.log(`  round ${round + 1} of ${ROUNDS} done (load average ${fmt(os.loadavg()[0])})`);
    }
    if (results.size > 0) report(row, results, generator, baseline);
    if (process.env.BENCH_PROFILE === '1') await profiles(row, upstream, generator);
    if (process.env.BENCH_HEAP === '1') await allocations(row, upstream, generator);
  } finally {
    await stopProcess(stand);
    if (mask) execFileSync('taskset', ['-a', '-p', mask, String(process.pid)], { stdio: 'ignore' });
  }
  const [e1, e5, e15] = os.loadavg();
  console.log(`  load average at the end: ${fmt(e1)} ${fmt(e5)} ${fmt(e15)}`);
}

/** The rows, and the same as one markdown table (docs/BENCHMARKS.md). */
function report(row, results, generator, baseline) {
  const names = [...results.keys()];
  const mid = (name, f) => median(results.get(name).map(f));
  const rounds = (name, f, d = 2) =>
    results
      .get(name)
      .map((r) => fmt(f(r), d))
      .join(' · ');
  const table = [
    '| | added p50 / p99 ms, sequential misses | logged-in (a pass for nginx and Varnish) added p50 / p99 ms | gzip client (Accept-Encoding: gzip) added p50 / p99 ms | misses/s, 16 connections (rounds) | CPU µs per miss (process tree) | minor page faults per miss |',
    '|---|---|---|---|---|---|---|',
  ];
  for (const name of names) {
    const anon = `${fmt(mid(name, (r) => r.anon.p50))} / ${fmt(mid(name, (r) => r.anon.p99))}`;
    const logged = `${fmt(mid(name, (r) => r.logged.p50))} / ${fmt(mid(name, (r) => r.logged.p99))}`;
    const gzip = `${fmt(mid(name, (r) => r.gzip.p50))} / ${fmt(mid(name, (r) => r.gzip.p99))}`;
    const rps = mid(name, (r) => r.rps);
    const cpuUs = mid(name, (r) => r.cpuUs);
    const faults = mid(name, (r) => r.faults);
    const failed = results.get(name).reduce((s, r) => s + r.failed, 0);
    const first = results.get(name)[0];
    row('miss-throughput', `${name}: added p50 / p99 ms`, anon, `rounds p50 ${rounds(name, (r) => r.anon.p50)}; X-Cache ${first.anon.xcache}`);
    row('miss-throughput', '  logged-in: added p50 / p99 ms', logged, `rounds p50 ${rounds(name, (r) => r.logged.p50)}; X-Cache ${first.logged.xcache}`);
    row(
      'miss-throughput',
      '  gzip client (Accept-Encoding: gzip): added p50 / p99 ms',
      gzip,
      `rounds p50 ${rounds(name, (r) => r.gzip.p50)}; X-Cache ${first.gzip.xcache}; sent ${first.gzip.codings}`,
    );
    row(
      'miss-throughput',
      `  misses/s, ${CONNECTIONS} connections`,
      fmt(rps, 0),
      `rounds ${rounds(name, (r) => r.rps, 0)}${failed ? `; ${failed} failed` : ''}`,
    );
    row('miss-throughput', '  CPU µs per miss', fmt(cpuUs, 1), `rounds ${rounds(name, (r) => r.cpuUs, 1)}`);
    row('miss-throughput', '  minor page faults per miss', fmt(faults, 1), `rounds ${rounds(name, (r) => r.faults, 1)}`);
    table.push(`| ${name} | +${anon} | +${logged} | +${gzip} | **${fmt(rps, 0)}** (${rounds(name, (r) => r.rps, 0)}) | ${fmt(cpuUs, 1)} | ${fmt(faults, 1)} |`);
    if (first.gzipLoad) {
      const zRps = mid(name, (r) => r.gzipLoad.rps);
      const zCpu = mid(name, (r) => r.gzipLoad.cpuUs);
      const zFaults = mid(name, (r) => r.gzipLoad.faults);
      const zFailed = results.get(name).reduce((s, r) => s + r.gzipLoad.failed, 0);
      row(
        'miss-throughput',
        `  gzip clients: misses/s, ${CONNECTIONS} connections`,
        fmt(zRps, 0),
        `rounds ${rounds(name, (r) => r.gzipLoad.rps, 0)}${zFailed ? `; ${zFailed} failed` : ''}; right after the load above`,
      );
      row('miss-throughput', '  gzip clients: CPU µs per miss', fmt(zCpu, 1), `rounds ${rounds(name, (r) => r.gzipLoad.cpuUs, 1)}`);
      table.push(
        `| ${name}, gzip clients (wrk -H 'Accept-Encoding: gzip') | | | | **${fmt(zRps, 0)}** (${rounds(name, (r) => r.gzipLoad.rps, 0)}) | ${fmt(zCpu, 1)} | ${fmt(zFaults, 1)} |`,
      );
    }
  }
  const direct = median([...results.values()].flat().map((r) => r.anon.direct50));
  row(
    'miss-throughput',
    'the stand-in direct, sequential p50 ms',
    fmt(direct, 3),
    `generator: ${generator.name}, ${fmt(generator.ceiling, 0)} req/s against a bare stand-in`,
  );
  // Per-round ratios (both candidates measured minutes apart at most), then their median.
  const ratio = (name, base, f) => median(results.get(name).map((r, i) => f(r) / f(results.get(base)[i])));
  const perRound = (name, base, f) =>
    results
      .get(name)
      .map((r, i) => fmt(f(r) / f(results.get(base)[i])))
      .join(' · ');
  // The bare proxy is measured beside Varnish and nginx too: how much of a gateway's distance to
  // them any Node server in front of undici already has.
  const gateways = names.filter((n) => n.startsWith('wikiedge') || n === BARE_PROXY);
  const ratioTable = [
    '| ratio (median of the per-round ratios) | added p50 | logged-in added p50 | gzip client added p50 | misses/s | CPU per miss |',
    '|---|---|---|---|---|---|',
  ];
  const measures = [(r) => r.anon.p50, (r) => r.logged.p50, (r) => r.gzip.p50, (r) => r.rps, (r) => r.cpuUs];
  const bases = [VARNISH, NGINX, BARE_PROXY, ...(baseline ? [baselineName(baseline)] : [])].filter((b) => results.has(b));
  for (const name of gateways)
    for (const base of bases.filter((b) => b !== name && !(name === BARE_PROXY && b.startsWith('wikiedge')))) {
      const cells = measures.map((f) => `${fmt(ratio(name, base, f))} (${perRound(name, base, f)})`);
      row(
        'miss-throughput',
        `${name} ÷ ${base}`,
        '',
        `added p50 ${cells[0]}; logged-in ${cells[1]}; gzip client ${cells[2]}; misses/s ${cells[3]}; CPU ${cells[4]}`,
      );
      ratioTable.push(`| ${name} ÷ ${base} | ${cells.join(' | ')} |`);
    }
  console.log(`\n${table.join('\n')}\n\n${ratioTable.join('\n')}\n`);
}

/**
 * BENCH_PROFILE=1: the gateway as deployed, then without compression at store, each under
 * `node --cpu-prof` for the same warm-up and load; the first profile summarised in full, then the
 * groups of both side by side (what compression at store adds, frame group by frame group).
 */
async function profiles(row, upstream, generator) {
  console.log(
    `\n### CPU profile of the gateway under misses (node --cpu-prof, ${WARMUP_SECONDS} s warm-up, then ${SECONDS} s of ${CONNECTIONS} connections profiled)`,
  );
  const deployed = await profile(row, upstream, generator, GATEWAY, []);
  if (!deployed) return;
  printSummary(deployed.summary, { misses: deployed.requests, cpuUsPerMiss: deployed.cpuUs });
  const plain = await profile(row, upstream, generator, NO_GZIP, ['--import', path.join(root, 'bench/no-store-gzip.mjs')]);
  // The floor: what every Node gateway pays (node:http, undici, the sockets), profiled the same way.
  const bare = await profile(row, upstream, generator, BARE_PROXY, [], (nodeArgs) => bareProxy(upstream, QUERY, nodeArgs));
  const columns = [
    { label: 'as deployed', ...deployed },
    plain && { label: 'no compression at store', ...plain },
    bare && { label: 'bare Node proxy', ...bare },
  ].filter(Boolean);
  console.log(`\n  the same groups and steps, side by side (${columns.map((c) => `${c.label}: ${c.file}`).join('; ')}):`);
  printGroups(columns.map((c) => ({ label: c.label, summary: c.summary, cpuUsPerMiss: c.cpuUs })));
  console.log('');
  printGroups(
    columns.map((c) => ({ label: c.label, summary: c.summary, cpuUsPerMiss: c.cpuUs })),
    { rows: 'steps' },
  );
}

/**
 * One gateway under `node --cpu-prof`: the warm-up, then the measured load; the summary of the
 * profile's samples taken while the measured load ran (bench/cpuprofile.mjs), its misses, its
 * CPU per miss from /proc over the same window; undefined when no profile was written.
 */
async function profile(row, upstream, generator, name, nodeArgs, start = (args) => gateway(upstream, MANY_CLIENTS, { nodeArgs: args })) {
  const dir = path.join(work, `profile-${name.replace(/\W+/g, '')}`);
  mkdirSync(dir, { recursive: true });
  const g = await start([...nodeArgs, '--cpu-prof', `--cpu-prof-dir=${dir}`, '--cpu-prof-interval', '250']);
  const nowUs = () => Number(process.hrtime.bigint() / 1000n);
  let measured;
  let window;
  try {
    generator.load(g.url, WARMUP_SECONDS, `${run}-${dir.length}-pw`, undefined, PROFILE_CODING);
    const before = treeCpuSeconds(g.child.pid);
    const from = nowUs();
    measured = generator.load(g.url, SECONDS, `${run}-${dir.length}-pt`, undefined, PROFILE_CODING);
    window = { from, to: nowUs() };
    measured.cpuUs = ((treeCpuSeconds(g.child.pid) - before) * 1e6) / measured.requests;
  } finally {
    await stopProcess(g.child); // SIGTERM: the server exits 0, and node writes the profile
  }
  const written = readdirSync(dir).find((f) => f.endsWith('.cpuprofile'));
  if (!written) {
    console.log(`  (${name}: no profile written)`);
    return undefined;
  }
  const file = `${dir}.cpuprofile`;
  copyFileSync(path.join(dir, written), file);
  console.log(
    `  ${name}: ${fmt(measured.rps, 0)} misses/s, ${measured.requests} misses, ${fmt(measured.cpuUs, 1)} µs of CPU per miss (/proc, every thread), sampled every 250 µs\n  the profile: ${file} (Chrome DevTools, Performance, "Load profile"; node bench/cpuprofile.mjs FILE summarises a whole one)`,
  );
  row('miss-throughput', `profiled ${name}: misses/s, CPU µs per miss`, `${fmt(measured.rps, 0)}, ${fmt(measured.cpuUs, 1)}`, file);
  return { summary: summarise(JSON.parse(readFileSync(file, 'utf8')), window), requests: measured.requests, cpuUs: measured.cpuUs, file };
}

/**
 * BENCH_HEAP=1: the gateway as deployed under V8's sampling heap profiler (bench/heap-sample.mjs),
 * the same warm-up and load as the CPU profiles: what its misses allocate, and where.
 */
async function allocations(row, upstream, generator) {
  console.log(
    `\n### What a miss allocates (V8's sampling heap profiler, freed objects kept; ${WARMUP_SECONDS} s warm-up, then ${SECONDS} s of ${CONNECTIONS} connections sampled)`,
  );
  const file = path.join(work, 'gateway.heapprofile');
  const g = await gateway(upstream, { ...MANY_CLIENTS, BENCH_HEAP_PROFILE: file }, { nodeArgs: ['--import', path.join(root, 'bench/heap-sample.mjs')] });
  let measured;
  try {
    generator.load(g.url, WARMUP_SECONDS, `${run}-hw`);
    process.kill(g.child.pid, 'SIGUSR2');
    measured = generator.load(g.url, SECONDS, `${run}-ht`);
    process.kill(g.child.pid, 'SIGUSR2');
    for (let i = 0; i < 100 && !existsSync(file); i++) await new Promise((r) => setTimeout(r, 100));
  } finally {
    await stopProcess(g.child);
  }
  if (!existsSync(file)) return console.log('  (no heap profile written)');
  const summary = summariseHeap(JSON.parse(readFileSync(file, 'utf8')));
  console.log(`  ${fmt(measured.rps, 0)} misses/s, ${measured.requests} misses sampled; the profile: ${file} (Chrome DevTools, Memory, "Load")`);
  printHeapSummary(summary, { misses: measured.requests });
  row('miss-throughput', 'allocated per miss, bytes (sampled)', fmt(summary.totalBytes / measured.requests, 0), file);
}
