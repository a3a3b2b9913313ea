// The shared tier on one Redis, on a Redis Cluster (3 masters + 3 replicas) and behind Sentinel
// (a primary, a replica, 3 Sentinels), side by side in one run: what each operation costs Redis
// (commands sent by the tier, counted at its client; commands Redis executed, scripts' own calls
// included, from INFO commandstats deltas; bytes and Redis CPU per operation from INFO stats and
// cpu deltas; all summed over the data nodes that take writes), and hit-shared and miss throughput of the tier
// (dist/cache/redis-tier.js, the code the gateway runs), with ratios to one Redis.
//
//   npm run build && node bench/redis-tier.mjs        (BENCH_SECONDS per throughput run, default 8)
//
// The operations, as the request path makes them (src/cache/tiered-storage.ts):
//   hit           a shared hit: the entry read (lookup after a local miss)
//   miss          lookup (absent), lock, mark, store, unlock: one fetch from the wiki, shared
//   store         mark and store of an answer fetched
//   invalidation  one tag invalidated (an edit), with the one entry that depends on it
// Servers run on CPU 0, this process on CPU 1 (as bench/harness.mjs does for the gateway). On a
// 2-core machine the cluster's six processes share one core: its throughput here is the cost of
// its protocol, not the capacity of three machines.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import pino from 'pino';
import { Registry } from 'prom-client';
import { ensureBuilt, fmt, freePort, root, SECONDS, startProcess, stopAll, work } from './harness.mjs';

ensureBuilt();
const { RedisTier } = await import(path.join(root, 'dist/cache/redis-tier.js'));
const { RedisMetrics } = await import(path.join(root, 'dist/observe/metrics.js'));

const REDIS_SERVER = '/usr/bin/redis-server';
const REDIS_CLI = '/usr/bin/redis-cli';
const CONCURRENCY = 32;
const OPS = 2_000;
/** Commands that are not the tier's own work: probes, topology, replication, the Sentinels' hellos. */
const BACKGROUND = /^(info|ping|replconf|psync|sync|cluster\|.*|client\|.*|command\|.*|config\|.*|role|hello|subscribe|quit|select|auth)$/;

try {
  execFileSync('taskset', ['-cp', '1', String(process.pid)], { stdio: 'ignore' });
} catch {
  // no taskset: unpinned
}

async function server(extra = [], name = 'redis') {
  const port = await freePort();
  const dir = mkdtempSync(path.join(work, 'redis-'));
  const child = startProcess(name, REDIS_SERVER, ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir, ...extra], {
    cpu: 0,
  });
  await answering(port);
  return { port, child, dir };
}

async function answering(port) {
  for (let i = 0; i < 200; i++) {
    const c = client(port);
    try {
      await c.connect();
      await c.ping();
      return;
    } catch {
      await sleep(25);
    } finally {
      c.disconnect();
    }
  }
  throw new Error(`redis on ${port} does not answer`);
}

