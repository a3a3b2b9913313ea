// One Redis (a URL, or the primary the Sentinels name) may lose writes it acknowledged: a restart
// reloads its last snapshot or nothing, a failover promotes a replica that lacks the last ones.
// Purges are writes: lost, the entries they removed and the guards they set are back, and every
// replica serves them as fresh. A Redis Cluster's masters were watched for this
// (cluster-watch.ts); the one primary was not. Another run_id after a reconnect (or, with
// Sentinels, another primary) is now a gap: nothing cached before it is vouched for, here and,
// through Redis' stale-before, on every replica (cache/redis/connection.ts notePrimary).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PurgeMessage } from '../../src/cache/purge.js';
import type { RedisTier } from '../../src/cache/redis-tier.js';
import { Registry } from 'prom-client';
import { RedisMetrics } from '../../src/observe/metrics.js';
import { redisInstalled } from '../support/redis-backends.js';
import { bareRedisTier, startRedis, type TestRedis } from '../support/redis.js';
import { until } from '../support/until.js';

describe.runIf(redisInstalled)('one Redis that restarts', () => {
  let redis: TestRedis;
  let tier: RedisTier;
  const purges: PurgeMessage[] = [];
  const registry = new Registry();
  const metrics = new RedisMetrics(registry);
  const lost = async () => (await registry.getSingleMetric('wikiedge_redis_shard_data_lost_total')!.get()).values.map((v) => [v.labels['cause'], v.value]);

  beforeAll(async () => {
    redis = await startRedis();
    tier = bareRedisTier(redis.url, { timeoutMs: 1_000, metrics, onPurge: (m) => void purges.push(m) });
    expect(await tier.ready(5_000)).toBe(true);
  }, 30_000);
  afterAll(async () => {
    await tier?.close();
    await redis?.stop();
  });

  it('no gap while it runs on', async () => {
    await new Promise((r) => setTimeout(r, 500));
    expect(purges.filter((m) => m.kind === 'expire')).toEqual([]);
    expect(await lost()).toEqual([]);
  });

  it('after it restarted (another run_id): one gap, here and in Redis for every replica', async () => {
    const before = Date.now();
    await redis.restart();
    const gap = await until(
      () => Promise.resolve(purges.find((m) => m.kind === 'expire')),
      (m) => m !== undefined,
      20_000,
    );
    expect((gap as { before: number }).before).toBeGreaterThanOrEqual(before);
    // Recorded in Redis: a replica started later honours it.
    await until(
      () => tier.staleBefore(),
      (at) => at !== undefined && at >= before,
      20_000,
    );
    // One loss seen (the gap reaches this process twice: at once, and back through the purge channel).
    expect(await lost()).toEqual([['restart', 1]]);
  }, 60_000);
});
