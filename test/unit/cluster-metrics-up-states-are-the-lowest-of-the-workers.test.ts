// A gauge that says whether something is up (1) or not (0) is never summed over a cluster's
// workers (src/cluster/metrics-aggregation.ts AGGREGATORS): summed, a Redis Cluster shard that
// one of two workers cannot reach read 1, and config/prometheus's WikiedgeRedisShardDown
// (`wikiedge_redis_shard_up == 0`) fired only once every worker had lost it. Each such gauge the
// gateway declares is checked here, so that a new one cannot be summed by default.
import { Registry } from 'prom-client';
import type { Logger } from 'pino';
import { describe, expect, it } from 'vitest';
import type { MetricsJson } from '../../src/cluster/messages.js';
import { AGGREGATORS, ClusterMetrics, GENERATION_AGGREGATORS } from '../../src/cluster/metrics-aggregation.js';
import { CompressionMetrics } from '../../src/compression/metrics.js';
import { DebuginfoMetrics } from '../../src/mediawiki/debuginfo/record.js';
import { ChangeSignalMetrics } from '../../src/observe/change-metrics.js';
import { Metrics, RedisMetrics } from '../../src/observe/metrics.js';
import { UpstreamProbeMetrics } from '../../src/upstream/probe.js';

type Metric = MetricsJson[number];
interface W {
  readonly id: number;
}

const shardUp = (byShard: Record<string, number>): Metric =>
  ({
    name: 'wikiedge_redis_shard_up',
    help: 'wikiedge_redis_shard_up',
    type: 'gauge',
    aggregator: 'sum',
    values: Object.entries(byShard).map(([shard, value]) => ({ value, labels: { shard } })),
  }) as unknown as Metric;

async function scrape(answers: Map<W, MetricsJson>): Promise<(series: string) => number | undefined> {
  const log = { warn: () => undefined } as unknown as Logger;
  const metrics = new ClusterMetrics<W>(async (w) => answers.get(w)!, log);
  const { body } = await metrics.exposition([...answers.keys()]);
  return (series) => {
    const line = body.split('\n').find((l) => l.startsWith(`${series} `));
    return line === undefined ? undefined : Number(line.slice(series.length + 1));
  };
}

describe('up states over a cluster’s workers', () => {
  it('wikiedge_redis_shard_up is 0 for a shard any worker cannot reach, 1 when every worker reaches it', async () => {
    const [w1, w2] = [{ id: 1 }, { id: 2 }];
    const healthy = await scrape(
      new Map([
        [w1, [shardUp({ '0': 1, '1': 1 })]],
        [w2, [shardUp({ '0': 1, '1': 1 })]],
      ]),
    );
    expect(healthy('wikiedge_redis_shard_up{shard="0"}')).toBe(1);
    expect(healthy('wikiedge_redis_shard_up{shard="1"}')).toBe(1);
    const oneLost = await scrape(
      new Map([
        [w1, [shardUp({ '0': 1, '1': 1 })]],
        [w2, [shardUp({ '0': 1, '1': 0 })]],
      ]),
    );
    expect(oneLost('wikiedge_redis_shard_up{shard="0"}')).toBe(1);
    expect(oneLost('wikiedge_redis_shard_up{shard="1"}')).toBe(0);
  });

  it('every gauge that is 1 or 0 (up, enabled, leader, info) has an aggregator other than sum', async () => {
    const registry = new Registry();
    new Metrics(registry, { collectDefaults: false });
    new RedisMetrics(registry);
    new ChangeSignalMetrics(registry, { followerEnabled: true });
    new UpstreamProbeMetrics(registry);
    new DebuginfoMetrics(registry);
    new CompressionMetrics(registry);
    const gauges = (await registry.getMetricsAsJSON()).filter((m) => (m.type as unknown as string) === 'gauge');
    // Their help says what 1 means: "1 when …", "Redis Cluster: 1 while …", "Always 1: …", "… always 1."
    const states = gauges.filter((m) => /(^|: )1 (when|while)\b|^Always 1\b|always 1\.$/.test(m.help));
    expect(states.map((m) => m.name)).toEqual(expect.arrayContaining(['wikiedge_redis_up', 'wikiedge_redis_shard_up', 'wikiedge_change_follower_up']));
    for (const aggregators of [AGGREGATORS, GENERATION_AGGREGATORS]) {
      const summed = states.filter((m) => (aggregators[m.name] ?? m.aggregator) === 'sum').map((m) => m.name);
      expect(summed).toEqual([]);
    }
  });
});

describe('up states of a worker that is leaving', () => {
  const redisUp = (value: number): Metric =>
    ({ name: 'wikiedge_redis_up', help: 'wikiedge_redis_up', type: 'gauge', aggregator: 'sum', values: [{ value, labels: {} }] }) as unknown as Metric;
  const requests = (value: number): Metric =>
    ({ name: 'wikiedge_requests_total', help: 'x', type: 'counter', aggregator: 'sum', values: [{ value, labels: {} }] }) as unknown as Metric;

  it('a draining worker (its Redis connection closed, so it says 0) no longer pulls wikiedge_redis_up to 0; its counts still count', async () => {
    const log = { warn: () => undefined } as unknown as Logger;
    const [staying, draining] = [{ id: 1 }, { id: 2 }];
    const answers = new Map<W, MetricsJson>([
      [staying, [redisUp(1), requests(5)]],
      [draining, [redisUp(0), requests(7)]],
    ]);
    const metrics = new ClusterMetrics<W>(async (w) => answers.get(w)!, log);
    const read = async (series: string) => {
      const { body } = await metrics.exposition([staying, draining]);
      const line = body.split('\n').find((l) => l.startsWith(`${series} `));
      return line === undefined ? undefined : Number(line.slice(series.length + 1));
    };
    // Not told it leaves: a worker that lost Redis is a worker that lost Redis.
    expect(await read('wikiedge_redis_up')).toBe(0);
    metrics.leaving(draining);
    expect(await read('wikiedge_redis_up')).toBe(1);
    expect(await read('wikiedge_requests_total')).toBe(12);
  });
});