function client(port) {
  const c = new Redis({ host: '127.0.0.1', port, lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
  c.on('error', () => undefined);
  return c;
}

async function ask(port, ...args) {
  const c = client(port);
  try {
    await c.connect();
    return String(await c.call(...args));
  } finally {
    c.disconnect();
  }
}

const until = async (what, check, boundMs = 60_000) => {
  const t0 = Date.now();
  while (!(await check().catch(() => false))) {
    if (Date.now() - t0 > boundMs) throw new Error(`${what}: not within ${boundMs} ms`);
    await sleep(100);
  }
};

// ------------------------------------------------------------------------------- backends
async function single() {
  const s = await server();
  return { name: 'one Redis', target: { kind: 'url', url: `redis://127.0.0.1:${s.port}`, username: '', password: '' }, dataPorts: async () => [s.port] };
}

async function cluster() {
  const nodes = [];
  for (let i = 0; i < 6; i++)
    nodes.push(await server(['--cluster-enabled', 'yes', '--cluster-config-file', 'nodes.conf', '--cluster-node-timeout', '2000'], 'cluster-node'));
  execFileSync(REDIS_CLI, ['--cluster', 'create', ...nodes.map((n) => `127.0.0.1:${n.port}`), '--cluster-replicas', '1', '--cluster-yes'], { stdio: 'ignore' });
  await until('cluster_state:ok', async () =>
    (await Promise.all(nodes.map((n) => ask(n.port, 'CLUSTER', 'INFO')))).every((i) => i.includes('cluster_state:ok')),
  );
  const masters = async () =>
    (await ask(nodes[0].port, 'CLUSTER', 'NODES'))
      .trim()
      .split('\n')
      .map((l) => l.split(' '))
      .filter((l) => l[2].includes('master'))
      .map((l) => Number(l[1].split(':')[1].split('@')[0]));
  return {
    name: 'Redis Cluster (3+3)',
    target: { kind: 'cluster', nodes: nodes.map((n) => ({ host: '127.0.0.1', port: n.port })), username: '', password: '', tls: false },
    dataPorts: masters,
  };
}

async function sentinel() {
  const primary = await server();
  await server(['--replicaof', '127.0.0.1', String(primary.port)], 'replica');
  const ports = [];
  for (let i = 0; i < 3; i++) {
    const port = await freePort();
    const dir = mkdtempSync(path.join(work, 'sentinel-'));
    const file = path.join(dir, 'sentinel.conf');
    writeFileSync(file, [`port ${port}`, 'bind 127.0.0.1', `dir ${dir}`, `sentinel monitor bench 127.0.0.1 ${primary.port} 2`, ''].join('\n'));
    startProcess('sentinel', REDIS_SERVER, [file, '--sentinel'], { cpu: 0 });
    await answering(port);
    ports.push(port);
  }
  await until('the Sentinels agree', async () => (await ask(ports[0], 'SENTINEL', 'ckquorum', 'bench')).includes('3 usable'));
  return {
    name: 'Sentinel (1+1, 3 Sentinels)',
    target: {
      kind: 'sentinel',
      sentinels: ports.map((port) => ({ host: '127.0.0.1', port })),
      name: 'bench',
      username: '',
      password: '',
      sentinelPassword: '',
      tls: false,
    },
    dataPorts: async () => [primary.port],
  };
}

// ---------------------------------------------------------------------------- measurement
/** Totals over the data nodes: calls per command, bytes in and out, CPU seconds. */
async function snapshot(ports) {
  const calls = new Map();
  let bytesIn = 0;
  let bytesOut = 0;
  let cpu = 0;
  for (const port of ports) {
    const text = await ask(port, 'INFO', 'everything');
    for (const m of text.matchAll(/cmdstat_([^:]+):calls=(\d+)/g)) calls.set(m[1], (calls.get(m[1]) ?? 0) + Number(m[2]));
    bytesIn += Number(/total_net_input_bytes:(\d+)/.exec(text)?.[1] ?? 0);
    bytesOut += Number(/total_net_output_bytes:(\d+)/.exec(text)?.[1] ?? 0);
    cpu += Number(/used_cpu_sys:([\d.]+)/.exec(text)?.[1] ?? 0) + Number(/used_cpu_user:([\d.]+)/.exec(text)?.[1] ?? 0);
  }
  return { calls, bytesIn, bytesOut, cpu };
}

function delta(before, after, ops) {
  const per = {};
  let total = 0;
  for (const [name, n] of after.calls) {
    if (BACKGROUND.test(name)) continue;
    const d = n - (before.calls.get(name) ?? 0);
    if (d <= 0) continue;
    per[name] = d / ops;
    total += d / ops;
  }
  return {
    commands: total,
    byCommand: per,
    bytesIn: (after.bytesIn - before.bytesIn) / ops,
    bytesOut: (after.bytesOut - before.bytesOut) / ops,
    cpuUs: ((after.cpu - before.cpu) * 1e6) / ops,
  };
}

let seq = 0;
const BODY = Buffer.alloc(2_000, 'x');
function entry(urlKey, deps) {
  return {
    status: 200,
    headers: { 'content-type': 'application/json', 'cache-control': 's-maxage=600' },
    body: BODY,
    storedAt: Date.now(),
    ttlMs: 600_000,
    urlKey,
    modules: ['query', 'revisions'],
    slot: undefined,
    deps: deps ?? ['*', `p:0:Page_${seq % 1000}`, 'n:0'],
  };
}

/** One miss as the request path makes it: lookup, lock, mark, store, unlock. */
async function miss(tier, key, urlKey) {
  await tier.get('shared', key);
  const lock = await tier.lock(key, 'shared');
  const mark = await tier.invalidationMark();
  await tier.set('shared', key, entry(urlKey), mark);
  if (lock.kind === 'won') await tier.unlock(key, lock.token);
}

/** `op` run `n` times, CONCURRENCY at a time. */
async function runMany(n, op) {
  let next = 0;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < n) await op(next++);
    }),
  );
}

