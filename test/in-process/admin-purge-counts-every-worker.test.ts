// WIKIEDGE_WORKERS=2: an admin purge's answer counts every copy removed in every worker's local
// tier (cluster/purge-fan-out.ts sums the workers' answers), and with Redis its copy there too.
// With Redis the other worker's copies were removed by the leader's message on the purge channel
// before it was asked, and answered 0: the fan-out asks it before the leader as well. With Redis:
// one redis-server and a Redis Cluster (test/support/redis-backends.ts).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeUpstream, startFakeUpstream } from '../support/fake-upstream.js';
import { header, http } from '../support/http.js';
import { REDIS_BACKENDS, redisInstalled, type RedisBackendStart, type RunningRedisBackend } from '../support/redis-backends.js';
import { built, spawnGateway, type SpawnedGateway } from '../support/spawned.js';
import { ADMIN_TOKEN, adminGet, adminPost } from '../support/admin.js';
import { until } from '../support/until.js';

const QUERIES = ['action=query&prop=info&titles=A&format=json', 'action=query&prop=info&titles=B&format=json', 'action=query&prop=info&titles=C&format=json'];

const CASES: readonly (readonly [string, RedisBackendStart | undefined])[] = [
  ['without Redis', undefined],
  ...(redisInstalled ? REDIS_BACKENDS.map(([name, start]) => [`with ${name}`, start] as const) : []),
];

describe.runIf(built).each(CASES)('admin purge counts in a cluster (%s)', (_name, start) => {
  const withRedis = start !== undefined;
  let fake: FakeUpstream;
  let redis: RunningRedisBackend | undefined;
  let gw: SpawnedGateway;
  beforeAll(async () => {
    fake = await startFakeUpstream((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 's-maxage=600, max-age=600, public' });
      res.end('{"batchcomplete":true}');
    });
    redis = start ? await start() : undefined;
    gw = await spawnGateway(fake.url, {
      WIKIEDGE_WORKERS: '2',
      WIKIEDGE_ADMIN_TOKEN: ADMIN_TOKEN,
      ...(redis && { ...redis.env, WIKIEDGE_IDENTITY_SECRET: 'purge-count-tests-share-this-secret' }),
    });
  }, 120_000);
  afterAll(async () => {
    gw?.child.kill('SIGKILL');
    await gw?.exited;
    await fake?.close();
    await redis?.stop();
  });

  it('the sum of the copies each worker held', async () => {
    // A copy is made in a worker by its first answer of a URL that is not a hit of its own: a
    // miss (it asked the wiki), hit-shared (it copied Redis' entry) or coalesced (it waited for
    // the other worker's store, which runs after that one's answer). Each URL is asked on new
    // connections until both workers have answered it.
    const copies = new Set<string>();
    for (const q of QUERIES) {
      const workers = new Set<string>();
      for (let i = 0; i < 200 && workers.size < 2; i++) {
        const res = await http(`${gw.url}/w/api.php?${q}`, { headers: { connection: 'close' } });
        const worker = (header(res, 'x-request-id') ?? '').split('-')[0]!;
        const cache = header(res, 'x-cache');
        if (cache === 'miss' || cache === 'hit-shared' || cache === 'coalesced') copies.add(`${worker} ${q}`);
        workers.add(worker);
      }
      expect(workers.size).toBe(2);
    }
    expect(copies.size).toBe(2 * QUERIES.length);
    // A miss is stored after its answer (src/steps/flow.ts): on a busy machine the last one may not
    // be in Redis yet when the purge comes, which then finds 2 of the 3 there.
    if (withRedis) {
      for (const q of QUERIES) {
        await until(
          () => adminGet(gw.adminUrl, `/cache?url=${encodeURIComponent(`/w/api.php?${q}`)}`),
          (r) => r.status === 200 && (JSON.parse(r.body) as { variants: { tier: string }[] }).variants.some((v) => v.tier === 'shared'),
          10_000,
        );
      }
    }

    const res = await adminPost(gw.adminUrl, '/purge', { prefix: '/w/api.php?prop=info&action=query' });
    expect(res.status).toBe(200);
    const answer = JSON.parse(res.body) as Record<string, unknown> & { replicas?: { purged: number } };
    expect(answer).toMatchObject({ purged: copies.size, ...(withRedis && { redisPurged: QUERIES.length }), workers: 2, missedWorkers: 0 });
    // With Redis, the other replicas' count (here the sibling worker, whose copies the fan-out
    // already removed: 0) and the total of every copy (admin-purge-counts-every-replica-spawned).
    if (withRedis) expect(answer['total']).toBe(copies.size + QUERIES.length + answer.replicas!.purged);
    else expect(answer['replicas']).toBeUndefined();
  });
});
