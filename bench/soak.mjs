// `npm run soak`: the gateway (dist/main.js, CPU 0) in front of a stand-in MediaWiki
// (servers/fake-mediawiki.mjs, CPU 1) under a bounded mixed load from wrk (soak.lua, CPU 1) for
// SOAK_SECONDS, sampling the gateway's RSS and open fds (/proc) and its admin /metrics. After the
// warm-up (20 % of the run, at least 60 s): RSS max/min within 10 %, fds at the end not above the
// warm-up level plus a small allowance and back to the idle level once the load stops, no
// unexpected status, no socket error, no gateway error log line (soak-verdict.mjs).
// Prints a table and a one-line verdict, writes the samples to JSON, exits 1 on failure.
//
//   SOAK_SECONDS (600)          length of the load
//   SOAK_RATE (500)             target requests per second, all kinds together
//   SOAK_CONNECTIONS (16)       wrk connections (each waits between requests to hold the rate)
//   SOAK_SAMPLE_SECONDS (5)     sampling period
//   SOAK_OUT (<tmp>/soak.json)  where the samples and the verdict go
//   SOAK_DIST (dist/)           the build to soak, e.g. one compiled from a clean checkout of a
//                               commit while others rebuild this one's dist/ under it
//   SOAK_MISS_COOKIE=1          diagnostic: the unique-URL misses carry an unrelated cookie (still
//                               anonymous, still shared) so they skip the gateway's recv memo
//                               (src/steps/flow.ts), to tell the memo's cycle from a leak
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync, readlinkSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { request } from 'undici';
import { ensureBuilt, fmt, freePort, gateway, have, parseWrk, root, startProcess, waitFor, work } from './harness.mjs';
import { EXPECTED_STATUSES, soakVerdict, warmupSeconds } from './soak-verdict.mjs';

const SOAK_SECONDS = Number(process.env.SOAK_SECONDS ?? 600);
const RATE = Number(process.env.SOAK_RATE ?? 500);
const CONNECTIONS = Number(process.env.SOAK_CONNECTIONS ?? 16);
const SAMPLE_SECONDS = Number(process.env.SOAK_SAMPLE_SECONDS ?? 5);
const OUT = process.env.SOAK_OUT ?? path.join(work, 'soak.json');
const MISS_COOKIE = process.env.SOAK_MISS_COOKIE === '1';
const DIST = path.resolve(process.env.SOAK_DIST ?? path.join(root, 'dist'));
/**
 * How far the fd level at the end of the load (median of the last 6 samples, the sampler's own
 * admin connection not counted) may exceed the level at the end of the warm-up. Client sockets
 * are fixed (wrk keeps its connections open); what moves is the upstream pool: one socket per
 * concurrent fetch, idle ones closed after ~4 s, one in ten closed by the wiki. Measured at this
 * load it holds 2 to 11 sockets, around 5; a leak of one fd per leaked request would add hundreds
 * over the run. After the load, the count must come back to the idle level exactly.
 */
const FD_ALLOWANCE = 4;
/** A small byte budget so that eviction runs all the time in both tiers. */
const GATEWAY_ENV = {
  WIKIEDGE_CACHE_SHARED_MAX_BYTES: String(3 * 1024 * 1024),
  WIKIEDGE_CACHE_SESSION_MAX_BYTES: String(512 * 1024),
  // Entries expire during the run too: grace refreshes and dead-entry lookups are exercised.
  WIKIEDGE_TTL_PUBLIC_SECONDS: '30',
  WIKIEDGE_TTL_MAX_SECONDS: '30',
  // Not above the max (config/fields.ts NOT_ABOVE); the soak runs no change follower.
  WIKIEDGE_TTL_FOLLOWED_SECONDS: '30',
  // wrk's 16 connections stand for many clients but come from one address, asking in parallel:
  // the per-client budget of uncached requests would refuse them (429), as it should one client,
  // and its budget of bytes stored would keep most misses out of the tier the soak fills over.
  WIKIEDGE_CLIENT_MISS_RATE: '0',
  WIKIEDGE_CLIENT_STORE_BYTES_PER_SECOND: '0',
};

