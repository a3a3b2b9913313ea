// A purge made while an answer is on its way from the wiki must not be undone by storing that
// answer: the answer predates the purge. Dependency invalidations had this guard; PURGEs of a
// URL, the admin's module purges, logouts and users' rights changes did not, so an answer fetched
// just before any of them was stored again after it, for the whole (long) TTL of a followed wiki.
// After a logout that meant the old session cookie still got the session's private answer.
//
// Two replicas share one real redis-server, or a real Redis Cluster (test/support/redis-backends.ts),
// in front of the real wiki; B reaches the wiki through a proxy that holds an answer back until the
// purge has been made on A and has reached B.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { RunningGateway } from '../support/gateway.js';
import { header, http } from '../support/http.js';
import { REDIS_BACKENDS } from '../support/redis-backends.js';
import { metric, type Replicas, startReplicas, until } from '../support/replicas.js';
import { ADMIN_PASS, ADMIN_USER, LAB_USER, LAB_USER_PASS, apiLogout, apiWrite, loginCookies } from '../support/wiki.js';

const wiki = inject('wikiUrl');

describe.each(REDIS_BACKENDS)('a purge made while an answer is on its way is not undone by storing it (%s)', (_name, start) => {
  let replicas: Replicas;
  let a: RunningGateway;
  let b: RunningGateway;

  beforeAll(async () => {
    replicas = await startReplicas(wiki, start);
    ({ a, b } = replicas);
  });
  afterAll(() => replicas?.close());

  /** Purge messages of `kind` B has applied (each replica hears its own and the others'). */
  const heardOnB = (kind: string) => metric(b, new RegExp(`^wikiedge_redis_purge_messages_total\\{kind="${kind}"\\} (\\d+)`, 'm'));

  /**
   * B asks the wiki for `q` (with `cookie`); once the wiki has answered, `purge` runs on A and
   * the test waits until B has heard a purge message of `kind`; then B gets its answer.
   */
  async function purgeWhileFetching(q: string, marker: string, kind: string, purge: () => Promise<unknown>, cookie?: string) {
    const heard = await heardOnB(kind);
    const held = replicas.proxy.hold(marker);
    const slow = http(`${b.apiUrl}?${q}`, cookie ? { headers: { cookie } } : {});
    await held.answered;
    await purge();
    await until(`B heard the ${kind} purge`, async () => (await heardOnB(kind)) > heard);
    held.release();
    return slow;
  }

  it('PURGE of the URL on A: B delivers the answer it was fetching, but keeps it neither locally nor in Redis', async () => {
    const marker = randomUUID();
    const q = `action=query&meta=siteinfo&siprop=general&format=json&requestid=${marker}`;
    const notStored = await metric(b, /^wikiedge_not_stored_total\{reason="invalidated"\} (\d+)/m);
    const first = await purgeWhileFetching(q, marker, 'url', async () => {
      expect((await http(`${a.apiUrl}?${q}`, { method: 'PURGE' })).status).toBe(200);
    });
    expect(first.status).toBe(200);
    expect(await metric(b, /^wikiedge_not_stored_total\{reason="invalidated"\} (\d+)/m)).toBe(notStored + 1);
    // Not in B's tier, not in Redis (A would find it there).
    expect(header(await http(`${a.apiUrl}?${q}`), 'x-cache')).toBe('miss');
    // Its store runs after its answer (steps/flow.ts fetchAndStore).
    await a.built.gateway.afterAnswers.settled(10_000);
    expect(header(await http(`${b.apiUrl}?${q}`), 'x-cache')).toBe('hit-shared');
  });

  it("the admin's module purge on A: the answer B was fetching is not kept", async () => {
    const marker = randomUUID();
    const q = `action=query&meta=siteinfo&siprop=namespaces&format=json&requestid=${marker}`;
    await purgeWhileFetching(q, marker, 'module', async () => {
      const res = await http(`${a.adminUrl}/purge?module=siteinfo`, { method: 'POST', headers: { 'content-type': 'application/json' } });
      expect(res.status).toBe(200);
    });
    expect(header(await http(`${b.apiUrl}?${q}`), 'x-cache')).toBe('miss');
  });

  it('a logout through A while B fetches the session`s answer: the old cookie does not get it from the cache afterwards', async () => {
    const cookie = await loginCookies(wiki, LAB_USER, LAB_USER_PASS);
    const marker = randomUUID();
    const q = `action=query&meta=userinfo&format=json&requestid=${marker}`;
    const first = await purgeWhileFetching(
      q,
      marker,
      'slot',
      async () => {
        const out = await apiLogout(a.url, cookie);
        expect(out.status).toBe(200);
      },
      cookie,
    );
    expect(JSON.parse(first.body).query.userinfo.name).toBe(LAB_USER);
    // The same cookie, replayed: the wiki says it is nobody's session now; the cache must not say otherwise.
    const replay = await http(`${b.apiUrl}?${q}`, { headers: { cookie } });
    expect(header(replay, 'x-cache')).not.toBe('hit');
    expect(JSON.parse(replay.body).query.userinfo).toHaveProperty('anon');
  });

  it("a user's rights change ends its sessions' entries on a replica that never learned whose session it is", async () => {
    const admin = await loginCookies(wiki, ADMIN_USER, ADMIN_PASS);
    const user = await loginCookies(wiki, LAB_USER, LAB_USER_PASS);
    // Only A serves the answer that says whose session this is (userinfo)...
    const who = `action=query&meta=userinfo&uiprop=groups&format=json&requestid=${randomUUID()}`;
    const groups = JSON.parse((await http(`${a.apiUrl}?${who}`, { headers: { cookie: user } })).body).query.userinfo.groups as string[];
    // ... while B holds one of the session's answers in its own tier.
    const page = `action=query&prop=info&titles=Main%20Page&format=json&requestid=${randomUUID()}`;
    await http(`${b.apiUrl}?${page}`, { headers: { cookie: user } });
    // B asks Redis whose session it is once the client has its answer, and stores after that
    // (steps/flow.ts fetchAndStore): until then the next read would be `coalesced`.
    await b.built.gateway.afterAnswers.settled(10_000);
    expect(header(await http(`${b.apiUrl}?${page}`, { headers: { cookie: user } }), 'x-cache')).toBe('hit');
    const adding = !groups.includes('bot');
    await apiWrite(wiki, admin, { action: 'userrights', user: LAB_USER, [adding ? 'add' : 'remove']: 'bot', reason: 'wikiedge test' });
    try {
      // Whichever replica follows, B's entry goes once the follower reads the rights log row.
      await until(
        'B`s entry of the session evicted',
        async () => header(await http(`${b.apiUrl}?${page}`, { headers: { cookie: user } }), 'x-cache') !== 'hit',
      );
    } finally {
      await apiWrite(wiki, admin, { action: 'userrights', user: LAB_USER, [adding ? 'remove' : 'add']: 'bot', reason: 'wikiedge test' });
    }
  });

  it('a replica that missed the purge message still cannot write the purged URL into Redis', async () => {
    const tier = replicas.redis.tier();
    try {
      expect(await tier.ready(5_000)).toBe(true);
      const q = `action=query&meta=siteinfo&siprop=general&format=json&requestid=${randomUUID()}`;
      const entry = {
        status: 200,
        headers: { 'content-type': 'application/json' },
        body: Buffer.from('{"old":true}'),
        storedAt: Date.now(),
        ttlMs: 3_600_000,
        urlKey: `/w/api.php?${q}`,
        modules: ['query', 'siteinfo'],
        slot: undefined,
        deps: [],
      };
      const mark = await tier.invalidationMark();
      expect(await tier.purge({ kind: 'url', urlKey: entry.urlKey })).toBe(0);
      expect(await tier.set('shared', `${entry.urlKey}\nold`, entry, mark)).toBe(false);
      // Asked for after the PURGE: kept.
      expect(await tier.set('shared', `${entry.urlKey}\nnew`, entry, await tier.invalidationMark())).toBe(true);
    } finally {
      await tier.close();
    }
  });
});
