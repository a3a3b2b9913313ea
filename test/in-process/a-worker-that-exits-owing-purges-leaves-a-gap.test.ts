// A purge the shared tier could not take (Redis down, or refusing writes) is kept by the worker that made it and
// carried once Redis answers (src/cache/tiered-storage.ts). A worker that exited meanwhile, by a
// crash or a reload while Redis was down, took them with it: Redis kept the purged answer and
// handed it to every worker as `hit-shared` until its TTL. Workers now tell the primary when
// they owe purges, and the primary has another worker carry a gap for the one that exited
// owing them (src/cluster/primary.ts): nothing stored before it is served from Redis as fresh.
import { existsSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeUpstream, startFakeUpstream } from '../support/fake-upstream.js';
import { header, http } from '../support/http.js';
import { oneRedis, type RunningRedisBackend } from '../support/redis-backends.js';
import { built, spawnGateway, type SpawnedGateway } from '../support/spawned.js';

const QUERY = 'action=query&prop=info&titles=Owed_by_a_worker&format=json';

describe.runIf(built && existsSync('/usr/bin/redis-server'))('a worker that exits owing purges', () => {
  let fake: FakeUpstream;
  let redis: RunningRedisBackend;
  let gw: SpawnedGateway;
  let version = 0;

  beforeAll(async () => {
    fake = await startFakeUpstream((req, res) => {
      const v = req.url!.includes('Owed_by_a_worker') ? ++version : 0;
      res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 's-maxage=600, max-age=600, public' });
      res.end(JSON.stringify({ version: v }));
    });
    redis = await oneRedis();
    gw = await spawnGateway(fake.url, {
      ...redis.env,
      WIKIEDGE_WORKERS: '2',
      WIKIEDGE_IDENTITY_SECRET: 'owed-purges-worker-tests-share-this-secret',
      // Short enough that the purge gives up on the stopped Redis soon; long enough for a busy machine.
      WIKIEDGE_REDIS_TIMEOUT_MS: '300',
      WIKIEDGE_LOG_HITS: 'false',
    });
  }, 120_000);

  afterAll(async () => {
    gw?.child.kill('SIGKILL');
    await gw?.exited;
    await fake?.close();
    await redis?.stop();
  });

  const get = async () => {
    const res = await http(`${gw.url}/w/api.php?${QUERY}`, { headers: { connection: 'close' } });
    return { cache: header(res, 'x-cache'), version: (JSON.parse(res.body) as { version: number }).version };
  };
  const logLines = () =>
    gw
      .stdout()
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as Record<string, unknown>);

  it('has another worker carry a gap: the purged answer is not served from Redis again', async () => {
    expect(await get()).toEqual({ cache: 'miss', version: 1 });
    // Stored in Redis after its answer: both workers find it (hit, or hit-shared) without asking the wiki.
    await expect
      .poll(async () => (await Promise.all([get(), get(), get(), get()])).every((a) => a.version === 1 && a.cache?.startsWith('hit')), { timeout: 10_000 })
      .toBe(true);

    // Redis answers but refuses writes (out of memory): the purge is not carried, and is owed.
    // (A stopped Redis would run it from its socket once continued.)
    await redis.everyNode('CONFIG SET maxmemory 1');
    const purge = await http(`${gw.url}/w/api.php?${QUERY}`, { method: 'PURGE' });
    expect(purge.status).toBe(200);
    // The worker that took it owes it to Redis.
    await expect.poll(() => logLines().some((l) => l['redisPurge'] === 'owed'), { timeout: 10_000 }).toBe(true);
    // Its lines carry its worker id; the primary's 'worker listening' line, its pid.
    const owedBy = logLines().find((l) => l['redisPurge'] === 'owed')!['worker'];
    // The primary's line may come after the worker's own on a busy host: waited for, not assumed.
    const pidOf = () => logLines().find((l) => l['msg'] === 'worker listening' && l['worker'] === owedBy)?.['pid'] as number | undefined;
    await expect.poll(pidOf, { timeout: 10_000 }).toBeDefined();
    const pid = pidOf()!;
    process.kill(pid, 'SIGKILL');
    await expect.poll(() => logLines().some((l) => l['msg'] === 'worker died: restarting it' && l['pid'] === pid), { timeout: 10_000 }).toBe(true);
    await redis.everyNode('CONFIG SET maxmemory 0');

    // The gap reaches Redis once it answers: every answer from now on is the wiki's new one,
    // never the purged version from Redis.
    await expect.poll(async () => (await get()).version, { timeout: 15_000 }).toBeGreaterThan(1);
    for (let i = 0; i < 6; i++) expect((await get()).version).toBeGreaterThan(1);
    expect(logLines().some((l) => l['exitedWorker'] === owedBy && l['redisPurge'] === 'gap')).toBe(true);
  }, 60_000);
});