// ------------------------------------------------------------------------------------ sampling
/** TCP sockets of the process's network namespace: inode → ports and state. */
function tcpSockets(pid) {
  const byInode = new Map();
  for (const file of ['tcp', 'tcp6']) {
    let text = '';
    try {
      text = readFileSync(`/proc/${pid}/net/${file}`, 'utf8');
    } catch {
      continue;
    }
    for (const line of text.split('\n').slice(1)) {
      const f = line.trim().split(/\s+/);
      if (f.length < 10) continue;
      const port = (addr) => parseInt(addr.split(':').at(-1), 16);
      byInode.set(f[9], { local: port(f[1]), remote: port(f[2]), listen: f[3] === '0A' });
    }
  }
  return byInode;
}

/** VmRSS and open fds of `pid`, the sockets sorted by what they connect. */
function procSample(pid, ports) {
  const rssKB = Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]);
  const fds = readdirSync(`/proc/${pid}/fd`);
  const tcp = tcpSockets(pid);
  const kinds = { clients: 0, upstream: 0, admin: 0, listeners: 0, otherFds: 0 };
  for (const fd of fds) {
    let link = '';
    try {
      link = readlinkSync(`/proc/${pid}/fd/${fd}`);
    } catch {
      continue; // closed while we looked
    }
    const s = tcp.get(/^socket:\[(\d+)\]$/.exec(link)?.[1]);
    if (!s) kinds.otherFds++;
    else if (s.listen) kinds.listeners++;
    else if (s.local === ports.public) kinds.clients++;
    else if (s.remote === ports.upstream) kinds.upstream++;
    else if (s.local === ports.admin) kinds.admin++;
    else kinds.otherFds++;
  }
  return { rssKB, fds: fds.length, ...kinds };
}

/** The figures of /metrics the soak follows (absent ones are left out). */
async function metricsSample(adminUrl) {
  // reset: the connection closes after the answer, so the sampler holds no gateway fd between samples.
  const res = await request(`${adminUrl}/metrics`, { reset: true });
  const text = await res.body.text();
  const m = { requests: {}, cacheBytes: {}, cacheEntries: {}, evictions: 0, upstream: 0 };
  for (const line of text.split('\n')) {
    const p = /^(\w+)(?:\{([^}]*)\})?\s+(\S+)$/.exec(line);
    if (!p) continue;
    const [, name, labels = '', raw] = p;
    const v = Number(raw);
    const label = (k) => new RegExp(`${k}="([^"]*)"`).exec(labels)?.[1] ?? '-';
    if (name === 'wikiedge_requests_total') m.requests[label('disposition')] = (m.requests[label('disposition')] ?? 0) + v;
    else if (name === 'wikiedge_cache_bytes') m.cacheBytes[label('tier')] = v;
    else if (name === 'wikiedge_cache_entries') m.cacheEntries[label('tier')] = v;
    else if (name === 'wikiedge_cache_evictions_total') m.evictions += v;
    else if (name === 'wikiedge_upstream_requests_total') m.upstream += v;
    else if (name === 'nodejs_heap_size_used_bytes') m.heapUsed = v;
    else if (name === 'nodejs_heap_size_total_bytes') m.heapTotal = v;
    else if (name === 'nodejs_external_memory_bytes') m.external = v;
    else if (name === 'nodejs_heap_space_size_used_bytes') (m.spaceUsed ??= {})[label('space')] = v;
    else if (name === 'process_open_fds') m.promOpenFds = v;
    else if (name === 'nodejs_eventloop_lag_max_seconds') m.eventLoopLagMax = v;
  }
  return m;
}

/** Counts the gateway's warn and error log lines (pino levels 40 and ≥ 50), keeping a few. */
function watchLog(stream) {
  const log = { warn: 0, error: 0, examples: [] };
  createInterface({ input: stream }).on('line', (line) => {
    const level = Number(/"level":(\d+)/.exec(line)?.[1] ?? 0);
    if (level < 40) return;
    log[level >= 50 ? 'error' : 'warn']++;
    if (log.examples.length < 10) log.examples.push(line.slice(0, 600));
  });
  return log;
}

