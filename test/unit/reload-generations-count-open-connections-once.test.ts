// The single process's /metrics during a reload (src/cluster/generations.ts): the open client
// connections are handed to the next gateway, which counts them, while the old one still counts
// those it had until it retires. wikiedge_client_connections is the highest of the live
// generations (GENERATION_AGGREGATORS), not their sum; a cluster's workers, each with connections
// of its own, are still summed (AGGREGATORS).
import type { Logger } from 'pino';
import { describe, expect, it } from 'vitest';
import type { MetricsJson } from '../../src/cluster/messages.js';
import { ClusterMetrics, GENERATION_AGGREGATORS } from '../../src/cluster/metrics-aggregation.js';

type Metric = MetricsJson[number];
interface G {
  readonly id: number;
}

const gauge = (name: string, value: number): Metric =>
  ({ name, help: name, type: 'gauge', aggregator: 'sum', values: [{ value, labels: {} }] }) as unknown as Metric;

async function read(figures: MetricsJson[], aggregators?: typeof GENERATION_AGGREGATORS): Promise<(series: string) => number | undefined> {
  const log = { warn: () => undefined } as unknown as Logger;
  const parts = new Map(figures.map((f, i) => [{ id: i + 1 } as G, f]));
  const metrics = new ClusterMetrics<G>(async (g) => parts.get(g)!, log, undefined, aggregators);
  const { body } = await metrics.exposition([...parts.keys()]);
  return (series) => {
    const line = body.split('\n').find((l) => l.startsWith(`${series} `));
    return line === undefined ? undefined : Number(line.slice(series.length + 1));
  };
}

describe('open client connections across a reload', () => {
  it('the old gateway draining 3 of them, the new one counting those 3 and 2 more: 5, not 8', async () => {
    const during = await read([[gauge('wikiedge_client_connections', 3)], [gauge('wikiedge_client_connections', 5)]], GENERATION_AGGREGATORS);
    expect(during('wikiedge_client_connections')).toBe(5);
  });

  it('a Redis that the new gateway has not reached yet reads 0, as in a cluster', async () => {
    const during = await read([[gauge('wikiedge_redis_up', 1)], [gauge('wikiedge_redis_up', 0)]], GENERATION_AGGREGATORS);
    expect(during('wikiedge_redis_up')).toBe(0);
  });

  it('workers, each with its own connections, are summed', async () => {
    const workers = await read([[gauge('wikiedge_client_connections', 3)], [gauge('wikiedge_client_connections', 5)]]);
    expect(workers('wikiedge_client_connections')).toBe(8);
  });
});
