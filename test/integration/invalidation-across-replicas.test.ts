// Invalidation reaches every replica: two gateways sharing a real Redis (one redis-server, and a
// Redis Cluster of 3 masters + 3 replicas: test/support/redis-backends.ts) in front of the real wiki, MediaWiki's PURGEs sent to replica A only ($wgCdnServers), the change follower on
// both (one follows: the Redis lease). An edit made straight at the wiki is fresh on replica B
// (its local tier) and in Redis on the first read after the edit's answer; with PURGEs off the
// follower brings it within a poll; and an answer B fetched before the edit and received after
// the PURGE is delivered but kept neither in B's tier nor in Redis (the store guard), locally
// and for a replica that missed the purge message.
import { randomUUID } from 'node:crypto';
import type { Cluster, Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { INDEX_SHARDS, redisKeys } from '../../src/cache/redis/keys.js';
import { REDIS_BACKENDS } from '../support/redis-backends.js';
import type { RunningGateway } from '../support/gateway.js';
import { header, http } from '../support/http.js';
import { followerCaughtUp, metric, type Replicas, startReplicas, until } from '../support/replicas.js';
import { ADMIN_PASS, ADMIN_USER, apiWrite, loginCookies, setWikiToggle } from '../support/wiki.js';

const wiki = inject('wikiUrl');
const data = inject('wikiData');
/**
 * A read that went to the wiki: `miss`, or `pass` when the follower's invalidation of the same
 * edit (its recentchanges row) arrived while that read was under way, so it was not stored.
 */
const MISSED = ['miss', 'pass'];

describe.each(REDIS_BACKENDS)('invalidation across two replicas sharing %s', (_name, backend) => {
  let replicas: Replicas;
  let a: RunningGateway;
  let b: RunningGateway;
  let inspect: Redis | Cluster;
  let keys: ReturnType<typeof redisKeys>;
  let admin: string;

  beforeAll(async () => {
    replicas = await startReplicas(wiki, backend);
    ({ a, b } = replicas);
    await setWikiToggle(data, { cdn: [`127.0.0.1:${new URL(a.url).port}`] });
    inspect = await replicas.redis.client();
    keys = redisKeys('wikiedge:', replicas.redis.cluster);
    admin = await loginCookies(wiki, ADMIN_USER, ADMIN_PASS);
  }, 180_000);
  afterAll(async () => {
    await setWikiToggle(data, { cdn: [] });
    inspect?.disconnect();
    await replicas?.close();
  });

  const contentQuery = (title: string) =>
    `action=query&prop=revisions&rvprop=content&rvslots=main&titles=${encodeURIComponent(title)}&format=json&formatversion=2`;
  // Each read waits for its store, which runs after its answer (steps/flow.ts fetchAndStore).
  const read = async (gw: RunningGateway, q: string) => {
    const res = await http(`${gw.apiUrl}?${q}`);
    await gw.built.gateway.afterAnswers.settled(10_000);
    return res;
  };
  const content = (body: string) => JSON.parse(body).query.pages[0].revisions[0].slots.main.content as string;
  /** The Redis entries that depend on a page: its dependency index set (on a cluster, its INDEX_SHARDS parts). */
  const dependents = async (title: string) =>
    replicas.redis.cluster
      ? (await Promise.all(Array.from({ length: INDEX_SHARDS }, (_, n) => inspect.smembers(keys.depPart(`p:${title}`, n))))).flat()
      : inspect.smembers(keys.dep(`p:${title}`));
  const entriesExist = async (members: string[]) => (await Promise.all(members.map((m) => inspect.exists(keys.entryOf(m))))).reduce((s, n) => s + n, 0);

  it('one replica follows recentchanges, the other is vouched for by it', async () => {
    const leaders = [await metric(a, /^wikiedge_change_follower_leader (\d+)/m), await metric(b, /^wikiedge_change_follower_leader (\d+)/m)];
    expect(leaders.toSorted()).toEqual([0, 1]);
    expect(await metric(a, /^wikiedge_change_follower_up (\d+)/m)).toBe(1);
    expect(await metric(b, /^wikiedge_change_follower_up (\d+)/m)).toBe(1);
  });

  it('an edit straight at the wiki, purged through A: fresh on B and in Redis at once; unrelated entries stay hits', async () => {
    const title = `Across ${randomUUID()}`;
    const other = `Across unrelated ${randomUUID()}`;
    await apiWrite(wiki, admin, { action: 'edit', title, text: 'one' });
    await apiWrite(wiki, admin, { action: 'edit', title: other, text: 'stays' });
    // The follower applies both creations first (it would invalidate what is cached before).
    await followerCaughtUp([a, b]);
    const q = contentQuery(title);
    expect(header(await read(b, q), 'x-cache')).toBe('miss');
    expect(header(await read(b, q), 'x-cache')).toBe('hit');
    expect(header(await read(a, q), 'x-cache')).toBe('hit-shared');
    await read(b, contentQuery(other));
    expect(header(await read(b, contentQuery(other)), 'x-cache')).toBe('hit');
    const inRedis = await dependents(title);
    expect(inRedis.length).toBeGreaterThan(0);
    expect(await entriesExist(inRedis)).toBe(inRedis.length);

    await apiWrite(wiki, admin, { action: 'edit', title, text: 'two' });
    // The edit's answer came after MediaWiki's PURGE to A was answered: Redis is clean already.
    expect(await entriesExist(inRedis)).toBe(0);
    const onB = await read(b, q);
    expect(content(onB.body)).toBe('two');
    expect(MISSED).toContain(header(onB, 'x-cache'));
    expect(content((await read(a, q)).body)).toBe('two');
    expect(header(await read(b, contentQuery(other)), 'x-cache')).toBe('hit');
  });

  it('with PURGEs off, the follower (on whichever replica leads) makes B fresh within a poll or so', async () => {
    await setWikiToggle(data, { cdn: [] });
    try {
      const title = `Across followed ${randomUUID()}`;
      await apiWrite(wiki, admin, { action: 'edit', title, text: 'one' });
      // The follower applies the creation first (it would invalidate what is cached before).
      await followerCaughtUp([a, b]);
      const q = contentQuery(title);
      await read(b, q);
      await read(a, q);
      expect(header(await read(b, q), 'x-cache')).toBe('hit');
      expect(header(await read(a, q), 'x-cache')).toBe('hit');
      await apiWrite(wiki, admin, { action: 'edit', title, text: 'two' });
      await until('both replicas fresh', async () => content((await read(b, q)).body) === 'two' && content((await read(a, q)).body) === 'two');
    } finally {
      await setWikiToggle(data, { cdn: [`127.0.0.1:${new URL(a.url).port}`] });
    }
  });

  it('fetched by B before an edit, received after its PURGE: delivered, kept neither in B nor in Redis', async () => {
    const title = `Across race ${randomUUID()}`;
    await apiWrite(wiki, admin, { action: 'edit', title, text: 'before' });
    const marker = randomUUID();
    const q = `${contentQuery(title)}&requestid=${marker}`;
    const heard = () => metric(b, /^wikiedge_redis_purge_messages_total\{kind="tags"\} (\d+)/m);
    const heardBefore = await heard();
    const held = replicas.proxy.hold(marker);
    const slow = read(b, q);
    await held.answered;
    // The wiki has answered B with "before"; now the edit, and its PURGE through A.
    await apiWrite(wiki, admin, { action: 'edit', title, text: 'after' });
    // B's purge message must arrive before the old answer does (the channel is asynchronous).
    await until('B heard the invalidation', async () => (await heard()) > heardBefore);
    held.release();
    const first = await slow;
    expect(content(first.body)).toBe('before');
    const again = await read(b, q);
    expect(content(again.body)).toBe('after');
    expect(MISSED).toContain(header(again, 'x-cache'));
    expect(await metric(b, /^wikiedge_not_stored_total\{reason="invalidated"\} (\d+)/m)).toBeGreaterThanOrEqual(1);
  });

  it('a replica that missed the purge message still cannot write the old answer into Redis', async () => {
    // A bare tier (no subscriber of its own in play): it noted the mark, then the PURGE happened.
    const tier = replicas.redis.tier();
    try {
      expect(await tier.ready(5_000)).toBe(true);
      const title = `Across guard ${randomUUID()}`;
      await apiWrite(wiki, admin, { action: 'edit', title, text: 'before' });
      const mark = await tier.invalidationMark();
      expect(mark).toBeDefined();
      await apiWrite(wiki, admin, { action: 'edit', title, text: 'after' });
      const entry = {
        status: 200,
        headers: { 'content-type': 'application/json' },
        body: Buffer.from('{"old":true}'),
        storedAt: Date.now(),
        ttlMs: 3_600_000,
        urlKey: `/w/api.php?guard=${randomUUID()}`,
        modules: ['query+revisions'],
        slot: undefined,
        deps: ['*', `p:${title}`, 'n:0'],
      };
      expect(await tier.set('shared', `guard-old-${randomUUID()}`, entry, mark)).toBe(false);
      // Asked for after the PURGE: kept. (Once the write's invalidations are all in: the PURGE's
      // confirmation may be applied after the PURGE's answer on a busy machine, CONFIRM_WAIT_MS,
      // and its rebound later still; a mark taken before them is refused, rightly.)
      await until('an answer asked for after the PURGE is kept', async () =>
        tier.set('shared', `guard-new-${randomUUID()}`, entry, await tier.invalidationMark()),
      );
    } finally {
      await tier.close();
    }
  });
});