// ------------------------------------------------------------------------------------------ run
if (!have('wrk')) {
  console.error('wrk is required (apt-get install wrk)');
  process.exit(1);
}
if (!process.env.SOAK_DIST) ensureBuilt();
console.log(
  `# wikiedge soak ${new Date().toISOString()} · ${process.version} · ${SOAK_SECONDS} s at ~${RATE} req/s over ${CONNECTIONS} connections · warm-up ${warmupSeconds(SOAK_SECONDS)} s${MISS_COOKIE ? ' · misses with an unrelated cookie' : ''}`,
);

const upstreamPort = await freePort();
startProcess('fake-mediawiki', process.execPath, [path.join(root, 'bench/servers/fake-mediawiki.mjs'), String(upstreamPort)], { cpu: 1 });
await waitFor(`http://127.0.0.1:${upstreamPort}/w/api.php`);
// What was soaked: this checkout's dist/ is built from the working tree, which may differ from
// HEAD (and may be rebuilt by someone else meanwhile); SOAK_DIST names another build.
const git = (...args) => execFileSync('git', args, { cwd: DIST, encoding: 'utf8' }).trim();
let source = { dist: DIST };
try {
  source = {
    ...source,
    commit: git('rev-parse', 'HEAD'),
    uncommitted: git('status', '--porcelain', '--', '../src')
      .split('\n')
      .map((l) => l.trim())
      .filter(Boolean),
  };
} catch {
  /* not a git checkout: the dist path is all we know */
}
console.log(`source: ${JSON.stringify(source)}`);
const gw = await gateway(`http://127.0.0.1:${upstreamPort}`, GATEWAY_ENV, { stdout: 'pipe', main: path.join(DIST, 'main.js') });
const pid = gw.child.pid;
const ports = { public: Number(new URL(gw.url).port), admin: Number(new URL(gw.admin).port), upstream: upstreamPort };
const log = watchLog(gw.child.stdout);
let gatewayExit;
gw.child.on('exit', (code, signal) => (gatewayExit ??= { code, signal }));
console.log(`gateway pid ${pid} on ${gw.url} (admin ${gw.admin}), wiki stand-in on :${upstreamPort}; env ${JSON.stringify(GATEWAY_ENV)}`);

await new Promise((r) => setTimeout(r, 5000)); // the readiness probe's keep-alive socket goes idle
const idleBefore = procSample(pid, ports);

const delayMs = Math.max(1, Math.round((CONNECTIONS * 1000) / RATE));
const wrkArgs = [
  '-t1',
  `-c${CONNECTIONS}`,
  `-d${SOAK_SECONDS}s`,
  '--timeout',
  '5s',
  '--latency',
  '-s',
  path.join(root, 'bench/soak.lua'),
  gw.url,
  '--',
  String(delayMs),
  MISS_COOKIE ? 'misscookie' : '',
];
const t0 = performance.now();
const wrkChild = startProcess('wrk', 'wrk', wrkArgs, { cpu: 1, stdout: 'pipe' });
let wrkOut = '';
wrkChild.stdout.on('data', (d) => (wrkOut += d));
const wrkDone = new Promise((r) => wrkChild.on('exit', r));

const samples = [];
const head = `${'t s'.padStart(5)} ${'RSS MB'.padStart(7)} ${'heap MB'.padStart(7)} ${'fds'.padStart(4)} ${'cli'.padStart(4)} ${'up'.padStart(3)} ${'req/s'.padStart(6)}  ${'hit'.padStart(7)} ${'miss'.padStart(6)} ${'pass'.padStart(6)} ${'stale'.padStart(5)} ${'err'.padStart(5)} ${'shared KB'.padStart(9)} ${'sess KB'.padStart(7)} ${'evicted'.padStart(8)} ${'load'.padStart(5)} ${'steal'.padStart(5)} ${'lag ms'.padStart(6)} ${'late'.padStart(5)}`;
console.log(`\n${head}`);
let previous;
/**
 * What else the shared machine was doing: CPU time stolen by the hypervisor (all CPUs, jiffies of
 * 10 ms) and the 1-minute load average. With the sampler's own timer lateness, a stall of every
 * process on the machine can be told from a stall of the gateway alone.
 */
