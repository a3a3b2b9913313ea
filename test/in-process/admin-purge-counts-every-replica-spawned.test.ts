// An admin purge counts what the other replicas removed (cache/redis/replica-acks.ts), in the
// processes main.ts starts: two default-deployment gateways (src/cluster/single.ts) and a
// gateway with two workers (the leader worker asks, the primary passes the count on), all on one
// redis-server. Each caches the URL; a purge on one answers its own copy, Redis' and the others'.
import { existsSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { ADMIN_TOKEN, adminPost } from '../support/admin.js';
import { type FakeUpstream, startFakeUpstream } from '../support/fake-upstream.js';
import { http } from '../support/http.js';
import { startRedis, type TestRedis } from '../support/redis.js';
import { built, type SpawnedGateway, spawnGateway } from '../support/spawned.js';

interface Answer {
  readonly purged: number;
  readonly total?: number;
  readonly replicas?: { readonly answered: number; readonly expected: number; readonly purged: number; readonly missing: readonly string[] };
}

describe.runIf(built && existsSync('/usr/bin/redis-server'))('admin purge counts in the processes main.ts starts', () => {
  let fake: FakeUpstream;
  let redis: TestRedis;
  let a: SpawnedGateway;
  let b: SpawnedGateway;
  let workers: SpawnedGateway;

  beforeAll(async () => {
    fake = await startFakeUpstream((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 's-maxage=600, max-age=600, public' });
      res.end('{"batchcomplete":true}');
    });
    redis = await startRedis();
    const env = {
      WIKIEDGE_REDIS_URL: redis.url,
      WIKIEDGE_IDENTITY_SECRET: 'redis-tests-share-this-identity-secret',
      WIKIEDGE_REDIS_TIMEOUT_MS: '2000',
      WIKIEDGE_ADMIN_TOKEN: ADMIN_TOKEN,
    };
    [a, b, workers] = await Promise.all([spawnGateway(fake.url, env), spawnGateway(fake.url, env), spawnGateway(fake.url, { ...env, WIKIEDGE_WORKERS: '2' })]);
  }, 120_000);
  afterAll(async () => {
    for (const gw of [a, b, workers]) if (gw?.child.exitCode === null) gw.child.kill('SIGKILL');
    await fake?.close();
    await redis?.stop();
  });

  it.each([
    ['a default process', () => a],
    ['a primary with two workers', () => workers],
  ])('from %s: replicas answered, every copy in the total', async (_name, purger) => {
    const q = `/w/api.php?action=query&meta=siteinfo&format=json&t=${Math.random().toString(36).slice(2)}`;
    // Every process holds a copy in its local tier (the first a miss, the others hit-shared).
    for (const gw of [a, b, workers]) expect(['miss', 'hit-shared', 'hit', 'coalesced']).toContain((await http(`${gw.url}${q}`)).headers['x-cache']);
    // The others have said they are alive (a heartbeat every 2 s): wait until all three are
    // expected (from a: b and the two workers; from the leader worker: a, b and its sibling).
    let answer!: Answer;
    await vi.waitFor(
      async () => {
        const seen = JSON.parse((await adminPost(purger().adminUrl, `/purge?url=${encodeURIComponent(q)}`)).body) as Answer;
        expect(seen.replicas?.expected ?? 0).toBe(3);
        answer = seen;
      },
      { timeout: 20_000, interval: 500 },
    );
    expect(answer.replicas!.answered).toBe(answer.replicas!.expected);
    expect(answer.replicas!.missing).toEqual([]);
    expect(answer.total).toBe(answer.purged + (answer as { redisPurged?: number }).redisPurged! + answer.replicas!.purged);
  });

  it('a purge that removes copies everywhere counts them', async () => {
    const q = `/w/api.php?action=query&meta=siteinfo&format=json&t=counted`;
    for (const gw of [a, b]) await http(`${gw.url}${q}`);
    const answer = JSON.parse((await adminPost(a.adminUrl, `/purge?url=${encodeURIComponent(q)}`)).body) as Answer;
    // A's own copy, Redis' and B's (B answered: it was expected since the test above).
    expect(answer.purged).toBe(1);
    expect(answer.replicas!.purged).toBeGreaterThanOrEqual(1);
    expect(answer.total).toBeGreaterThanOrEqual(3);
  });
});
