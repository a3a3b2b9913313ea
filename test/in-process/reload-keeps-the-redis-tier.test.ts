// A reload replaces the workers, and with them their local tiers; the Redis tier outlives them:
// what was cached before the reload is served by the new workers from Redis (`hit-shared`), and
// the wiki is not asked again.
//
// The answer must stay fresh through the whole reload (two workers forked, each listening, its
// tier handed over, the old one drained), which takes seconds, tens of them on a loaded machine.
// It used to be `meta=siteinfo` alone, whose default siprop is `general`: an answer that carries
// the wiki's clock (`general.time`), so its TTL is capped at WIKIEDGE_TTL_CLOCK_SECONDS, 2 s
// (src/policy/dependencies.ts carriesClock, src/policy/policy.ts dependencyVerdict). Past those
// 2 s the old workers hand over nothing (only fresh entries go: src/cache/store.ts oldestFirst)
// and Redis' copy is not fresh either: the first answer after the reload was a `miss` (the wiki
// asked again), a later one `stale`, whenever the reload took longer than 2 s. Namespaces
// carry no clock; the answer's s-maxage holds.
//
// A Redis reply later than WIKIEDGE_REDIS_TIMEOUT_MS is given up on (src/cache/redis/connection.ts
// call), and a new worker on a loaded machine can be kept off the CPU that long: its lookup then
// finds nothing, and the fetch lock (told by LOCK_LUA, src/cache/redis/locks.ts, that a fresh
// entry is there) waits for the entry in Redis: `coalesced`, the same entry, the wiki not asked
// (seen by stopping redis-server past one GET's bound but not the lock's). A longer stall makes
// it a `miss`, which the last assertion, on the wiki's requests, refuses.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { logged, logLines, untilLogged } from '../support/cluster-logs.js';
import { type FakeUpstream, startFakeUpstream } from '../support/fake-upstream.js';
import { http } from '../support/http.js';
import { REDIS_BACKENDS, redisInstalled, type RunningRedisBackend } from '../support/redis-backends.js';
import { built, type SpawnedGateway, spawnGateway } from '../support/spawned.js';

// On one redis-server and on a Redis Cluster (test/support/redis-backends.ts).
describe.runIf(built && redisInstalled).each(REDIS_BACKENDS)('a reload with the Redis tier on %s', (_name, start) => {
  let fake: FakeUpstream;
  let redis: RunningRedisBackend;
  let gw: SpawnedGateway;
  const q = '/w/api.php?action=query&meta=siteinfo&siprop=namespaces&format=json&t=reload';
  /**
   * Every worker's Redis connection is up (the cluster's figure is the lowest of the workers'). A
   * worker that did not answer the scrape in time is left out of that figure (a new one has no
   * last figures yet: src/cluster/metrics-aggregation.ts), so such a scrape proves nothing.
   */
  const redisUp = () =>
    untilLogged(gw, async () => {
      const silent = () => logged(gw, /did not answer/).length;
      const before = silent();
      const up = /^wikiedge_redis_up 1$/m.test((await http(`${gw.adminUrl}/metrics`)).body);
      return up && silent() === before;
    });
  const get = async () => (await http(`${gw.url}${q}`, { headers: { connection: 'close' } })).headers['x-cache'];

  beforeAll(async () => {
    fake = await startFakeUpstream((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 's-maxage=600, max-age=600, public' });
      res.end('{"batchcomplete":true}');
    });
    redis = await start();
    // A Redis call slower than its bound marks the tier down; on a busy machine 50 ms is not enough.
    gw = await spawnGateway(fake.url, {
      WIKIEDGE_WORKERS: '2',
      ...redis.env,
      WIKIEDGE_IDENTITY_SECRET: 'redis-tests-share-this-identity-secret',
      WIKIEDGE_REDIS_TIMEOUT_MS: '2000',
    });
    await untilLogged(gw, () => logged(gw, 'worker listening').length === 2);
  }, 120_000);
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
    // Each new worker's first answer comes from Redis (`hit-shared`, or `coalesced` after a late
    // reply: see the top); after it, from its own local tier.
    const answers: (string | string[] | undefined)[] = [];
    for (let i = 0; i < 10; i++) answers.push(await get());
    // On failure: the answers in order, and what the workers said of Redis meanwhile.
    const why = () =>
      `answers: ${JSON.stringify(answers)}; lines: ${JSON.stringify(logLines(gw).filter((l) => /redis|handed over|worker|reload/.test(String(l['msg'])) || String(l['url'] ?? '').includes('t=reload')))}`;
    expect(
      answers.some((a) => a === 'hit-shared' || a === 'coalesced'),
      why(),
    ).toBe(true);
    expect(
      answers.every((a) => a === 'hit-shared' || a === 'hit' || a === 'coalesced'),
      why(),
    ).toBe(true);
    expect(fake.requests.filter((r) => r.url?.includes('t=reload'))).toHaveLength(1);
  });

  it('exits 0 on SIGTERM', async () => {
    gw.child.kill('SIGTERM');
    expect(await gw.exited).toBe(0);
    expect(gw.stderr()).toBe('');
  });
});
