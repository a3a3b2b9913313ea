// When a Redis Cluster master lost its data (src/cache/redis/cluster-watch.ts: another run_id at
// its address), the gap is recorded through `onDataLost`; while Redis cannot take it (the tier
// down), it is tried again every second until it can, `fresh` only on the first call, so that the
// local tier is expired once per loss and not at every retry while it fills from the wiki. A
// stand-in cluster answers INFO with a run_id the test changes; time is faked.
import { EventEmitter } from 'node:events';
import pino from 'pino';
import { Registry } from 'prom-client';
import type { Cluster } from 'ioredis';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ClusterWatch } from '../../src/cache/redis/cluster-watch.js';
import { DataLossGaps } from '../../src/cache/redis/data-loss-gaps.js';
import { RedisMetrics } from '../../src/observe/metrics.js';

function standIn() {
  const cluster = new EventEmitter() as EventEmitter & { slots: string[][]; nodes(): unknown[]; runId: string };
  cluster.runId = 'aaaa';
  cluster.slots = [['127.0.0.1:7000', '127.0.0.1:7001']];
  cluster.nodes = () => [{ options: { host: '127.0.0.1', port: 7000 }, info: () => Promise.resolve(`# Server\r\nrun_id:${cluster.runId}\r\n`) }];
  return cluster;
}

describe('a gap after a master lost its data', () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('is tried again each second until Redis takes it, fresh only the first time', async () => {
    const cluster = standIn();
    const registry = new Registry();
    const metrics = new RedisMetrics(registry);
    const answers = [false, false, true];
    const calls: boolean[] = [];
    const gaps = new DataLossGaps((fresh) => {
      calls.push(fresh);
      return Promise.resolve(answers.shift() ?? true);
    });
    const watch = new ClusterWatch(cluster as unknown as Cluster, metrics, pino({ level: 'silent' }), 50, gaps);
    // The first INFO, every 5 s: a run_id seen, no loss.
    await vi.advanceTimersByTimeAsync(5_000);
    expect(calls).toEqual([]);

    cluster.runId = 'bbbb';
    await vi.advanceTimersByTimeAsync(5_000);
    expect(calls).toEqual([true]);
    await vi.advanceTimersByTimeAsync(1_000);
    expect(calls).toEqual([true, false]);
    await vi.advanceTimersByTimeAsync(1_000);
    expect(calls).toEqual([true, false, false]);
    // Taken: no more calls, and the same run_id is no new loss.
    await vi.advanceTimersByTimeAsync(12_000);
    expect(calls).toEqual([true, false, false]);
    const lost = (await registry.getSingleMetric('wikiedge_redis_shard_data_lost_total')!.get()).values;
    expect(lost).toEqual([expect.objectContaining({ labels: { cause: 'restart' }, value: 1 })]);
    watch.close();
    gaps.close();
  });
});
