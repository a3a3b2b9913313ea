// `promtool check metrics` has nothing to say about GET /metrics, from a single process and from
// a cluster primary (which sums its workers): Prometheus naming throughout (no gauge named
// `_total`, counters ending in `_total`, base units), and the Node.js and process metrics under
// the names every Node.js dashboard uses (process_cpu_seconds_total, nodejs_eventloop_lag_seconds,
// ...), not under the gateway's prefix. Skipped, saying why, only when promtool is missing
// (scripts/install-system-deps.sh installs it for the suite).
import { spawnSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeUpstream, startFakeUpstream } from '../support/fake-upstream.js';
import { type RunningGateway, startGateway } from '../support/gateway.js';
import { http } from '../support/http.js';
import { startRedis, type TestRedis } from '../support/redis.js';
import { built, type SpawnedGateway, spawnGateway } from '../support/spawned.js';

const probe = spawnSync('promtool', ['--version'], { encoding: 'utf8' });
const promtool = probe.status === 0;
const NO_PROMTOOL = 'promtool is not on the PATH (Debian: apt-get install --no-install-recommends prometheus; scripts/install-system-deps.sh)';

/** promtool's complaints about an exposition (it prints one line per problem, nothing when clean). */
function promtoolCheck(exposition: string): { status: number | null; output: string } {
  const r = spawnSync('promtool', ['check', 'metrics'], { input: exposition, encoding: 'utf8', timeout: 30_000 });
  return { status: r.status, output: `${r.stdout}${r.stderr}` };
}

/** family name -> TYPE */
function types(exposition: string): Map<string, string> {
  return new Map([...exposition.matchAll(/^# TYPE (\S+) (\S+)$/gm)].map((m) => [m[1]!, m[2]!]));
}

function publicWiki(): Promise<FakeUpstream> {
  return startFakeUpstream((req, res) => {
    res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 's-maxage=60, max-age=60, public' });
    res.end(`{"url":${JSON.stringify(req.url)}}`);
  });
}

/** Traffic that fills the labelled families: a miss, a hit, a pass, an error, a PURGE. */
async function traffic(url: string): Promise<void> {
  const q = `${url}/w/api.php?action=query&meta=siteinfo&format=json`;
  await http(q);
  await http(q);
  await http(`${url}/w/api.php?action=query&meta=userinfo&format=json`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: 'action=logout',
  });
  await http(`${url}/w/api.php/%zz`);
  await http(q, { method: 'PURGE' });
}

function expectClean(exposition: string): void {
  const r = promtoolCheck(exposition);
  expect(r.output).toBe('');
  expect(r.status).toBe(0);
  const t = types(exposition);
  for (const [name, type] of t) if (type !== 'counter') expect(name, `${name} is a ${type}`).not.toMatch(/_total$/);
  for (const name of [
    'process_cpu_seconds_total',
    'process_resident_memory_bytes',
    'nodejs_eventloop_lag_seconds',
    'nodejs_eventloop_lag_p99_seconds',
    'nodejs_heap_size_used_bytes',
    'nodejs_gc_duration_seconds',
    'nodejs_active_handles',
  ])
    expect(t.has(name), name).toBe(true);
  expect([...t.keys()].filter((n) => /^wikiedge_(process|nodejs)_/.test(n))).toEqual([]);
}

describe('GET /metrics of a single process, checked by promtool', () => {
  let fake: FakeUpstream;
  let redis: TestRedis;
  let gw: RunningGateway;
  beforeAll(async () => {
    fake = await publicWiki();
    // With Redis and the change follower configured: every family the gateway can export.
    redis = await startRedis();
    gw = await startGateway(fake.url, {
      WIKIEDGE_REDIS_URL: redis.url,
      WIKIEDGE_IDENTITY_SECRET: 'redis-tests-share-this-identity-secret',
      WIKIEDGE_RC_FOLLOW: 'true',
    });
    await traffic(gw.url);
  });
  afterAll(async () => {
    await gw?.close();
    await redis?.stop();
    await fake?.close();
  });

  it('promtool check metrics reports nothing; Node.js metrics under their standard names', async (ctx) => {
    if (!promtool) return ctx.skip(NO_PROMTOOL);
    const body = (await http(`${gw.adminUrl}/metrics`)).body;
    expect(body).toContain('wikiedge_redis_up');
    expect(body).toMatch(/^wikiedge_requests_total\{[^}]*code="200"\} /m);
    expectClean(body);
  });
});

describe('GET /metrics of a cluster primary (WIKIEDGE_WORKERS=2), checked by promtool', () => {
  let fake: FakeUpstream;
  let gw: SpawnedGateway | undefined;
  beforeAll(async () => {
    if (!built || !promtool) return;
    fake = await publicWiki();
    gw = await spawnGateway(fake.url, { WIKIEDGE_WORKERS: '2' });
    await traffic(gw.url);
  });
  afterAll(async () => {
    if (gw) {
      gw.child.kill('SIGTERM');
      await gw.exited;
    }
    await fake?.close();
  });

  it('promtool check metrics reports nothing on the summed exposition', async (ctx) => {
    if (!promtool) return ctx.skip(NO_PROMTOOL);
    if (!built) return ctx.skip('dist/main.js is not built (npm run build): the cluster runs the built gateway');
    const body = (await http(`${gw!.adminUrl}/metrics`)).body;
    expectClean(body);
    // Summed across workers, but a build is a build: 1, not the number of workers.
    expect(body).toMatch(/^wikiedge_build_info\{[^}]*\} 1$/m);
  });
});
