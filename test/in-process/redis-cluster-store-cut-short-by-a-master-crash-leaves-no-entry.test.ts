// On a Redis Cluster an entry and its index sets live on different masters (keys.ts): a store
// joins the sets, then writes the entry (src/cache/redis/cluster-writes.ts store). Here the master
// that holds a URL's index set (`u:`) is killed (SIGKILL: a crash), and a replica stores an answer
// of that URL at once, its entry's key on a healthy master. The store fails, and must leave no
// entry behind: the join and the SET used to go out together, the SET landed, and once the
// cluster had promoted the dead master's replica a PURGE of the URL removed nothing ("redisPurged":
// 0) and another replica still read the purged answer from Redis (hit-shared) until its TTL.
import { existsSync } from 'node:fs';
import { randomUUID } from 'node:crypto';
import { Cluster } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CacheEntry } from '../../src/cache/entry.js';
import type { RedisTier } from '../../src/cache/redis-tier.js';
import { redisKeys } from '../../src/cache/redis/keys.js';
import { slotOf } from '../../src/cache/redis/shard-channel.js';
import { bareRedisTier } from '../support/redis.js';
import { startCluster, type TestCluster } from '../support/redis-cluster.js';
import { until } from '../support/until.js';

const PREFIX = 'wikiedge:';

describe.runIf(existsSync('/usr/bin/redis-server') && existsSync('/usr/bin/redis-cli'))('a Redis Cluster: a store cut short by a master crash', () => {
  let cluster: TestCluster;
  let a: RedisTier;
  let b: RedisTier;
  let look: Cluster;
  const keys = redisKeys(PREFIX, true);

  beforeAll(async () => {
    cluster = await startCluster();
    const nodes = cluster.nodes.map((n) => ({ host: '127.0.0.1', port: n.port }));
    const target = { kind: 'cluster', nodes, username: '', password: '', tls: false } as const;
    // Two replicas of the gateway, each its own tier.
    [a, b] = [bareRedisTier('', { target, timeoutMs: 1_000 }), bareRedisTier('', { target, timeoutMs: 1_000 })];
    expect(await a.ready(20_000)).toBe(true);
    expect(await b.ready(20_000)).toBe(true);
    look = new Cluster(nodes, { lazyConnect: true, redisOptions: { maxRetriesPerRequest: 1 } });
    look.on('error', () => undefined);
    await look.connect();
  }, 120_000);

  afterAll(async () => {
    look?.disconnect();
    await Promise.all([a?.close(), b?.close()]);
    await cluster?.stop();
  });

  const entry = (url: string): CacheEntry => ({
    status: 200,
    headers: { 'content-type': 'application/json' },
    body: Buffer.from('{"version":1}'),
    storedAt: Date.now(),
    ttlMs: 600_000,
    urlKey: url,
    modules: [],
    slot: undefined,
    deps: [],
  });

  it('the store fails and leaves no entry that a purge cannot find', async () => {
    // A URL whose index set is on one master and whose entry is on another; the first master
    // holds neither the global keys nor the purge channel (so that only the store meets it).
    const spared = new Set([await cluster.ownerOf(slotOf(keys.invalidationSeq)), await cluster.ownerOf(slotOf(keys.channel))]);
    let url = '';
    let key = '';
    let victim = 0;
    for (let i = 0; ; i++) {
      url = `/w/api.php?action=query&format=json&t=${randomUUID()}`;
      key = `${url}\nanon\n-`;
      const [setOwner, entryOwner] = [await cluster.ownerOf(slotOf(keys.url(url))), await cluster.ownerOf(slotOf(keys.entry(key)))];
      if (setOwner !== entryOwner && !spared.has(setOwner)) {
        victim = setOwner;
        break;
      }
      if (i > 200) throw new Error('no URL with its index set alone on a master');
    }
    const mark = await a.invalidationMark();
    expect(mark).toBeDefined();

    await cluster.nodes.find((n) => n.port === victim)!.kill('SIGKILL');
    expect(await a.set('shared', key, entry(url), mark)).toBe(false);

    // The dead master's replica takes over, and both replicas use Redis again.
    await until(
      () => cluster.ownerOf(slotOf(keys.url(url))).catch(() => victim),
      (owner) => owner !== victim,
      60_000,
    );
    await until(
      async () => (await a.purge({ kind: 'url', urlKey: url })) !== null && b.up,
      (ok) => ok,
      30_000,
    );
    expect(await look.exists(keys.entry(key))).toBe(0);
    expect(await b.get('shared', key)).toBeUndefined();
  }, 120_000);
});
