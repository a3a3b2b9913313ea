// The gateway on every core beside Varnish on every core: `BENCH_ONLY=all-cores npm run bench`
// (not in the default set). The gateway with WIKIEDGE_WORKERS = os.cpus().length (its
// node:cluster mode: a primary and that many workers, each with its own local tier) and Varnish
// 7.1 with its default thread pools and its builtin VCL, in front of the stand-in wiki of the
// miss-throughput section (bench/servers/miss-api.mjs: a 2,127-byte answer MediaWiki marks
// public, answered at once). Per candidate and round:
//
//   hits     one URL, filled and then warmed for BENCH_WARMUP_SECONDS (6) with the load itself
//            (a cluster's workers each fill their own tier: the warm-up's connections reach
//            them all), then BENCH_SECONDS of wrk -t2 -c50, the hit section's connections and
//            its one URL without a script (wrk runs no Lua per request: it shares the cores,
//            and every µs it spends is taken from the server); a sample of fresh connections
//            after it says whether they were hits;
//   misses   every request a new URL (bench/miss-urls.lua, one prefix per wrk thread), 16
//            connections as miss-throughput, BENCH_MISS_WARMUP_SECONDS (6) of it unmeasured,
//            then BENCH_SECONDS measured;
//
// and for each load the requests per second, the CPU per request of the server's whole process
// tree (the cluster's primary and workers; Varnish's manager and child), of the stand-in's, and
// of wrk's (this process's reaped children, /proc/self/stat).
//
// Nothing is pinned, and that is the point of the section: the servers, the stand-in and wrk
// share both cores, and the scheduler places every thread. The load generator and the stand-in
// take CPU from the server under test: the requests per second are those of a 2-core host that
// also runs its clients and its wiki, not of the server alone. Pinning wrk and the stand-in to
// one core would give the server a whole core of its own and only what they leave of the other,
// which is neither "all cores" nor the same share for two servers whose threads the scheduler
// places differently; CPU per request (each tree's own) is the figure that does not depend on
// the sharing. wrk runs two threads (-t2) so that it is not held to one core while a server
// waits on it.
//
// Fresh processes every round, started and measured in an order rotated every round; the gateway
// is stopped (SIGSTOP, its whole tree) while Varnish is measured (Varnish is never stopped: its
// manager restarts a child that misses its pings). Medians of BENCH_ROUNDS (3) rounds, and the
// medians of the per-round ratios gateway ÷ Varnish.
import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import os from 'node:os';
import path from 'node:path';
import { Client, request } from 'undici';
import { ensureCaches, startVarnish } from './caches.mjs';
import { SECONDS, fmt, freePort, gateway, parseWrk, root, startProcess, stopProcess, waitFor, work } from './harness.mjs';
import { median, reapedChildrenCpuSeconds, signalTree, treeCpuSeconds } from './proc.mjs';
import { ANSWER_BYTES } from './servers/miss-api.mjs';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const WARMUP_SECONDS = Number(process.env.BENCH_WARMUP_SECONDS ?? 6);
const MISS_WARMUP_SECONDS = Number(process.env.BENCH_MISS_WARMUP_SECONDS ?? 6);
const HIT_CONNECTIONS = 50;
const MISS_CONNECTIONS = 16;
const THREADS = 2;
/** Fresh connections asked for the hit URL after the hit load, to see that it was hits. */
const HIT_SAMPLE = 20;
const QUERY = '/w/api.php?action=query&meta=siteinfo&format=json&requestid=';
/** As run.mjs MANY_CLIENTS: one loopback address plays many readers; the limits have their own section. */
const MANY_CLIENTS = { WIKIEDGE_CLIENT_MAX_CONCURRENCY: '0', WIKIEDGE_CLIENT_MISS_RATE: '0', WIKIEDGE_CLIENT_STORE_BYTES_PER_SECOND: '0' };
const CPUS = os.cpus().length;
const GATEWAY = `wikiedge, WIKIEDGE_WORKERS=${CPUS} (node:cluster)`;
const VARNISH = 'Varnish 7.1, default thread pools';
const run = randomUUID().slice(0, 8);

/** wrk -t2, unpinned, `args` before the URL; the parsed report and the CPU seconds wrk used. */
function wrkRun(connections, seconds, args, url, scriptArgs = []) {
  const cpu = reapedChildrenCpuSeconds();
  const out = execFileSync('wrk', [`-t${THREADS}`, `-c${connections}`, `-d${seconds}s`, ...args, url, ...(scriptArgs.length ? ['--', ...scriptArgs] : [])], {
    encoding: 'utf8',
  });
  const r = parseWrk(out);
  return { ...r, failed: r.non2xx + Object.values(r.socketErrors).reduce((a, b) => a + b, 0), wrkCpu: reapedChildrenCpuSeconds() - cpu };
}