/** `op` run for SECONDS, CONCURRENCY at a time: operations per second. */
async function throughput(op) {
  let done = 0;
  const end = Date.now() + SECONDS * 1000;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (Date.now() < end) await op(done++);
    }),
  );
  return done / SECONDS;
}

/** The tier on `backend`, with its sent-command counter and its error count. */
async function open(backend) {
  const errors = new Registry();
  const tier = new RedisTier({
    url: backend.target.kind === 'url' ? backend.target.url : '',
    target: backend.target,
    timeoutMs: 2_000,
    lockMs: 3_000,
    keyPrefix: 'bench:',
    windows: { graceMs: 0, staleIfErrorMs: 0 },
    now: Date.now,
    log: pino({ level: 'silent' }),
    metrics: new RedisMetrics(errors),
    onPurge: () => undefined,
  });
  if (!(await tier.ready(30_000))) throw new Error(`${backend.name}: the tier did not come up`);
  // Commands sent, counted where every one passes (a Cluster's pipelines included).
  const cmd = tier['connection'].cmd;
  const counter = { sent: 0 };
  const send = cmd.sendCommand.bind(cmd);
  cmd.sendCommand = (command, ...rest) => {
    if (!BACKGROUND.test(command.name.toLowerCase())) counter.sent++;
    return send(command, ...rest);
  };
  const failed = async () => (await errors.getSingleMetric('wikiedge_redis_errors_total').get()).values.reduce((a, v) => a + v.value, 0);
  return { ...backend, tier, counter, failed, run: `${Date.now()}-${backend.target.kind}` };
}

const hotKeys = (run) => Array.from({ length: 1_000 }, (_, i) => `/w/api.php?hot=${i}&r=${run}`);

async function costs(t) {
  const { tier, counter, run } = t;
  const ports = await t.dataPorts();
  const cost = {};
  const timed = async (name, n, op) => {
    const before = await snapshot(ports);
    const c0 = process.cpuUsage();
    const s0 = counter.sent;
    await runMany(n, op);
    const c1 = process.cpuUsage(c0);
    cost[name] = { ...delta(before, await snapshot(ports), n), sent: (counter.sent - s0) / n, clientUs: (c1.user + c1.system) / n };
  };
  const hot = hotKeys(run);
  await runMany(hot.length, async (i) => tier.set('shared', `${hot[i]}\nanon\n-`, entry(hot[i]), await tier.invalidationMark()));
  await timed('hit', OPS, (i) => tier.get('shared', `${hot[i % hot.length]}\nanon\n-`));
  await timed('miss', OPS, (i) => miss(tier, `/w/api.php?miss=${i}&r=${run}\nanon\n-`, `/w/api.php?miss=${i}&r=${run}`));
  await timed('store', OPS, async (i) => {
    const u = `/w/api.php?store=${i}&r=${run}`;
    await tier.set('shared', `${u}\nanon\n-`, entry(u), await tier.invalidationMark());
  });
  // One tag per invalidation, one entry depending on it (stored first, not counted).
  await runMany(OPS, async (i) => {
    const u = `/w/api.php?inv=${i}&r=${run}`;
    await tier.set('shared', `${u}\nanon\n-`, entry(u, [`p:0:Inv_${i}_${run}`]), await tier.invalidationMark());
  });
  await timed('invalidation', OPS, (i) => tier.purge({ kind: 'tags', tags: [`p:0:Inv_${i}_${run}`] }));
  return cost;
}