function machineSample() {
  const cpu = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).map(Number);
  return { stealJiffies: cpu[8], loadavg: Number(readFileSync('/proc/loadavg', 'utf8').split(' ')[0]) };
}

async function takeSample(samplerLateMs) {
  const t = (performance.now() - t0) / 1000;
  let proc;
  try {
    proc = procSample(pid, ports);
  } catch {
    return; // the gateway is gone: reported below
  }
  const metrics = await metricsSample(gw.admin).catch((err) => ({ failed: String(err) }));
  const machine = machineSample();
  const s = { t: Math.round(t * 10) / 10, ...proc, ...machine, samplerLateMs: Math.round(samplerLateMs), metrics };
  samples.push(s);
  const total = (x) => Object.values(x?.metrics?.requests ?? {}).reduce((a, b) => a + b, 0);
  const rps = previous ? (total(s) - total(previous)) / (s.t - previous.t) : NaN;
  // Stolen CPU over the interval, as a share of the machine's CPUs (2 here).
  const steal = previous ? (s.stealJiffies - previous.stealJiffies) / 100 / (s.t - previous.t) / cpus().length : NaN;
  const r = metrics.requests ?? {};
  console.log(
    `${fmt(s.t, 0).padStart(5)} ${fmt(s.rssKB / 1024, 1).padStart(7)} ${fmt(metrics.heapUsed / 2 ** 20, 1).padStart(7)} ${String(s.fds).padStart(4)} ${String(s.clients).padStart(4)} ${String(s.upstream).padStart(3)} ${fmt(rps, 0).padStart(6)}  ${String(r.hit ?? 0).padStart(7)} ${String(r.miss ?? 0).padStart(6)} ${String(r.pass ?? 0).padStart(6)} ${String(r.stale ?? 0).padStart(5)} ${String(r.error ?? 0).padStart(5)} ${fmt((metrics.cacheBytes?.shared ?? NaN) / 1024, 0).padStart(9)} ${fmt((metrics.cacheBytes?.session ?? NaN) / 1024, 0).padStart(7)} ${String(metrics.evictions ?? '-').padStart(8)} ${fmt(s.loadavg, 1).padStart(5)} ${`${fmt(steal * 100, 0)}%`.padStart(5)} ${fmt(metrics.eventLoopLagMax * 1000, 0).padStart(6)} ${String(s.samplerLateMs).padStart(5)}`,
  );
  previous = s;
}
let sampling = Promise.resolve();
let ticks = 0;
const timer = setInterval(() => {
  // How late this process's own timer fired: seconds of it mean the whole machine stalled.
  const late = performance.now() - t0 - ++ticks * SAMPLE_SECONDS * 1000;
  sampling = sampling.then(() => takeSample(late));
}, SAMPLE_SECONDS * 1000);
await wrkDone;
clearInterval(timer);
await sampling;
const ranSeconds = (performance.now() - t0) / 1000;

// After the load: client sockets are gone; idle pool sockets close within ~4 s.
await new Promise((r) => setTimeout(r, 8000));
let idleAfter;
try {
  idleAfter = procSample(pid, ports);
} catch {
  idleAfter = undefined;
}