/** `seconds` of `load`, with each tree's CPU µs per request over it (the server's, the stand-in's, wrk's). */
function measured(c, standPid, load) {
  const server = treeCpuSeconds(c.pid);
  const stand = treeCpuSeconds(standPid);
  const r = load();
  const per = (seconds) => (seconds * 1e6) / r.requests;
  return {
    rps: r.rps,
    requests: r.requests,
    failed: r.failed,
    cpuUs: per(treeCpuSeconds(c.pid) - server),
    standUs: per(treeCpuSeconds(standPid) - stand),
    wrkUs: per(r.wrkCpu),
  };
}

/**
 * Of `HIT_SAMPLE` requests for `url`, each on a connection of its own (the cluster's primary hands
 * each new one to the next worker), how many the server answered from its cache.
 */
async function hitsOf(url) {
  const { origin, pathname, search } = new URL(url);
  let hits = 0;
  for (let i = 0; i < HIT_SAMPLE; i++) {
    const client = new Client(origin);
    const r = await client.request({ method: 'GET', path: `${pathname}${search}` });
    const body = Buffer.from(await r.body.arrayBuffer());
    await client.close();
    if (r.statusCode !== 200 || body.length !== ANSWER_BYTES) throw new Error(`${url}: ${r.statusCode}, ${body.length} bytes`);
    const xcache = String(r.headers['x-cache'] ?? '');
    const varnishHit = String(r.headers['x-varnish'] ?? '').split(' ').length === 2; // the request's id and the object's
    if (xcache.startsWith('hit') || varnishHit) hits++;
  }
  return hits;
}

/** One candidate's figures for one round. */
async function measure(c, standPid, round) {
  const prefix = `${run}-${round}-${c.name.replace(/\W+/g, '')}`;
  const hitUrl = `${c.url}${QUERY}${prefix}-hit`;
  await request(hitUrl).then((r) => r.body.dump());
  wrkRun(HIT_CONNECTIONS, WARMUP_SECONDS, [], hitUrl);
  const hit = measured(c, standPid, () => wrkRun(HIT_CONNECTIONS, SECONDS, [], hitUrl));
  hit.sampled = await hitsOf(hitUrl);
  const script = ['-s', path.join(root, 'bench/miss-urls.lua')];
  wrkRun(MISS_CONNECTIONS, MISS_WARMUP_SECONDS, script, `${c.url}${QUERY}`, [`${prefix}-w`]);
  const miss = measured(c, standPid, () => wrkRun(MISS_CONNECTIONS, SECONDS, script, `${c.url}${QUERY}`, [`${prefix}-m`]));
  return { hit, miss };
}

/** One round's two servers, unpinned, started in an order rotated every round. */
async function startCandidates(upstreamPort, round) {
  const upstream = `http://127.0.0.1:${upstreamPort}`;
  const probe = `${QUERY}${run}-probe-${round}`;
  const starters = [
    async () => {
      const g = await gateway(upstream, { ...MANY_CLIENTS, WIKIEDGE_WORKERS: String(CPUS) }, { cpu: null });
      await waitFor(`${g.url}${probe}`); // the admin port is the primary's: the workers may still be starting
      return { name: GATEWAY, url: g.url, pid: g.child.pid, child: g.child };
    },
    async () => ({
      name: VARNISH,
      // Varnish's builtin VCL and thread pools; storage the size of the gateway's shared budget (256 MiB).
      ...(await startVarnish({ upstreamPort, dir: path.join(work, `all-cores-varnish-${round}`), probe, storage: 'malloc,256m', cpu: null })),
    }),
  ];
  const candidates = new Array(starters.length);
  for (let i = 0; i < starters.length; i++) {
    const at = (i + round) % starters.length;
    candidates[at] = await starters[at]();
  }
  return candidates;
}

export async function benchAllCores(row) {
  console.log(
    `\n## All cores: the gateway with WIKIEDGE_WORKERS=${CPUS} beside Varnish with its default thread pools (a ${ANSWER_BYTES}-byte answer; nothing pinned: the servers, the stand-in and wrk -t${THREADS} share the ${CPUS} cores, so the load generator and the stand-in take CPU from the server measured; ${ROUNDS} rounds, fresh processes each, interleaved; medians)`,
  );
  const [l1, l5, l15] = os.loadavg();
  console.log(`  load average at the start: ${fmt(l1)} ${fmt(l5)} ${fmt(l15)} (${CPUS} CPUs)`);
  const tools = ensureCaches(['varnishd', 'wrk']);
  if (!tools.has('varnishd') || !tools.has('wrk')) {
    console.log('  (needs varnishd and wrk: skipped)');
    return;
  }
  const upstreamPort = await freePort();
  const stand = startProcess('miss-api', process.execPath, [path.join(root, 'bench/servers/miss-api.mjs'), String(upstreamPort)]);
  const results = new Map();
  try {
    await waitFor(`http://127.0.0.1:${upstreamPort}/w/api.php`);
    for (let round = 0; round < ROUNDS; round++) {
      const candidates = await startCandidates(upstreamPort, round);
      try {
        for (let i = 0; i < candidates.length; i++) {
          const c = candidates[(i + round) % candidates.length];
          const others = candidates.filter((o) => o !== c && o.name !== VARNISH);
          for (const o of others) signalTree(o.pid, 'SIGSTOP');
          try {
            if (!results.has(c.name)) results.set(c.name, []);
            results.get(c.name).push(await measure(c, stand.pid, round));
          } finally {
            for (const o of others) signalTree(o.pid, 'SIGCONT');
          }
        }
      } finally {
        await Promise.all(candidates.map((c) => stopProcess(c.child)));
      }
      console.log(`  round ${round + 1} of ${ROUNDS} done (load average ${fmt(os.loadavg()[0])})`);
    }
    if (results.size === 2) report(row, results);
  } finally {
    await stopProcess(stand);
  }
  const [e1, e5, e15] = os.loadavg();
  console.log(`  load average at the end: ${fmt(e1)} ${fmt(e5)} ${fmt(e15)}`);
}