let round = 0;
async function rates(t) {
  const { tier, run } = t;
  const hot = hotKeys(run);
  const r = ++round;
  const hit = await throughput((i) => tier.get('shared', `${hot[i % hot.length]}\nanon\n-`));
  const missed = await throughput((i) => miss(tier, `/w/api.php?tmiss=${i}&x=${r}&r=${run}\nanon\n-`, `/w/api.php?tmiss=${i}&x=${r}&r=${run}`));
  return { hit, miss: missed };
}

const median = (xs) => xs.toSorted((a, b) => a - b)[Math.floor(xs.length / 2)];

// ------------------------------------------------------------------------------------ run
const ROUNDS = 3;
const results = [];
try {
  // All three at once, so that the throughput rounds can take turns (a busy machine, and the
  // client's JIT warming up, then weigh on each alike): the median of ROUNDS turns each.
  const tiers = [];
  for (const start of [single, cluster, sentinel]) tiers.push(await open(await start()));
  for (const t of tiers) results.push({ name: t.name, cost: await costs(t), hits: [], misses: [] });
  await rates(tiers[0]); // warm-up, not counted
  for (let k = 0; k < ROUNDS; k++) {
    // Each turn starts with another backend.
    for (let j = 0; j < tiers.length; j++) {
      const i = (j + k) % tiers.length;
      const r = await rates(tiers[i]);
      results[i].hits.push(r.hit);
      results[i].misses.push(r.miss);
    }
  }
  for (const [i, t] of tiers.entries()) {
    results[i].hitRate = median(results[i].hits);
    results[i].missRate = median(results[i].misses);
    results[i].failed = await t.failed();
    await t.tier.close();
  }
} finally {
  stopAll();
}

const base = results[0];
console.log(`\nredis-tier bench: ${OPS} operations each for the costs, ${SECONDS} s each for throughput, ${CONCURRENCY} concurrent\n`);
console.log(
  "Per operation: commands the tier sent; commands Redis executed (scripts' calls included), bytes in/out, Redis CPU µs, summed over the data nodes; client CPU µs:",
);
for (const op of ['hit', 'miss', 'store', 'invalidation']) {
  console.log(`  ${op}`);
  for (const r of results) {
    const c = r.cost[op];
    const top = Object.entries(c.byCommand)
      .sort((a, b) => b[1] - a[1])
      .map(([k, v]) => `${k} ${fmt(v)}`)
      .join(', ');
    console.log(
      `    ${r.name.padEnd(28)} ${fmt(c.sent).padStart(5)} sent ${fmt(c.commands).padStart(6)} run  ${fmt(c.bytesIn, 0).padStart(6)} B in ${fmt(c.bytesOut, 0).padStart(6)} B out  ${fmt(c.cpuUs, 1).padStart(6)} µs Redis  ${fmt(c.clientUs, 1).padStart(6)} µs client   (${top})`,
    );
  }
}
console.log(`\nThroughput (operations/s, the median of ${ROUNDS} turns of ${SECONDS} s; ratio to one Redis):`);
for (const r of results) {
  console.log(
    `  ${r.name.padEnd(28)} hit-shared ${fmt(r.hitRate, 0).padStart(7)} (${fmt(r.hitRate / base.hitRate)}×)   miss ${fmt(r.missRate, 0).padStart(7)} (${fmt(r.missRate / base.missRate)}×)   Redis errors ${r.failed}`,
  );
}
process.exit(0);