// ---------------------------------------------------------------------------------------- report
const wrkReport = parseWrk(wrkOut);
const countsLine = /^SOAK_COUNTS (.*)$/m.exec(wrkOut)?.[1];
const counts = countsLine ? JSON.parse(countsLine) : { sent: {}, got: {} };
const verdict = soakVerdict({
  samples,
  runSeconds: SOAK_SECONDS,
  got: counts.got,
  socketErrors: wrkReport.socketErrors,
  gatewayErrorLines: log.error,
  idleBefore,
  idleAfter,
  fdAllowance: FD_ALLOWANCE,
});
if (gatewayExit) {
  verdict.pass = false;
  verdict.checks.push({ name: 'gateway alive', pass: false, detail: `exited during the run: ${JSON.stringify(gatewayExit)}` });
}
if (!countsLine) {
  verdict.pass = false;
  verdict.checks.push({ name: 'wrk counts', pass: false, detail: 'soak.lua printed no SOAK_COUNTS line' });
}

console.log(`\n## Requests by kind (wrk ${fmt(wrkReport.rps, 0)} req/s, p50 ${fmt(wrkReport.p50)} ms, p99 ${fmt(wrkReport.p99)} ms)`);
console.log(`${'kind'.padEnd(10)} ${'expected'.padEnd(9)} ${'sent'.padStart(8)} ${'answered'.padStart(9)} ${'unexpected'.padStart(10)}  statuses`);
for (const kind of new Set([...Object.keys(EXPECTED_STATUSES), ...Object.keys(verdict.table)])) {
  const row = verdict.table[kind] ?? { total: 0, byStatus: {}, unexpected: 0 };
  const statuses = Object.entries(row.byStatus)
    .map(([st, n]) => `${st}×${n}`)
    .join(' ');
  console.log(
    `${kind.padEnd(10)} ${(EXPECTED_STATUSES[kind] ?? ['-']).join(',').padEnd(9)} ${String(counts.sent[kind] ?? 0).padStart(8)} ${String(row.total).padStart(9)} ${String(row.unexpected).padStart(10)}  ${statuses}`,
  );
}
const se = wrkReport.socketErrors;
console.log(`socket errors: connect ${se.connect}, read ${se.read}, write ${se.write}, timeout ${se.timeout}`);
console.log(`gateway log: ${log.warn} warn, ${log.error} error lines${log.examples.length ? '; first:' : ''}`);
for (const line of log.examples.slice(0, 3)) console.log(`  ${line}`);
const last = samples.at(-1)?.metrics ?? {};
console.log(`gateway metrics at the end: requests ${JSON.stringify(last.requests)}, upstream requests ${last.upstream}, evictions ${last.evictions}`);
console.log(
  `fds idle before the load ${idleBefore.fds} (${JSON.stringify(idleBefore)}), idle 8 s after it ${idleAfter?.fds ?? 'n/a'} (${JSON.stringify(idleAfter)})`,
);

console.log('\n## Checks');
for (const c of verdict.checks) console.log(`${c.pass ? 'pass' : 'FAIL'}  ${c.name}: ${c.detail}`);
writeFileSync(
  OUT,
  JSON.stringify(
    {
      source,
      startedAt: new Date(Date.now() - ranSeconds * 1000).toISOString(),
      seconds: SOAK_SECONDS,
      ranSeconds,
      rate: RATE,
      connections: CONNECTIONS,
      delayMs,
      missCookie: MISS_COOKIE,
      gatewayEnv: GATEWAY_ENV,
      ports,
      idleBefore,
      idleAfter,
      wrk: wrkReport,
      wrkOutput: wrkOut,
      counts,
      log,
      verdict,
      samples,
    },
    null,
    2,
  ),
);
console.log(`\nsamples: ${OUT}`);
console.log(
  `${verdict.pass ? 'SOAK PASS' : 'SOAK FAIL'}: ${SOAK_SECONDS} s, ${Object.values(counts.got).reduce((a, b) => a + b, 0)} answers, RSS ${fmt(verdict.rssMinKB / 1024, 1)}–${fmt(verdict.rssMaxKB / 1024, 1)} MB after warm-up, fds ${verdict.fdWarm} → ${verdict.fdEnd} under load, ${idleBefore.fds - idleBefore.admin} → ${idleAfter ? idleAfter.fds - idleAfter.admin : 'n/a'} idle, ${verdict.errors} errors`,
);
process.exit(verdict.pass ? 0 : 1);
