// One anonymous client asking new URLs (a cache-busting parameter) wrote a new entry to Redis per
// request, each kept for its TTL and stale-if-error: the in-process tier is bounded by its LRU,
// Redis only by those TTLs. Redis runs with maxmemory and noeviction (docs/REDIS.md), so it
// filled, refused writes (OOM), and each refusal took the shared tier down, on every replica
// that met one. Now the gateway reads every master's INFO memory and skips entry stores while
// Redis is near its maxmemory, and those that would take it there (src/cache/redis/memory.ts):
// the tier stays up, Redis never answers OOM, the skipped stores are counted, and a purge still
// reaches Redis. On one redis-server, and on a Redis Cluster (3 masters), where a store needs room
// on every master.
import { existsSync } from 'node:fs';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_TOKEN, adminPost } from '../support/admin.js';
import { type FakeUpstream, startFakeUpstream } from '../support/fake-upstream.js';
import { MANY_CLIENTS_FROM_LOOPBACK, type RunningGateway, startGateway } from '../support/gateway.js';
import { header, http } from '../support/http.js';
import { startRedis } from '../support/redis.js';
import { startCluster } from '../support/redis-cluster.js';
import { until } from '../support/until.js';

const MB = 1024 * 1024;
const MAXMEMORY = 8 * MB;
const REQUESTS = 60;
/** A public answer of 200 KB: 60 of them are half again Redis' maxmemory. */
const BODY = JSON.stringify({ query: { allpages: 'x'.repeat(200_000) } });
const query = (n: number) => `/w/api.php?action=query&list=allpages&aplimit=max&format=json&smaxage=3600&bust=${n}`;

/** The Redis the gateway stores to: its environment, and a client of each master. */
interface Backend {
  readonly env: Record<string, string>;
  readonly masters: Redis[];
  /** What a master's maxmemory is set to, given its used_memory with nothing stored. */
  readonly maxmemory: (used: number) => number;
  stop(): Promise<void>;
}

async function oneRedis(): Promise<Backend> {
  const redis = await startRedis();
  const master = new Redis(redis.url, { maxRetriesPerRequest: 1 });
  return {
    env: { WIKIEDGE_REDIS_URL: redis.url },
    masters: [master],
    // As the attack was shown: 8 MB.
    maxmemory: () => MAXMEMORY,
    async stop() {
      master.disconnect();
      await redis.stop();
    },
  };
}

async function aCluster(): Promise<Backend> {
  const cluster = await startCluster();
  const masters = (await cluster.masters()).map((port) => new Redis({ host: '127.0.0.1', port, maxRetriesPerRequest: 1 }));
  return {
    env: { WIKIEDGE_REDIS_CLUSTER_NODES: cluster.seeds },
    masters,
    // 60 answers spread over 3 masters: about 4 MB each, so each holds 3 MB more than now.
    maxmemory: (used) => used + 3 * MB,
    async stop() {
      for (const m of masters) m.disconnect();
      await cluster.stop();
    },
  };
}

const used = async (master: Redis) => Number(/used_memory:(\d+)/.exec(await master.info('memory'))![1]);

describe.runIf(existsSync('/usr/bin/redis-server')).each([
  ['one Redis', oneRedis],
  ['a Redis Cluster', aCluster],
] as const)('a client busting the cache cannot fill %s', (_name, start) => {
  let backend: Backend;
  const maxmemory = new Map<Redis, number>();
  let fake: FakeUpstream;
  let gw: RunningGateway;

  beforeAll(async () => {
    backend = await start();
    for (const master of backend.masters) {
      maxmemory.set(master, backend.maxmemory(await used(master)));
      await master.config('SET', 'maxmemory', String(maxmemory.get(master)));
      await master.config('SET', 'maxmemory-policy', 'noeviction');
    }
    fake = await startFakeUpstream((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 's-maxage=3600, max-age=3600, public' });
      res.end(BODY);
    });
    gw = await startGateway(fake.url, {
      ...MANY_CLIENTS_FROM_LOOPBACK,
      ...backend.env,
      WIKIEDGE_IDENTITY_SECRET: 'cache-busting-test-secret-0123456789abcd',
      WIKIEDGE_ADMIN_TOKEN: ADMIN_TOKEN,
      // A call slower than its bound marks the tier down; on a busy 2-core machine 50 ms is not enough.
      WIKIEDGE_REDIS_TIMEOUT_MS: '1000',
      WIKIEDGE_LOG_HITS: 'false',
    });
  }, 120_000);
  afterAll(async () => {
    await gw?.close();
    await fake?.close();
    await backend?.stop();
  });

  const metric = async (series: string): Promise<number> => {
    const body = (await http(`${gw.adminUrl}/metrics`)).body;
    const line = body.split('\n').find((l) => l.startsWith(`${series} `));
    return line === undefined ? NaN : Number(line.slice(series.length + 1));
  };
  const stored = () => metric('wikiedge_redis_stored_total{tier="shared"}');
  const skipped = () => metric('wikiedge_redis_stores_skipped_total{reason="memory"}');

  it('keeps the tier up: stores near maxmemory are skipped and counted, and a purge still works', async () => {
    expect(
      await until(
        () => metric('wikiedge_redis_up'),
        (v) => v === 1,
      ),
    ).toBe(1);
    for (let n = 0; n < REQUESTS; n++) {
      const res = await http(`${gw.url}${query(n)}`);
      expect(res.status).toBe(200);
    }
    // Every answer's store has been tried (stores go after the answer: steps/flow.ts), unless
    // the tier went down (then stores stop, uncounted).
    const settled = await until(
      async () => ({ tried: (await stored()) + (await skipped()), downs: await metric('wikiedge_redis_down_total') }),
      (r) => r.tried >= REQUESTS || r.downs > 0,
    );
    expect(settled.downs).toBe(0);
    expect(await skipped()).toBeGreaterThan(0);
    expect(await stored()).toBeGreaterThan(0);

    // Redis never refused a write, the tier never went down.
    for (const master of backend.masters) {
      expect(await master.info('stats')).not.toMatch(/errorstat_OOM/);
      expect(await used(master)).toBeLessThan(maxmemory.get(master)!);
    }
    expect(gw.logs.filter((l) => String(l['msg']).startsWith('redis tier down'))).toEqual([]);
    expect(await metric('wikiedge_redis_down_total')).toBe(0);
    expect(await metric('wikiedge_redis_up')).toBe(1);
    // Logged once per master (at most once a minute), naming used, max and the threshold.
    const full = gw.logs.filter((l) => l['redisMemory'] === 'full');
    expect(full.length).toBeGreaterThan(0);
    expect(new Set(full.map((l) => l['node'])).size).toBe(full.length);
    for (const line of full) {
      expect([...maxmemory.values()]).toContain(line['max']);
      expect(line).toMatchObject({ highWater: 0.9 });
    }

    // A purge of a URL stored before Redis filled reaches Redis, and the next answer is the wiki's.
    const purge = await adminPost(gw.adminUrl, '/purge', { url: query(0) });
    expect(purge.status).toBe(200);
    expect(JSON.parse(purge.body)).toMatchObject({ redisPurged: 1 });
    expect(header(await http(`${gw.url}${query(0)}`), 'x-cache')).toBe('miss');
  }, 120_000);
});
