// The change follower under a sustained change rate: BENCH_FOLLOWER_RATE (100) recentchanges rows
// a second for BENCH_FOLLOWER_SECONDS (60), written straight into the wiki's SQLite database (one
// transaction of rate/10 rows every 100 ms, by one long-lived sqlite3 process), while a gateway
// (dist/main.js, pinned to CPU 0) follows the wiki with WIKIEDGE_RC_POLL_MS (1000, the default).
// Figures: invalidation lag, from a batch's commit to the first /metrics scrape (every 25 ms)
// whose wikiedge_change_events_total{source="follower"} counts it, p50 / p99 / max; the
// gateway's CPU over the run (utime + stime from /proc, the whole process: the follower is all
// it does meanwhile, no client reads); its polls and gaps. Target (the issue): p99 <= 2 s.
//
//   BENCH_ONLY=follower npm run bench      as a section of bench/run.mjs
//   BENCH_WIKI_URL=… BENCH_WIKI_DATA=… node bench/follower.mjs   on a wiki made by scripts/wiki/setup.sh
import { execFileSync, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { request } from 'undici';
import { ensureBuilt, fmt, gateway, stopProcess } from './harness.mjs';

const RATE = Number(process.env.BENCH_FOLLOWER_RATE ?? 100);
const SECONDS = Number(process.env.BENCH_FOLLOWER_SECONDS ?? 60);
const POLL_MS = process.env.BENCH_FOLLOWER_POLL_MS ?? '1000';
const TICK_MS = 100;

const metric = (text, re) => Number(re.exec(text)?.[1] ?? NaN);
const cpuSeconds = (pid) => {
  const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(f[11]) + Number(f[12])) / 100; // utime, stime in clock ticks (USER_HZ 100)
};
const pct = (sorted, p) => (sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] : NaN);

