// WIKIEDGE_WORKERS=2 with a shared tier (Redis): GET /cache lists each worker's local copies,
// marked with the worker, and the shared tier's copies once (one worker lists them,
// cluster/inspect-workers.ts), one session numbered alike everywhere, no cookie value shown.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_TOKEN, adminGet, answerPublicOrSessionPrivate } from '../support/admin.js';
import { type FakeUpstream, startFakeUpstream } from '../support/fake-upstream.js';
import { header, http } from '../support/http.js';
import { startRedis, type TestRedis } from '../support/redis.js';
import { built, spawnGateway, type SpawnedGateway } from '../support/spawned.js';

const SESSION_VALUE = 'rrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrr';
const COOKIE = `wiki_session=${SESSION_VALUE}`;
const QUERY = '/w/api.php?action=query&prop=info&titles=Main_Page&format=json';

interface Variant {
  worker?: number;
  tier: string;
  identity: string;
  session?: number;
}

describe.runIf(built)('GET /cache with workers and Redis', () => {
  let fake: FakeUpstream;
  let redis: TestRedis;
  let gw: SpawnedGateway;
  beforeAll(async () => {
    fake = await startFakeUpstream(answerPublicOrSessionPrivate(new Map()));
    redis = await startRedis();
    gw = await spawnGateway(fake.url, {
      WIKIEDGE_WORKERS: '2',
      WIKIEDGE_ADMIN_TOKEN: ADMIN_TOKEN,
      WIKIEDGE_REDIS_URL: redis.url,
      WIKIEDGE_IDENTITY_SECRET: 'inspection-with-workers-identity-secret',
    });
  });
  afterAll(async () => {
    gw?.child.kill('SIGKILL');
    await gw?.exited;
    await fake?.close();
    await redis?.stop();
  });

  async function inBothWorkers(headers: Record<string, string>): Promise<void> {
    const workers = new Set<string>();
    for (let i = 0; i < 200 && workers.size < 2; i++) {
      const res = await http(`${gw.url}${QUERY}`, { headers: { connection: 'close', ...headers } });
      expect(res.status).toBe(200);
      workers.add((header(res, 'x-request-id') ?? '').split('-')[0]!);
    }
    expect(workers.size).toBe(2);
  }

  it('lists the shared tier’s copies once beside every worker’s own', async () => {
    await inBothWorkers({});
    await inBothWorkers({ cookie: COOKIE });
    const res = await adminGet(gw.adminUrl, `/cache?url=${encodeURIComponent(QUERY)}`);
    expect(res.status).toBe(200);
    const view = JSON.parse(res.body) as { variants: Variant[]; workers: number; sharedTier?: string };
    expect(view.workers).toBe(2);
    expect(view.sharedTier).toBeUndefined();
    const shared = view.variants.filter((v) => v.tier === 'shared');
    const local = view.variants.filter((v) => v.tier === 'local');
    expect(shared.map((v) => v.identity).sort()).toEqual(['anonymous', 'session']);
    for (const v of shared) expect(v.worker).toBeUndefined();
    expect(new Set(local.map((v) => v.worker)).size).toBe(2);
    expect(new Set(view.variants.filter((v) => v.identity === 'session').map((v) => v.session))).toEqual(new Set([1]));
    expect(res.body).not.toContain(SESSION_VALUE);
    expect(res.body).not.toContain('wiki_session');
  });
});