/** The rows, and the same as markdown tables (docs/BENCHMARKS.md). */
function report(row, results) {
  const mid = (name, f) => median(results.get(name).map(f));
  const rounds = (name, f, d = 0) =>
    results
      .get(name)
      .map((r) => fmt(f(r), d))
      .join(' · ');
  const table = [
    `| | hits/s, wrk -t${THREADS} -c${HIT_CONNECTIONS} (rounds) | CPU µs per hit: server / stand-in / wrk | misses/s, wrk -t${THREADS} -c${MISS_CONNECTIONS} (rounds) | CPU µs per miss: server / stand-in / wrk |`,
    '|---|---|---|---|---|',
  ];
  for (const name of results.keys()) {
    const cpu = (k) =>
      `${fmt(
        mid(name, (r) => r[k].cpuUs),
        1,
      )} / ${fmt(
        mid(name, (r) => r[k].standUs),
        1,
      )} / ${fmt(
        mid(name, (r) => r[k].wrkUs),
        1,
      )}`;
    const failed = (k) => results.get(name).reduce((s, r) => s + r[k].failed, 0);
    const sampled = results
      .get(name)
      .map((r) => r.hit.sampled)
      .join(' · ');
    const hitRps = mid(name, (r) => r.hit.rps);
    const missRps = mid(name, (r) => r.miss.rps);
    row(
      'all-cores',
      `${name}: hits/s`,
      fmt(hitRps, 0),
      `rounds ${rounds(name, (r) => r.hit.rps)}; hits in ${HIT_SAMPLE} fresh connections after: ${sampled}${failed('hit') ? `; ${failed('hit')} failed` : ''}`,
    );
    row('all-cores', '  CPU µs per hit: server / stand-in / wrk', cpu('hit'), `server rounds ${rounds(name, (r) => r.hit.cpuUs, 1)}`);
    row('all-cores', '  misses/s', fmt(missRps, 0), `rounds ${rounds(name, (r) => r.miss.rps)}${failed('miss') ? `; ${failed('miss')} failed` : ''}`);
    row('all-cores', '  CPU µs per miss: server / stand-in / wrk', cpu('miss'), `server rounds ${rounds(name, (r) => r.miss.cpuUs, 1)}`);
    table.push(
      `| ${name} | **${fmt(hitRps, 0)}** (${rounds(name, (r) => r.hit.rps)}) | ${cpu('hit')} | **${fmt(missRps, 0)}** (${rounds(name, (r) => r.miss.rps)}) | ${cpu('miss')} |`,
    );
  }
  // Per-round ratios (both servers measured a minute apart at most), then their median.
  const ratio = (f) => median(results.get(GATEWAY).map((r, i) => f(r) / f(results.get(VARNISH)[i])));
  const perRound = (f) =>
    results
      .get(GATEWAY)
      .map((r, i) => fmt(f(r) / f(results.get(VARNISH)[i])))
      .join(' · ');
  const measures = [(r) => r.hit.rps, (r) => r.hit.cpuUs, (r) => r.miss.rps, (r) => r.miss.cpuUs];
  const cells = measures.map((f) => `${fmt(ratio(f))} (${perRound(f)})`);
  row('all-cores', `${GATEWAY} ÷ ${VARNISH}`, '', `hits/s ${cells[0]}; CPU per hit ${cells[1]}; misses/s ${cells[2]}; CPU per miss ${cells[3]}`);
  const ratioTable = [
    '| ratio (median of the per-round ratios) | hits/s | CPU per hit | misses/s | CPU per miss |',
    '|---|---|---|---|---|',
    `| ${GATEWAY} ÷ ${VARNISH} | ${cells.join(' | ')} |`,
  ];
  console.log(
    `\n${table.join('\n')}\n\n${ratioTable.join('\n')}\n\n  (wrk and the stand-in ran on the same ${CPUS} cores as the server: their CPU per request is what each request took from it)\n`,
  );
}
