// The purge channel counts as subscribed only once SUBSCRIBE (SSUBSCRIBE on a Redis Cluster's
// sharded channel) succeeded (src/cache/redis/connection.ts subscribeNow, shard-channel.ts
// subscribe). It used to count at once: on a cluster before any connection, on one Redis as soon
// as the connection was ready. A first SUBSCRIBE that failed was then no loss, left a connection
// that heard nothing and was never tried again, so purges other replicas published meanwhile were
// missed with no gap ever taken. Now a subscription that fails is a lost channel like any other,
// tried again, and its success is a resume: the gap (what the local tier holds is refreshed at
// its next use). On one redis-server and on a Redis Cluster.
//
// The replica's ACL user may run every command but subscribe to no channel (`resetchannels`,
// https://redis.io/docs/latest/operate/oss_and_stack/management/security/acl/), so its SUBSCRIBE
// is refused with NOPERM while its commands work; then the channel is allowed (`allchannels`).
import pino from 'pino';
import { Registry } from 'prom-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CacheEntry } from '../../src/cache/entry.js';
import { CacheStore } from '../../src/cache/store.js';
import { TieredStorage } from '../../src/cache/tiered-storage.js';
import { RedisMetrics } from '../../src/observe/metrics.js';
import { SessionUsers } from '../../src/policy/session-users.js';
import { REDIS_BACKENDS, redisInstalled, type RunningRedisBackend } from '../support/redis-backends.js';
import { until } from '../support/until.js';

describe.runIf(redisInstalled).each(REDIS_BACKENDS)('a purge channel on %s whose first SUBSCRIBE is refused', (_name, start) => {
  let redis: RunningRedisBackend;
  const storages: TieredStorage[] = [];

  beforeAll(async () => {
    redis = await start();
    for (const answer of await redis.everyNode('ACL SETUSER channelless on >channelless-pw ~* +@all resetchannels')) expect(answer).toBe('+OK\r\n');
  }, 120_000);
  afterAll(async () => {
    await Promise.all(storages.map((s) => s.close()));
    await redis?.stop();
  });

  const nodes = () =>
    redis.env['WIKIEDGE_REDIS_CLUSTER_NODES']!.split(',').map((a) => ({ host: a.slice(0, a.lastIndexOf(':')), port: Number(a.slice(a.lastIndexOf(':') + 1)) }));

  function replica(user: { username: string; password: string } | undefined, registry = new Registry()) {
    const log = pino({ level: 'silent' });
    const store = new CacheStore({ sharedMaxBytes: 1 << 22, sessionMaxBytes: 1 << 22, maxEntries: 1_000, graceMs: 0, staleIfErrorMs: 0, now: Date.now });
    const storage = new TieredStorage({ store, users: new SessionUsers(), now: Date.now, log }, (hooks) =>
      redis.tier({
        timeoutMs: 300,
        keyPrefix: 'firstsub:',
        metrics: new RedisMetrics(registry),
        ...(user && {
          target: redis.cluster
            ? { kind: 'cluster' as const, nodes: nodes(), ...user, tls: false }
            : { kind: 'url' as const, url: redis.env['WIKIEDGE_REDIS_URL']!, ...user },
        }),
        ...hooks,
      }),
    );
    storages.push(storage);
    return { storage, store };
  }

  const entry = (url: string): CacheEntry => ({
    status: 200,
    headers: { 'content-type': 'application/json' },
    body: Buffer.from('{"v":1}'),
    storedAt: Date.now(),
    ttlMs: 600_000,
    urlKey: url,
    modules: ['query'],
    slot: undefined,
    deps: ['*'],
  });
  const keyOf = (url: string) => `${url}\nanon\n-`;

  it('is not heard until SUBSCRIBE succeeds, and that success takes the gap', async () => {
    const registry = new Registry();
    const resumed = async () => (await registry.getSingleMetric('wikiedge_redis_channel_resumed_total')!.get()).values[0]!.value;
    const a = replica({ username: 'channelless', password: 'channelless-pw' }, registry);
    const b = replica(undefined);
    await Promise.all([a.storage.open(3_000), b.storage.open(5_000)]);

    // A's commands work; its channel does not (NOPERM on SUBSCRIBE or SSUBSCRIBE).
    const before = '/w/api.php?action=query&firstsub=before';
    expect(await a.storage.store('shared', keyOf(before), entry(before), await a.storage.mark())).toBe(true);
    expect(a.storage.freshness(a.store.get('shared', keyOf(before))!)).toBe('fresh');
    // B's purge is published while A is not subscribed: A never hears it.
    expect((await b.storage.purge({ kind: 'url', urlKey: before })).redisPurged).toBe(1);
    await new Promise((r) => setTimeout(r, 500));
    expect(a.store.get('shared', keyOf(before))).toBeDefined();
    expect(await resumed()).toBe(0);

    for (const answer of await redis.everyNode('ACL SETUSER channelless allchannels')) expect(answer).toBe('+OK\r\n');
    // The first SUBSCRIBE that succeeds is a resume: the gap is taken.
    await until(resumed, (n) => n >= 1, 15_000);
    expect(a.storage.freshness(a.store.get('shared', keyOf(before))!)).not.toBe('fresh');

    // And purges reach A from now on.
    const after = '/w/api.php?action=query&firstsub=after';
    expect(await a.storage.store('shared', keyOf(after), entry(after), await a.storage.mark())).toBe(true);
    expect((await b.storage.purge({ kind: 'url', urlKey: after })).redisPurged).toBe(1);
    await until(
      async () => a.store.get('shared', keyOf(after)),
      (e) => e === undefined,
      5_000,
    );
  }, 60_000);
});
