// GET /cache with a shared tier (Redis): the variants every replica shares are listed beside
// this process's own, tier `shared`, the same session numbered alike in both tiers, and still
// nothing that names a session. On one redis-server and on a Redis Cluster (its entries under
// hash-tagged names: src/cache/redis/keys.ts).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeUpstream, startFakeUpstream } from '../support/fake-upstream.js';
import { type RunningGateway, startGateway } from '../support/gateway.js';
import { ADMIN_TOKEN, adminGet, answerPublicOrSessionPrivate } from '../support/admin.js';
import { http } from '../support/http.js';
import { REDIS_BACKENDS, redisInstalled, type RunningRedisBackend } from '../support/redis-backends.js';

interface Variant {
  tier: string;
  part: string;
  identity: string;
  session?: number;
  keyedHeaders: Record<string, string | null> | null;
  bytes: number;
  dependencies: string[];
}

describe.runIf(redisInstalled).each(REDIS_BACKENDS)('GET /cache with %s', (_name, start) => {
  let fake: FakeUpstream;
  let redis: RunningRedisBackend;
  let gw: RunningGateway;
  beforeAll(async () => {
    fake = await startFakeUpstream(answerPublicOrSessionPrivate(new Map()));
    redis = await start();
    gw = await startGateway(fake.url, {
      WIKIEDGE_ADMIN_TOKEN: ADMIN_TOKEN,
      ...redis.env,
      WIKIEDGE_IDENTITY_SECRET: 'inspection-tests-identity-secret-0123',
    });
  }, 120_000);
  afterAll(async () => {
    await gw?.close();
    await fake?.close();
    await redis?.stop();
  });

  it('lists the shared tier’s copies beside the local ones', async () => {
    const q = 'action=query&prop=info&titles=Shared&format=json';
    const cookie = 'wiki_session=ffffffffffffffffffffffffffffffff';
    expect((await http(`${gw.apiUrl}?${q}`)).headers['x-cache']).toBe('miss');
    expect((await http(`${gw.apiUrl}?${q}`, { headers: { cookie } })).headers['x-cache']).toBe('miss');
    // Redis is written after each answer (steps/flow.ts fetchAndStore).
    await gw.built.gateway.afterAnswers.settled(10_000);

    const res = await adminGet(gw.adminUrl, `/cache?url=${encodeURIComponent(`/w/api.php?${q}`)}`);
    expect(res.status).toBe(200);
    const { variants } = JSON.parse(res.body) as { variants: Variant[] };
    const where = variants.map((v) => `${v.tier} ${v.identity}${v.session ? ` ${v.session}` : ''}`).sort();
    // The session's copy in Redis is numbered as its local one: the same session.
    expect(where).toEqual(['local anonymous', 'local session 1', 'shared anonymous', 'shared session 1']);
    const shared = variants.find((v) => v.tier === 'shared' && v.identity === 'anonymous')!;
    expect(shared.keyedHeaders).toBeNull();
    expect(shared.bytes).toBeGreaterThan(0);
    expect(shared.dependencies).toContain('p:Shared');
    expect(res.body).not.toContain('ffffffffffffffff');
    const slot = /\ns:([^\n]*):[^\n:]*\n/.exec(
      gw.built.gateway.store.variants(`/w/api.php?action=query&format=json&prop=info&titles=Shared`).find((v) => v.tier === 'session')!.key,
    )![1]!;
    expect(res.body).not.toContain(slot);
  });
});
