// A reload replaces the workers, and with them their local tiers; the Redis tier outlives them:
// what was cached before the reload is served by the new workers from Redis (`hit-shared`), and
// the wiki is not asked again.
import { existsSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { logged, untilLogged } from '../support/cluster-logs.js';
import { type FakeUpstream, startFakeUpstream } from '../support/fake-upstream.js';
import { http } from '../support/http.js';
import { startRedis, type TestRedis } from '../support/redis.js';
import { built, type SpawnedGateway, spawnGateway } from '../support/spawned.js';

describe.runIf(built && existsSync('/usr/bin/redis-server'))('a reload with the Redis tier', () => {
  let fake: FakeUpstream;
  let redis: TestRedis;
  let gw: SpawnedGateway;
  const q = '/w/api.php?action=query&meta=siteinfo&format=json&t=reload';
  /** Every worker's Redis connection is up (the cluster's figure is the lowest of the workers'). */
  const redisUp = () => untilLogged(gw, async () => /^wikiedge_redis_up 1$/m.test((await http(`${gw.adminUrl}/metrics`)).body));
  const get = async () => (await http(`${gw.url}${q}`, { headers: { connection: 'close' } })).headers['x-cache'];

  beforeAll(async () => {
    fake = await startFakeUpstream((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 's-maxage=600, max-age=600, public' });
      res.end('{"batchcomplete":true}');
    });
    redis = await startRedis();
    // A Redis call slower than its bound marks the tier down; on a busy machine 50 ms is not enough.
    gw = await spawnGateway(fake.url, { WIKIEDGE_WORKERS: '2', WIKIEDGE_REDIS_URL: redis.url, WIKIEDGE_IDENTITY_SECRET: 'redis-tests-share-this-identity-secret', WIKIEDGE_REDIS_TIMEOUT_MS: '2000' });
    await untilLogged(gw, () => logged(gw, 'worker listening').length === 2);
  });
  afterAll(async () => {
    if (gw?.child.exitCode === null) gw.child.kill('SIGKILL');
    await fake?.close();
    await redis?.stop();
  });

  it('serves from Redis after the workers were replaced, without asking the wiki', async () => {
    await redisUp();
    expect(await get()).toBe('miss');
    gw.child.kill('SIGHUP');
    await untilLogged(gw, () => logged(gw, 'reload complete').length === 1);
    await redisUp();
    // Each new worker's first answer comes from Redis; after it, from its own local tier.
    const answers = new Set<string | string[] | undefined>();
    for (let i = 0; i < 10; i++) answers.add(await get());
    expect(answers.has('hit-shared')).toBe(true);
    expect([...answers].every((a) => a === 'hit-shared' || a === 'hit')).toBe(true);
    expect(fake.requests.filter((r) => r.url?.includes('t=reload'))).toHaveLength(1);
  });

  it('exits 0 on SIGTERM', async () => {
    gw.child.kill('SIGTERM');
    expect(await gw.exited).toBe(0);
    expect(gw.stderr()).toBe('');
  });
});