export async function benchFollower(wikiUrl, data, record = () => undefined) {
  console.log(`\n## Follower: ${RATE} recentchanges rows/s for ${SECONDS} s written into the wiki's SQLite, poll ${POLL_MS} ms`);
  const db = path.join(data, 'db', 'wikiedge.sqlite');
  const gw = await gateway(
    wikiUrl,
    { WIKIEDGE_RC_FOLLOW: 'true', WIKIEDGE_RC_POLL_MS: POLL_MS, WIKIEDGE_LOG_LEVEL: 'warn' },
    process.env.BENCH_FOLLOWER_LOG ? { stdout: 'inherit' } : {},
  );
  const scrape = async () => await (await request(`${gw.admin}/metrics`)).body.text();
  const events = (m) => {
    let n = 0;
    for (const x of m.matchAll(/^wikiedge_change_events_total\{source="follower",type="[^"]*"\} (\d+)/gm)) n += Number(x[1]);
    return n;
  };
  for (let i = 0; metric(await scrape(), /^wikiedge_change_follower_up (\d+)/m) !== 1; i++) {
    if (i > 400) throw new Error('the follower never came up');
    await sleep(50);
  }
  const m0 = await scrape();
  const base = events(m0);
  const polls0 = metric(m0, /^wikiedge_change_follower_polls_total\{outcome="ok"\} (\d+)/m);
  const gaps0 = [...m0.matchAll(/^wikiedge_change_follower_gaps_total\{reason="[^"]*"\} (\d+)/gm)].reduce((a, x) => a + Number(x[1]), 0);
  // One sqlite3 for the whole run; it prints `done <rows so far>` after each COMMIT, whose
  // arrival time is taken as the batch's commit.
  const sqlite = spawn('sqlite3', ['-cmd', '.timeout 10000', db], { stdio: ['pipe', 'pipe', 'inherit'] });
  const batches = [];
  const commits = [];
  let written = 0;
  sqlite.stdout.setEncoding('utf8');
  sqlite.stdout.on('data', (chunk) => {
    for (const line of chunk.split('\n')) if (line.startsWith('done ')) commits.push({ n: Number(line.slice(5)), at: Date.now() });
  });
  const cpu0 = cpuSeconds(gw.child.pid);
  const t0 = Date.now();
  const per = Math.round((RATE * TICK_MS) / 1000);
  const writer = (async () => {
    for (let k = 0; Date.now() - t0 < SECONDS * 1000; k++) {
      const next = t0 + (k + 1) * TICK_MS;
      const first = written;
      written += per;
      sqlite.stdin.write(
        `BEGIN; WITH RECURSIVE n(x) AS (SELECT ${first} UNION ALL SELECT x + 1 FROM n WHERE x < ${written - 1}) ` +
          `INSERT INTO recentchanges (rc_timestamp, rc_actor, rc_namespace, rc_title, rc_comment_id, rc_type, rc_source, rc_ip) ` +
          `SELECT strftime('%Y%m%d%H%M%S', 'now'), 1, 0, 'Sustained_' || x, 1, 0, 'mw.edit', '127.0.0.1' FROM n; COMMIT; SELECT 'done ' || ${written};\n`,
      );
      batches.push({ n: written });
      await sleep(Math.max(0, next - Date.now()));
    }
  })();
  // The sampler: every 25 ms, how many follower events so far.
  const seen = [];
  let sampling = true;
  const sampler = (async () => {
    while (sampling) {
      const at = Date.now();
      seen.push({ n: events(await scrape()) - base, at });
      await sleep(25);
    }
  })();
  await writer;
  for (let i = 0; i < 200 && (seen.at(-1)?.n ?? 0) < written; i++) await sleep(50);
  sampling = false;
  await sampler;
  const cpu = cpuSeconds(gw.child.pid) - cpu0;
  const elapsed = (Date.now() - t0) / 1000;
  const m1 = await scrape();
  sqlite.stdin.end();
  await stopProcess(gw.child);
  // Its rows go (as $wgRCMaxAge would take them): the next run, or section, starts without them.
  execFileSync('sqlite3', ['-cmd', '.timeout 10000', db, "DELETE FROM recentchanges WHERE rc_title LIKE 'Sustained\\_%' ESCAPE '\\';"]);
  // Lag of each batch: its commit to the first sample that counts all its rows.
  const lags = [];
  let s = 0;
  for (const e of commits) {
    while (s < seen.length && (seen[s].n < e.n || seen[s].at < e.at)) s++;
    if (s < seen.length) lags.push((seen[s].at - e.at) / 1000);
  }
  lags.sort((a, b) => a - b);
  const polls = metric(m1, /^wikiedge_change_follower_polls_total\{outcome="ok"\} (\d+)/m) - polls0;
  const gaps = [...m1.matchAll(/^wikiedge_change_follower_gaps_total\{reason="[^"]*"\} (\d+)/gm)].reduce((a, x) => a + Number(x[1]), 0) - gaps0;
  const result = {
    rows: written,
    batches: batches.length,
    committed: commits.length,
    measured: lags.length,
    applied: seen.at(-1)?.n ?? 0,
    p50: pct(lags, 50),
    p99: pct(lags, 99),
    max: lags.at(-1),
    cpuPercent: (100 * cpu) / elapsed,
    polls,
    gaps,
    lagGauge: metric(m1, /^wikiedge_change_follower_lag_seconds (\S+)/m),
  };
  console.log(`  rows written ${result.rows} in ${result.batches} batches (${result.committed} commits timed); follower events ${result.applied}`);
  console.log(
    `  invalidation lag (commit → counted): p50 ${fmt(result.p50)} s, p99 ${fmt(result.p99)} s, max ${fmt(result.max)} s over ${result.measured} batches`,
  );
  console.log(`  gateway CPU ${fmt(result.cpuPercent, 1)} % of one core over ${fmt(elapsed, 1)} s; polls ${polls}; gaps ${gaps}`);
  record('follower', 'invalidation lag p50 / p99 / max (s)', `${fmt(result.p50)} / ${fmt(result.p99)} / ${fmt(result.max)}`);
  record('follower', 'gateway CPU (% of one core)', fmt(result.cpuPercent, 1));
  return result;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  ensureBuilt();
  if (!process.env.BENCH_WIKI_URL || !process.env.BENCH_WIKI_DATA) {
    console.error('set BENCH_WIKI_URL and BENCH_WIKI_DATA (scripts/wiki/setup.sh prints them), or run BENCH_ONLY=follower npm run bench');
    process.exit(1);
  }
  await benchFollower(process.env.BENCH_WIKI_URL, process.env.BENCH_WIKI_DATA);
  process.exit(0);
}
