// What the bench runner (run.mjs) and the soak (soak.mjs) share: processes started on loopback
// and stopped on exit, free ports, readiness polling, wrk, the gateway from dist/, a throw-away
// MediaWiki. Servers under test go on CPU 0, load generators and upstreams on CPU 1.
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { request } from 'undici';

export const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
/** Length of each bench wrk run (BENCH_SECONDS, default 8). */
export const SECONDS = Number(process.env.BENCH_SECONDS ?? 8);
/** A scratch folder for this run (configs, results, the throw-away wiki). */
export const work = mkdtempSync(path.join(tmpdir(), 'wikiedge-bench-'));
const started = [];

export function have(cmd) {
  try {
    execFileSync('sh', ['-c', `command -v ${cmd}`], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

export async function freePort() {
  const s = createServer();
  await new Promise((r) => s.listen(0, '127.0.0.1', r));
  const { port } = s.address();
  await new Promise((r) => s.close(r));
  return port;
}

/**
 * Spawn a process (pinned to `cpu` with taskset, which execs it: the pid is the command's), in a
 * process group of its own: stopping it stops what it forked too (nginx's workers and cache
 * manager, Varnish's child), and a Ctrl-C in the terminal reaches the bench alone, which then
 * stops every group it started (the exit handler below).
 */
export function startProcess(name, cmd, args, { cpu, env, stdout = 'ignore' } = {}) {
  const full = cpu !== undefined ? ['taskset', ['-c', String(cpu), cmd, ...args]] : [cmd, args];
  const child = spawn(full[0], full[1], { env: { ...process.env, ...env }, stdio: ['ignore', stdout, 'inherit'], detached: true });
  started.push({ name, child });
  return child;
}

/** `signal` to the process group of `child` (startProcess made it a group's leader); false when it is gone. */
function signalGroup(child, signal) {
  try {
    process.kill(-child.pid, signal);
    return true;
  } catch {
    return false;
  }
}

/** SIGTERM one started process's group and wait until it is gone (SIGKILL after 10 s), so the next one gets its CPU. */
export async function stopProcess(child) {
  const at = started.findIndex((s) => s.child === child);
  if (at >= 0) started.splice(at, 1);
  if (child.exitCode !== null || child.signalCode !== null) {
    signalGroup(child, 'SIGKILL'); // what it forked may outlive it
    return;
  }
  const exited = new Promise((resolve) => child.once('exit', resolve));
  signalGroup(child, 'SIGTERM');
  signalGroup(child, 'SIGCONT');
  const killer = setTimeout(() => signalGroup(child, 'SIGKILL'), 10_000);
  await exited;
  clearTimeout(killer);
  signalGroup(child, 'SIGKILL'); // a leader gone before its group: nothing of it stays
}

/** SIGTERM every process group started here that still runs, newest first, and forget it. */
export function stopAll() {
  for (const { child } of started.reverse()) {
    // A candidate the hit section stopped (SIGSTOP) while another was measured takes its
    // SIGTERM only once continued.
    if (signalGroup(child, 'SIGTERM')) signalGroup(child, 'SIGCONT');
  }
  started.length = 0;
}
process.on('exit', stopAll);
process.on('SIGINT', () => process.exit(130));
process.on('SIGTERM', () => process.exit(143));
process.on('SIGHUP', () => process.exit(129));

export async function waitFor(url, tries = 100) {
  for (let i = 0; i < tries; i++) {
    try {
      const res = await request(url);
      await res.body.dump();
      if (res.statusCode < 500) return;
    } catch {
      /* not up yet */
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${url} did not come up`);
}

/** The figures of wrk's report: req/s, latency percentiles in ms, non-2xx/3xx, socket errors. */
export function parseWrk(out) {
  const rps = Number(/Requests\/sec:\s+([\d.]+)/.exec(out)?.[1] ?? NaN);
  const pct = (p) => {
    const m = new RegExp(`\\s${p}%\\s+([\\d.]+)(us|ms|s)`).exec(out);
    if (!m) return NaN;
    return Number(m[1]) * (m[2] === 'us' ? 0.001 : m[2] === 's' ? 1000 : 1);
  };
  const non2xx = Number(/Non-2xx or 3xx responses:\s+(\d+)/.exec(out)?.[1] ?? 0);
  const e = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(out);
  const socketErrors = e ? { connect: +e[1], read: +e[2], write: +e[3], timeout: +e[4] } : { connect: 0, read: 0, write: 0, timeout: 0 };
  const requests = Number(/(\d+) requests in/.exec(out)?.[1] ?? NaN);
  return { rps, requests, p50: pct(50), p99: pct(99), non2xx, socketErrors };
}

/** 2 s (or `seconds`) of the same requests, unmeasured (a bare URL would hit the wiki's front page through the gateway). */
export function warmUp(url, { connections = 50, script, seconds = 2 } = {}) {
  execFileSync('taskset', ['-c', '1', 'wrk', '-t1', `-c${connections}`, `-d${seconds}s`, ...(script ? ['-s', script] : []), url], { stdio: 'ignore' });
}

/** wrk on CPU 1 after a warm-up (`warmup: false`: the caller did it); returns req/s and latency percentiles in ms. */
export function wrk(url, { seconds = SECONDS, connections = 50, script, warmup = true } = {}) {
  const args = ['-c', '1', 'wrk', '-t1', `-c${connections}`, `-d${seconds}s`, '--latency'];
  if (script) args.push('-s', script);
  args.push(url);
  if (warmup) warmUp(url, { connections, script });
  return parseWrk(execFileSync('taskset', args, { encoding: 'utf8' }));
}

export const fmt = (n, d = 2) => (Number.isFinite(n) ? n.toFixed(d) : 'n/a');

/**
 * dist/main.js (or `main`) on CPU 0 (`cpu: null`: unpinned), on free loopback ports, node started
 * with `nodeArgs` (`--cpu-prof`, a preload); resolves once its admin /healthz answers.
 */
export async function gateway(upstream, extraEnv = {}, { stdout = 'ignore', main = path.join(root, 'dist/main.js'), cpu = 0, nodeArgs = [] } = {}) {
  const [port, admin] = [await freePort(), await freePort()];
  extraEnv = settingsKnownBy(main, extraEnv);
  const child = startProcess('gateway', process.execPath, [...nodeArgs, main], {
    cpu: cpu ?? undefined,
    stdout,
    env: {
      MALLOC_MMAP_THRESHOLD_: '131072', // as the image and `npm start` run it
      WIKIEDGE_UPSTREAM: upstream,
      WIKIEDGE_HOST: '127.0.0.1',
      WIKIEDGE_PORT: String(port),
      WIKIEDGE_ADMIN_PORT: String(admin),
      ...extraEnv,
    },
  });
  await waitFor(`http://127.0.0.1:${admin}/healthz`);
  return { url: `http://127.0.0.1:${port}`, admin: `http://127.0.0.1:${admin}`, child };
}

/**
 * `env` without the WIKIEDGE_ settings the build of `main` does not know: a baseline built from an
 * older commit refuses an unknown key (config/load.ts), and a setting that turns off what it lacks
 * (WIKIEDGE_CLIENT_STORE_BYTES_PER_SECOND=0 before the store budget) means the same left out.
 */
function settingsKnownBy(main, env) {
  const dir = path.join(path.dirname(main), 'config');
  if (!existsSync(dir)) return env;
  const text = readdirSync(dir)
    .filter((f) => f.endsWith('.js'))
    .map((f) => readFileSync(path.join(dir, f), 'utf8'))
    .join('\n');
  return Object.fromEntries(Object.entries(env).filter(([key]) => !key.startsWith('WIKIEDGE_') || new RegExp(`['"\`]${key}['"\`]`).test(text)));
}

/** A throw-away MediaWiki (scripts/wiki/setup.sh, debug toolbar off) for the length of `fn`. */
export async function withWiki(fn) {
  const data = path.join(work, 'wiki');
  const out = execFileSync('bash', [path.join(root, 'scripts/wiki/setup.sh'), '--data', data, '--no-debug'], { encoding: 'utf8' });
  const wikiUrl = /WIKI_URL=(\S+)/.exec(out)[1];
  try {
    await fn(wikiUrl, data);
  } finally {
    execFileSync('bash', [path.join(root, 'scripts/wiki/stop.sh'), data, '--purge'], { stdio: 'ignore' });
  }
}

/** The wiki's request log lines so far (one per request it served). */
export const wikiLines = (data) => {
  const f = path.join(data, 'logs/requests.log');
  return existsSync(f) ? readFileSync(f, 'utf8').split('\n').filter(Boolean) : [];
};

/** Build dist/ when it is missing. */
export function ensureBuilt() {
  if (!existsSync(path.join(root, 'dist/main.js'))) execFileSync('npm', ['run', 'build'], { cwd: root, stdio: 'inherit' });
}

/** mulberry32: the same sequence every run (the Zipf benches' workloads). */
export function prng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A Zipf(s=1) sampler over indexes 0..n-1 (index 0 the most read). */
export function zipf(n, random) {
  const cdf = new Float64Array(n);
  let sum = 0;
  for (let k = 0; k < n; k++) cdf[k] = sum += 1 / (k + 1);
  return () => {
    const u = random() * sum;
    let lo = 0;
    let hi = n - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (cdf[mid] < u) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  };
}
