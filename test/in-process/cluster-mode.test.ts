// WIKIEDGE_WORKERS=2: two workers serve the public port; the primary's admin listener sums their
// metrics, sends purges to both, restarts a worker that dies, and exits 0 on SIGTERM. With Redis
// the workers share it as replicas do, and the Redis purge happens once.
import type { ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeUpstream, startFakeUpstream } from '../support/fake-upstream.js';
import { header, http } from '../support/http.js';
import { startRedis, type TestRedis } from '../support/redis.js';
import { built, spawnGateway } from '../support/spawned.js';

/** One answer, and which worker gave it (request ids start with a random per-process prefix). */
interface Served {
  status: number;
  cache: string | undefined;
  worker: string;
}

interface RunningCluster {
  readonly child: ChildProcess;
  readonly adminUrl: string;
  readonly exited: Promise<number | null>;
  readonly logs: Record<string, unknown>[];
  stderr(): string;
  /** Pids of the workers that came up, in order (the primary logs each). */
  listening(): number[];
  /** A request on a connection of its own, so that either worker may take it. */
  get(query: string): Promise<Served>;
  /** PURGE from loopback to whichever worker takes the connection; its status. */
  purge(query: string): Promise<number>;
  /** Send the query until both workers have answered it; the answers in order. */
  fromBothWorkers(query: string): Promise<Served[]>;
  /** The sum of every wikiedge_requests_total series on the admin /metrics. */
  requestsTotal(): Promise<number>;
  metrics(): Promise<string>;
}

async function startCluster(upstream: string, env: Record<string, string> = {}): Promise<RunningCluster> {
  const gw = await spawnGateway(upstream, { WIKIEDGE_WORKERS: '2', WIKIEDGE_LOG_HITS: 'false', ...env });
  const { child, exited, url: publicUrl, adminUrl } = gw;
  /** The complete JSON lines written so far (a line may still be on its way). */
  const lines = () =>
    gw
      .stdout()
      .split('\n')
      .slice(0, -1)
      .filter(Boolean)
      .map((l) => JSON.parse(l) as Record<string, unknown>);
  const listening = () =>
    lines()
      .filter((l) => l['msg'] === 'worker listening')
      .map((l) => l['pid'] as number);

  const get = async (query: string): Promise<Served> => {
    const res = await http(`${publicUrl}/w/api.php?${query}`, { headers: { connection: 'close' } });
    return { status: res.status, cache: header(res, 'x-cache'), worker: (header(res, 'x-request-id') ?? '').split('-')[0]! };
  };
  const metrics = async () => (await http(`${adminUrl}/metrics`)).body;
  const cluster: RunningCluster = {
    child,
    adminUrl,
    exited,
    get logs() {
      return lines();
    },
    stderr: gw.stderr,
    listening,
    get,
    metrics,
    async purge(query) {
      return (await http(`${publicUrl}/w/api.php?${query}`, { method: 'PURGE', headers: { connection: 'close' } })).status;
    },
    async fromBothWorkers(query) {
      const answers: Served[] = [];
      for (let i = 0; i < 100 && new Set(answers.map((a) => a.worker)).size < 2; i++) answers.push(await get(query));
      expect(new Set(answers.map((a) => a.worker)).size).toBe(2);
      return answers;
    },
    async requestsTotal() {
      let sum = 0;
      for (const m of (await metrics()).matchAll(/^wikiedge_requests_total\{[^}]*\} (\d+)$/gm)) sum += Number(m[1]);
      return sum;
    },
  };
  await until(async () => (await http(`${adminUrl}/readyz`).catch(() => undefined))?.status === 200);
  await until(() => listening().length === 2); // the log lines may trail the answer
  return cluster;
}

function stopCluster(c: RunningCluster | undefined): void {
  if (c && c.child.exitCode === null && c.child.signalCode === null) c.child.kill('SIGKILL');
}

/** The first answer each worker gave, in the order they came. */
function firstOfEachWorker(answers: Served[]): Served[] {
  const first = new Map<string, Served>();
  for (const a of answers) if (!first.has(a.worker)) first.set(a.worker, a);
  return [...first.values()];
}

/** A wiki whose api.php answers are public for ten minutes. */
function publicWiki(): Promise<FakeUpstream> {
  return startFakeUpstream((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 's-maxage=600, max-age=600, public' });
    res.end('{"batchcomplete":true}');
  });
}

