// A reload of the default deployment (WIKIEDGE_WORKERS=1) with the Redis tier: the new gateway
// opens its own Redis connection before it serves (wikiedge_redis_up stays 1), what was cached is
// a hit after the reload (handed over in memory) and in Redis still, the wiki is not asked again,
// and the old gateway's connection is closed without an error (exit 0, nothing on stderr).
import { existsSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { logged, untilLogged } from '../support/cluster-logs.js';
import { type FakeUpstream, startFakeUpstream } from '../support/fake-upstream.js';
import { http } from '../support/http.js';
import { startRedis, type TestRedis } from '../support/redis.js';
import { built, type SpawnedGateway, spawnGateway } from '../support/spawned.js';

describe.runIf(built && existsSync('/usr/bin/redis-server'))('a reload of the default deployment with the Redis tier', () => {
  let fake: FakeUpstream;
  let redis: TestRedis;
  let gw: SpawnedGateway;
  const q = '/w/api.php?action=query&meta=siteinfo&siprop=namespaces&format=json&t=reload-single';
  const redisUp = async () => /^wikiedge_redis_up 1$/m.test((await http(`${gw.adminUrl}/metrics`)).body);
  const get = async () => (await http(`${gw.url}${q}`)).headers['x-cache'];

  beforeAll(async () => {
    fake = await startFakeUpstream((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 's-maxage=600, max-age=600, public' });
      res.end('{"batchcomplete":true}');
    });
    redis = await startRedis();
    // A Redis call slower than its bound marks the tier down; on a busy machine 50 ms is not enough.
    gw = await spawnGateway(fake.url, {
      WIKIEDGE_REDIS_URL: redis.url,
      WIKIEDGE_IDENTITY_SECRET: 'redis-tests-share-this-identity-secret',
      WIKIEDGE_REDIS_TIMEOUT_MS: '2000',
    });
  });
  afterAll(async () => {
    if (gw?.child.exitCode === null) gw.child.kill('SIGKILL');
    await fake?.close();
    await redis?.stop();
  });

  it('keeps what was cached, Redis up, the wiki not asked again', async () => {
    await untilLogged(gw, redisUp);
    expect(await get()).toBe('miss');
    expect(await get()).toBe('hit');
    for (let reload = 1; reload <= 2; reload++) {
      gw.child.kill('SIGHUP');
      await untilLogged(gw, () => logged(gw, 'reload complete').length === reload);
      expect(await redisUp()).toBe(true);
      expect(await get()).toBe('hit');
    }
    expect(fake.requests.filter((r) => r.url?.includes('t=reload-single'))).toHaveLength(1);
    // A purge after the reloads reaches the current gateway and Redis: the next answer is the wiki's.
    const purged = await http(`${gw.adminUrl}/purge?url=${encodeURIComponent(q)}`, { method: 'POST', headers: { 'content-type': 'application/json' } });
    expect(purged.status).toBe(200);
    expect(await get()).toBe('miss');
  });

  it('exits 0 on SIGTERM', async () => {
    gw.child.kill('SIGTERM');
    expect(await gw.exited).toBe(0);
    expect(gw.stderr()).toBe('');
  });
});
