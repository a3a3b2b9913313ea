// The shared tier on a real Redis Cluster (3 masters, 3 replicas): entries, their locks and index
// sets spread over every master, a tag that every entry depends on has its index in parts on
// every master (its invalidation does not land on one node), no call fails on the way (no MOVED
// left unfollowed, no CROSSSLOT: src/cache/redis/keys.ts, cluster-writes.ts), and an invalidation
// of that tag removes every entry from every master. The register of URL keys that prefix purges
// read stays about as large as what is stored.
import pino from 'pino';
import { Registry } from 'prom-client';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { CacheEntry } from '../../src/cache/entry.js';
import { INDEX_SHARDS, redisKeys } from '../../src/cache/redis/keys.js';
import { slotOf } from '../../src/cache/redis/shard-channel.js';
import { RedisTier } from '../../src/cache/redis-tier.js';
import { RedisMetrics } from '../../src/observe/metrics.js';
import { startCluster, type TestCluster } from '../support/redis-cluster.js';
import { inspector } from '../support/redis-topology.js';

async function askNode(port: number, ...args: string[]): Promise<unknown> {
  const c = await inspector(port);
  try {
    return await c.call(args[0]!, ...args.slice(1));
  } finally {
    c.disconnect();
  }
}

let cluster: TestCluster;
let tier: RedisTier;
const registry = new Registry();
const PREFIX = 'spread:';
const N = 600;

beforeAll(async () => {
  cluster = await startCluster();
  tier = new RedisTier({
    url: '',
    target: { kind: 'cluster', nodes: cluster.nodes.map((n) => ({ host: '127.0.0.1', port: n.port })), username: '', password: '', tls: false },
    timeoutMs: 2_000,
    lockMs: 3_000,
    keyPrefix: PREFIX,
    // A URL leaves the register this long after its entries' end (ENDED_KEPT_MS, a minute in production).
    endedKeptMs: 100,
    windows: { graceMs: 0, staleIfErrorMs: 0 },
    now: Date.now,
    log: pino({ level: 'silent' }),
    metrics: new RedisMetrics(registry),
    onPurge: () => undefined,
  });
  expect(await tier.ready(20_000)).toBe(true);
}, 180_000);

afterAll(async () => {
  await tier?.close();
  await cluster?.stop();
});

const entry = (urlKey: string): CacheEntry => ({
  status: 200,
  headers: { 'content-type': 'application/json' },
  body: Buffer.from(`{"u":"${urlKey}"}`),
  storedAt: Date.now(),
  ttlMs: 600_000,
  urlKey,
  modules: ['query', 'siteinfo'],
  slot: undefined,
  deps: ['*', `p:0:Page_${urlKey.length % 7}`],
});

async function errors(): Promise<number> {
  const values = (await registry.getSingleMetric('wikiedge_redis_errors_total')!.get()).values;
  return values.reduce((a, v) => a + v.value, 0);
}

it('entries and index parts land on every master, evenly, and one invalidation empties them all', async () => {
  const mark = await tier.invalidationMark();
  expect(mark).toBeDefined();
  const keys: string[] = [];
  for (let i = 0; i < N; i += 50) {
    const batch = Array.from({ length: 50 }, (_, k) => `/w/api.php?action=query&n=${i + k}`);
    keys.push(...batch);
    const stored = await Promise.all(batch.map((u) => tier.set('shared', `${u}\nanon\n-`, entry(u), mark)));
    expect(stored.every(Boolean)).toBe(true);
  }
  expect(await errors()).toBe(0);

  // Every master holds a fair share of the keys (entries, index sets): within ±40 % of a third.
  const perMaster = await cluster.keysPerMaster();
  const counts = [...perMaster.values()];
  const total = counts.reduce((a, b) => a + b, 0);
  console.log(`keys per master (of ${total}): ${counts.join(', ')}`);
  expect(counts).toHaveLength(3);
  for (const c of counts) expect(c).toBeGreaterThan((total / 3) * 0.6);

  // The popular tag ('*', on every entry) has its index in INDEX_SHARDS parts, on every master.
  const k = redisKeys(PREFIX, true);
  const owners = new Set<number>();
  for (let n = 0; n < INDEX_SHARDS; n++) owners.add(await cluster.ownerOf(slotOf(k.depPart('*', n))));
  console.log(`the parts of the index of '*' are on ${owners.size} of 3 masters`);
  expect(owners.size).toBe(3);

  // Every entry is there, from any replica's point of view (one GET each).
  const found = await Promise.all(keys.map((u) => tier.get('shared', `${u}\nanon\n-`)));
  expect(found.filter(Boolean)).toHaveLength(N);

  // One invalidation of '*' removes every entry from every master.
  expect(await tier.purge({ kind: 'tags', tags: ['*'] })).toBe(N);
  const after = await Promise.all(keys.map((u) => tier.get('shared', `${u}\nanon\n-`)));
  expect(after.filter(Boolean)).toHaveLength(0);
  expect(await errors()).toBe(0);
});

it('the URL register (prefix purges) forgets URLs whose entries have all ended', async () => {
  const k = redisKeys(PREFIX, true);
  const registered = async () => {
    let n = 0;
    for (let part = 0; part < INDEX_SHARDS; part++) {
      const port = await cluster.ownerOf(slotOf(k.urlRegisterEnds(part)));
      n += Number(await askNode(port, 'ZCARD', k.urlRegisterEnds(part)));
    }
    return n;
  };
  const before = await registered();
  // 40 URLs whose entries end within 300 ms, then (past endedKeptMs) 200 that live on: each store
  // forgets up to 16 ended URLs of its part.
  const mark = await tier.invalidationMark();
  const shortLived = (u: string): CacheEntry => ({ ...entry(u), storedAt: Date.now() - 600_000 + 300 });
  await Promise.all(Array.from({ length: 40 }, (_, i) => `/w/api.php?short=${i}`).map((u) => tier.set('shared', `${u}\nanon\n-`, shortLived(u), mark)));
  expect(await registered()).toBe(before + 40);
  await new Promise((r) => setTimeout(r, 600));
  for (let i = 0; i < 200; i += 20) {
    await Promise.all(Array.from({ length: 20 }, (_, j) => `/w/api.php?long=${i + j}`).map((u) => tier.set('shared', `${u}\nanon\n-`, entry(u), mark)));
  }
  expect(await registered()).toBe(before + 200);
});