describe.runIf(built)('cluster mode (WIKIEDGE_WORKERS=2)', () => {
  let fake: FakeUpstream;
  let c: RunningCluster;

  beforeAll(async () => {
    fake = await publicWiki();
    c = await startCluster(fake.url);
  });
  afterAll(async () => {
    stopCluster(c);
    await fake?.close();
  });

  it('serves requests from both workers', async () => {
    const answers = await c.fromBothWorkers('action=query&meta=siteinfo&format=json&t=serve');
    expect(answers.every((a) => a.status === 200)).toBe(true);
  });

  it('/metrics on the admin port is the sum of both workers', async () => {
    const before = await c.requestsTotal();
    const answers: Served[] = [];
    for (let i = 0; i < 30; i++) answers.push(await c.get(`action=query&meta=siteinfo&format=json&t=metrics&i=${i % 3}`));
    expect(new Set(answers.map((a) => a.worker)).size).toBe(2);
    expect((await c.requestsTotal()) - before).toBe(30);
    // Per-worker budgets add up: two workers may hold twice the configured bytes.
    expect(await c.metrics()).toMatch(new RegExp(`^wikiedge_cache_budget_bytes\\{tier="shared"\\} ${2 * 268435456}$`, 'm'));
  });

  it('POST /purge reaches both workers', async () => {
    const q = 'action=query&list=allpages&format=json&t=purge';
    await c.fromBothWorkers(q); // now cached in each worker
    expect(firstOfEachWorker(await c.fromBothWorkers(q)).map((a) => a.cache)).toEqual(['hit', 'hit']);

    const purge = await http(`${c.adminUrl}/purge?prefix=${encodeURIComponent('/w/api.php?action=query')}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
    });
    expect(purge.status).toBe(200);
    const result = JSON.parse(purge.body) as { purged: number; workers: number; missedWorkers: number };
    expect(result).toMatchObject({ workers: 2, missedWorkers: 0 });
    expect(result.purged).toBeGreaterThanOrEqual(2);

    // The first answer of each worker after the purge went to the wiki again.
    expect(firstOfEachWorker(await c.fromBothWorkers(q)).map((a) => a.cache)).toEqual(['miss', 'miss']);
  });

  it('without Redis, a PURGE taken by one worker empties the other too', async () => {
    const q = 'action=query&list=allpages&format=json&t=public-purge';
    await c.fromBothWorkers(q);
    expect(firstOfEachWorker(await c.fromBothWorkers(q)).map((a) => a.cache)).toEqual(['hit', 'hit']);
    expect(await c.purge(q)).toBe(200);
    // The purging worker tells the primary, which tells the other one (IPC, a few ms): until
    // neither holds a copy (GET /cache asks both), read without storing anything anew.
    await until(async () => {
      const view = await http(`${c.adminUrl}/cache?url=${encodeURIComponent(`/w/api.php?${q}`)}`);
      return view.status === 200 && (JSON.parse(view.body) as { variants: unknown[] }).variants.length === 0;
    });
    expect(firstOfEachWorker(await c.fromBothWorkers(q)).map((a) => a.cache)).toEqual(['miss', 'miss']);
  });

  it('restarts a worker killed with SIGKILL; requests keep being answered', async () => {
    const [victim] = c.listening();
    const totalBefore = await c.requestsTotal();
    process.kill(victim!, 'SIGKILL');
    // While it is gone, the other worker answers everything.
    for (let i = 0; i < 10; i++) expect((await c.get('action=query&meta=siteinfo&format=json&t=kill')).status).toBe(200);
    await until(() => c.listening().length === 3);
    expect(c.logs.some((l) => l['msg'] === 'worker died: restarting it' && l['signal'] === 'SIGKILL')).toBe(true);
    expect(c.listening()[2]).not.toBe(victim);
    const answers = await c.fromBothWorkers('action=query&meta=siteinfo&format=json&t=restarted');
    expect(answers.every((a) => a.status === 200)).toBe(true);
    // The dead worker's counts are kept: the sum never goes down (Prometheus would see a reset).
    expect(await c.requestsTotal()).toBeGreaterThanOrEqual(totalBefore + 10);
  });

  it('exits 0 on SIGTERM, after both workers', async () => {
    c.child.kill('SIGTERM');
    expect(await c.exited).toBe(0);
    expect(c.logs.filter((l) => l['msg'] === 'worker exited' && l['code'] === 0)).toHaveLength(2);
    expect(c.stderr()).toBe('');
  });
});

describe.runIf(built && existsSync('/usr/bin/redis-server'))('cluster mode with Redis', () => {
  let fake: FakeUpstream;
  let redis: TestRedis;
  let c: RunningCluster;

  beforeAll(async () => {
    fake = await publicWiki();
    redis = await startRedis();
    c = await startCluster(fake.url, { WIKIEDGE_REDIS_URL: redis.url, WIKIEDGE_IDENTITY_SECRET: 'redis-tests-share-this-identity-secret' });
  });
  afterAll(async () => {
    stopCluster(c);
    await fake?.close();
    await redis?.stop();
  });

  it('reports wikiedge_redis_up as 1 (the lowest of the workers), not their sum', async () => {
    expect(await c.metrics()).toMatch(/^wikiedge_redis_up 1$/m);
  });

  it('shares entries between workers: the wiki sees one request per URL', async () => {
    const q = 'action=query&meta=siteinfo&format=json&t=shared';
    const answers = await c.fromBothWorkers(q);
    // The second worker finds the entry in Redis, or, when it asks while the first is still
    // storing (after its answer: steps/flow.ts fetchAndStore), waits on the lock for it.
    const [first, second] = firstOfEachWorker(answers).map((a) => a.cache);
    expect(first).toBe('miss');
    expect(['hit-shared', 'coalesced']).toContain(second);
    expect(fake.requests.filter((r) => r.url?.includes('t=shared'))).toHaveLength(1);
  });

  it('POST /purge purges Redis once and both workers', async () => {
    const q = 'action=query&meta=siteinfo&format=json&t=redis-purge';
    await c.fromBothWorkers(q);
    const purge = await http(`${c.adminUrl}/purge?all=1`, { method: 'POST', headers: { 'content-type': 'application/json' } });
    expect(purge.status).toBe(200);
    const result = JSON.parse(purge.body) as { purged: number; redisPurged: number | null; workers: number };
    expect(result.workers).toBe(2);
    expect(result.redisPurged).toBeGreaterThanOrEqual(2); // both URLs' entries
    // One worker purged Redis and published once; each worker's subscriber received it.
    await until(async () => /^wikiedge_redis_purge_messages_total\{kind="all"\} 2$/m.test(await c.metrics()));
    const [first, second] = firstOfEachWorker(await c.fromBothWorkers(q)).map((a) => a.cache);
    expect(first).toBe('miss');
    expect(['hit-shared', 'coalesced']).toContain(second);
  });

  it('exits 0 on SIGTERM', async () => {
    c.child.kill('SIGTERM');
    expect(await c.exited).toBe(0);
    expect(c.stderr()).toBe('');
  });
});

async function until(check: () => boolean | Promise<boolean>, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 50));
  }
}
