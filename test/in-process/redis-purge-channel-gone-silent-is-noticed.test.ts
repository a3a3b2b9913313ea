// A purge channel whose path dies silently (a NAT or a proxy that drops the subscriber's
// connection without closing it, while the command connection lives on) is noticed: the
// subscriber connection is asked PING, and no answer within its bound is a lost channel, taken as
// a close (src/cache/redis/connection.ts checkChannel): connect again, subscribe again, take the
// gap. Without it nothing was ever sent on that connection, so only TCP keepalive noticed,
// minutes later, while wikiedge_redis_up stayed 1 and every purge by another replica was missed.
//
// The replica's subscriber reaches a real redis-server through a TCP proxy in this test that can
// stop forwarding its connections without closing them; its command connection goes straight.
// Both subscribers: one Redis' (SUBSCRIBE; Sentinel's is the same client), and a Redis
// Cluster's sharded channel (src/cache/redis/shard-channel.ts, SSUBSCRIBE), here over a
// standalone redis-server, which takes SSUBSCRIBE and SPUBLISH too, named as the owner of the
// channel's slot.
import { EventEmitter } from 'node:events';
import net, { type AddressInfo, type Socket } from 'node:net';
import { type Cluster, Redis } from 'ioredis';
import pino, { type Logger } from 'pino';
import { Registry } from 'prom-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CacheEntry } from '../../src/cache/entry.js';
import { RedisConnection } from '../../src/cache/redis/connection.js';
import { ShardChannel, slotOf } from '../../src/cache/redis/shard-channel.js';
import { CacheStore } from '../../src/cache/store.js';
import { TieredStorage } from '../../src/cache/tiered-storage.js';
import { RedisMetrics } from '../../src/observe/metrics.js';
import { SessionUsers } from '../../src/policy/session-users.js';
import { redisInstalled } from '../support/redis-backends.js';
import { bareRedisTier, startRedis, type TestRedis } from '../support/redis.js';
import { until } from '../support/until.js';

/** A TCP proxy to `port` whose connections can go silent: open, but nothing forwarded either way. */
async function silenceableProxy(port: number) {
  const pairs = new Set<{ client: Socket; upstream: Socket; silent: boolean }>();
  const server = net.createServer((client) => {
    const upstream = net.connect(port, '127.0.0.1');
    const pair = { client, upstream, silent: false };
    pairs.add(pair);
    client.on('data', (d) => void (pair.silent || upstream.write(d)));
    upstream.on('data', (d) => void (pair.silent || client.write(d)));
    const done = () => {
      client.destroy();
      upstream.destroy();
      pairs.delete(pair);
    };
    client.on('error', done).on('close', done);
    upstream.on('error', done).on('close', done);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    /** Every connection open now stops forwarding (and stays open); later ones forward. */
    silence(): number {
      for (const p of pairs) p.silent = true;
      return pairs.size;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const p of pairs) p.client.destroy();
        server.close(() => resolve());
      }),
  };
}

