// Redis pub/sub keeps nothing for a subscriber that is not there: purges and invalidations
// other replicas publish while a replica's channel connection is lost never reach it, and its
// local tier kept serving what they removed as hits for the whole (long) TTL. When the channel is
// subscribed again, the local tier is no longer vouched for: each entry is refreshed at its next
// use (from Redis when Redis holds a newer copy), and still answers while the wiki fails. On one
// redis-server and on a Redis Cluster (its sharded channel: every node's subscribers dropped).
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { header, http } from '../support/http.js';
import { REDIS_BACKENDS } from '../support/redis-backends.js';
import { metric, type Replicas, startReplicas, until } from '../support/replicas.js';
import { ADMIN_PASS, ADMIN_USER, apiWrite, loginCookies } from '../support/wiki.js';

const wiki = inject('wikiUrl');

describe.each(REDIS_BACKENDS)('a replica whose purge channel was lost (%s)', (_name, start) => {
  let replicas: Replicas;
  beforeAll(async () => {
    replicas = await startReplicas(wiki, start);
  });
  afterAll(() => replicas?.close());

  it('serves nothing it cached before as fresh once the channel is back', async () => {
    const { a, b, redis } = replicas;
    const admin = await loginCookies(wiki, ADMIN_USER, ADMIN_PASS);
    const title = `Channel lost ${randomUUID()}`;
    await apiWrite(wiki, admin, { action: 'edit', title, text: 'one' });
    const q = `${b.apiUrl}?action=query&prop=info&titles=${encodeURIComponent(title)}&format=json&formatversion=2`;
    await until('B holds the page as a hit', async () => {
      await http(q);
      return header(await http(q), 'x-cache') === 'hit';
    });
    const resumedBefore = await metric(b, /^wikiedge_redis_channel_resumed_total (\d+)/m);
    // Every subscriber connection dropped (as an output-buffer limit or a network cut would);
    // the clients reconnect and subscribe again on their own.
    await redis.everyNode('CLIENT KILL TYPE pubsub');
    await until('B subscribed again', async () => (await metric(b, /^wikiedge_redis_channel_resumed_total (\d+)/m)) > resumedBefore);
    expect(header(await http(q), 'x-cache')).not.toBe('hit');
    expect(await metric(a, /^wikiedge_redis_up (\d+)/m)).toBe(1);
  });
});
