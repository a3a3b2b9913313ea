// POST /purge by url= or prefix= typed in the order people write parameters: canonicalised as the
// cache key is (cache/url-match.ts), so a natural-order prefix removes what it names instead of
// matching nothing and answering 200.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { gatewayOnFake } from '../support/gateway-on-fake.js';
import { ADMIN_TOKEN, adminPost, answerPublicOrSessionPrivate } from '../support/admin.js';
import { http } from '../support/http.js';
import { startFakeUpstream, type FakeUpstream } from '../support/fake-upstream.js';
import { type RunningGateway, startGateway } from '../support/gateway.js';
import { REDIS_BACKENDS, redisInstalled, type RunningRedisBackend } from '../support/redis-backends.js';

describe('admin purges in natural parameter order', () => {
  const t = gatewayOnFake(answerPublicOrSessionPrivate(new Map()), { WIKIEDGE_ADMIN_TOKEN: ADMIN_TOKEN });
  const cache = async (query: string) => (await http(`${t.gw.apiUrl}?${query}`)).headers['x-cache'];

  it('url=: every variant of the URL, whatever the order of its parameters', async () => {
    const q = 'action=query&prop=info&titles=Natural&format=json';
    expect(await cache(q)).toBe('miss');
    await http(`${t.gw.apiUrl}?${q}`, { headers: { cookie: 'wiki_session=eeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee' } });
    const res = await adminPost(t.gw.adminUrl, `/purge?url=${encodeURIComponent('/w/api.php?format=json&titles=Natural&prop=info&action=query')}`);
    expect(res.status).toBe(200);
    expect(JSON.parse(res.body)).toEqual({ purged: 2 });
    expect(await cache(q)).toBe('miss');
  });

  it('prefix=: the parameters named, in any order, the last one cut short; the others stay', async () => {
    const named = ['action=query&list=allpages&apfrom=A&format=json', 'action=query&list=allpages&apfrom=B&format=json&aplimit=5'];
    const other = ['action=query&list=allcategories&format=json', 'action=query&list=allpages&format=xml'];
    for (const q of [...named, ...other]) expect(await cache(q)).toBe('miss');
    // In the key these sort as aplimit…, apfrom…, action…, format…, list…: no key begins with this.
    const prefix = '/w/api.php?list=allpages&format=js';
    const res = await adminPost(t.gw.adminUrl, '/purge', { prefix });
    expect(res.status).toBe(200);
    expect(JSON.parse(res.body)).toEqual({ purged: 2 });
    for (const q of named) expect(await cache(q)).toBe('miss');
    for (const q of other) expect(await cache(q)).toBe('hit');
  });

  it('prefix= in the key’s own order still names what begins with it', async () => {
    expect(await cache('action=query&meta=siteinfo&siprop=general&format=json')).toBe('miss');
    const res = await adminPost(t.gw.adminUrl, '/purge', { prefix: '/w/api.php?action=query&format=json&meta=site' });
    expect(JSON.parse(res.body)).toEqual({ purged: 1 });
  });
});

// On one redis-server (SCAN of its URL index names) and on a Redis Cluster (the URL register read
// by range: src/cache/redis/keys.ts), the same answer.
describe.runIf(redisInstalled).each(REDIS_BACKENDS)('admin prefix purge in natural order, with %s', (_name, start) => {
  let fake: FakeUpstream;
  let redis: RunningRedisBackend;
  let gw: RunningGateway;
  beforeAll(async () => {
    fake = await startFakeUpstream(answerPublicOrSessionPrivate(new Map()));
    redis = await start();
    gw = await startGateway(fake.url, {
      WIKIEDGE_ADMIN_TOKEN: ADMIN_TOKEN,
      ...redis.env,
      WIKIEDGE_IDENTITY_SECRET: 'natural-order-tests-identity-secret',
    });
  }, 120_000);
  afterAll(async () => {
    await gw?.close();
    await fake?.close();
    await redis?.stop();
  });

  it('Redis’ copies of what the prefix names go too (its URL index names scanned, then matched as the local tier matches)', async () => {
    const named = ['action=query&list=allpages&apfrom=A&format=json', 'action=query&list=allpages&apfrom=B&format=json'];
    const other = 'action=query&list=allcategories&format=json';
    for (const q of [...named, other]) expect((await http(`${gw.apiUrl}?${q}`)).headers['x-cache']).toBe('miss');
    const res = await adminPost(gw.adminUrl, '/purge', { prefix: '/w/api.php?list=allpages&action=query' });
    // The only replica: no other is expected to answer (admin-purge-counts-every-replica for several).
    expect(JSON.parse(res.body)).toEqual({ purged: 2, redisPurged: 2, replicas: { answered: 0, expected: 0, purged: 0, missing: [] }, total: 4 });
    for (const q of named) expect((await http(`${gw.apiUrl}?${q}`)).headers['x-cache']).toBe('miss');
    expect((await http(`${gw.apiUrl}?${other}`)).headers['x-cache']).toBe('hit');
  });
});