describe.runIf(redisInstalled)('a purge channel whose path goes silent', () => {
  let redis: TestRedis;
  let proxy: Awaited<ReturnType<typeof silenceableProxy>>;
  const storages: TieredStorage[] = [];

  beforeAll(async () => {
    redis = await startRedis();
    proxy = await silenceableProxy(redis.port);
  }, 45_000);
  afterAll(async () => {
    await Promise.all(storages.map((s) => s.close()));
    await proxy?.close();
    await redis?.stop();
  });

  function replica(options: { subscriberThroughProxy: boolean; registry?: Registry; log?: Logger }) {
    const log = options.log ?? pino({ level: 'silent' });
    const store = new CacheStore({ sharedMaxBytes: 1 << 22, sessionMaxBytes: 1 << 22, maxEntries: 1_000, graceMs: 0, staleIfErrorMs: 0, now: Date.now });
    const storage = new TieredStorage({ store, users: new SessionUsers(), now: Date.now, log }, (hooks) =>
      bareRedisTier(redis.url, {
        timeoutMs: 50,
        keyPrefix: 'silent:',
        log,
        metrics: new RedisMetrics(options.registry ?? new Registry()),
        connect: (url, o) =>
          options.subscriberThroughProxy && o.connectionName === 'wikiedge-sub' ? new Redis(`redis://127.0.0.1:${proxy.port}`, o) : new Redis(url, o),
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

  it('is dropped within its bound, the gap taken, and purges reach the replica again', async () => {
    const registry = new Registry();
    const lines: Record<string, unknown>[] = [];
    const a = replica({ subscriberThroughProxy: true, registry, log: pino({ level: 'info' }, { write: (s: string) => lines.push(JSON.parse(s)) }) });
    const b = replica({ subscriberThroughProxy: false });
    await a.storage.open(5_000);
    await b.storage.open(5_000);
    const metric = async (name: string) => (await registry.getSingleMetric(name)!.get()).values[0]!.value;

    const before = '/w/api.php?action=query&silent=before';
    expect(await a.storage.store('shared', keyOf(before), entry(before), await a.storage.mark())).toBe(true);
    expect(a.storage.freshness(a.store.get('shared', keyOf(before))!)).toBe('fresh');

    // Only the subscriber goes through the proxy: one connection goes silent.
    expect(proxy.silence()).toBe(1);
    const silentAt = Date.now();
    // B purges the page: A cannot hear it, so it must not go on vouching for what it holds.
    expect((await b.storage.purge({ kind: 'url', urlKey: before })).redisPurged).toBe(1);
    await until(
      () => metric('wikiedge_redis_channel_resumed_total'),
      (n) => n >= 1,
      25_000,
    );
    // PING every 2 s, two in a row unanswered within max(1 s, 20 × 50 ms) each, then a reconnect:
    // about 6 s at worst, well under 15 s.
    expect(Date.now() - silentAt).toBeLessThan(15_000);
    expect(lines.some((l) => l['redisSubscriber'] === 'silent')).toBe(true);
    // The gap: what A held is refreshed at its next use, not served as fresh.
    expect(a.storage.freshness(a.store.get('shared', keyOf(before))!)).not.toBe('fresh');
    // The command connection never failed: the tier stayed up all along.
    expect(await metric('wikiedge_redis_up')).toBe(1);
    expect(await metric('wikiedge_redis_down_total')).toBe(0);

    // The new connection carries purges again.
    const after = '/w/api.php?action=query&silent=after';
    expect(await a.storage.store('shared', keyOf(after), entry(after), await a.storage.mark())).toBe(true);
    expect((await b.storage.purge({ kind: 'url', urlKey: after })).redisPurged).toBe(1);
    await until(
      async () => a.store.get('shared', keyOf(after)),
      (e) => e === undefined,
      5_000,
    );
  }, 45_000);
});

describe.runIf(redisInstalled)('a sharded purge channel whose path goes silent', () => {
  let redis: TestRedis;
  let proxy: Awaited<ReturnType<typeof silenceableProxy>>;
  let connection: RedisConnection | undefined;
  let publisher: Redis | undefined;

  beforeAll(async () => {
    redis = await startRedis();
    proxy = await silenceableProxy(redis.port);
  }, 45_000);
  afterAll(async () => {
    publisher?.disconnect();
    await connection?.close();
    await proxy?.close();
    await redis?.stop();
  });

  it('is dropped within its bound, subscribed again, and heard again', async () => {
    const channel = 'wikiedge:purge';
    // What the shard channel reads of a cluster client: the owner of each slot, and its events.
    const cluster = Object.assign(new EventEmitter(), { slots: [] as string[][], refreshSlotsCache: () => undefined });
    cluster.slots[slotOf(channel)] = [`127.0.0.1:${proxy.port}`];
    const registry = new Registry();
    const lines: Record<string, unknown>[] = [];
    let resumed = 0;
    const heard: string[] = [];
    connection = new RedisConnection({
      url: redis.url,
      timeoutMs: 50,
      log: pino({ level: 'info' }, { write: (s: string) => lines.push(JSON.parse(s)) }),
      metrics: new RedisMetrics(registry),
      connect: (url, o) => (o.connectionName === 'wikiedge-sub' ? (new ShardChannel(cluster as unknown as Cluster, o) as unknown as Redis) : new Redis(url, o)),
      onChannelResumed: () => resumed++,
    });
    connection.subscribe(channel, (text) => heard.push(text));
    expect(await connection.ready(5_000)).toBe(true);
    publisher = new Redis(redis.url);
    await publisher.spublish(channel, 'one');
    await until(
      async () => heard.length,
      (n) => n === 1,
      5_000,
    );

    expect(proxy.silence()).toBe(1);
    const silentAt = Date.now();
    await publisher.spublish(channel, 'missed');
    await until(
      async () => resumed,
      (n) => n >= 1,
      25_000,
    );
    expect(Date.now() - silentAt).toBeLessThan(15_000);
    expect(lines.some((l) => l['redisSubscriber'] === 'silent')).toBe(true);
    expect(heard).toEqual(['one']);
    expect(connection.up).toBe(true);

    await publisher.spublish(channel, 'two');
    await until(
      async () => heard,
      (h) => h.includes('two'),
      5_000,
    );
  }, 45_000);
});
