// The cluster's /metrics (src/cluster/metrics-aggregation.ts): the live workers' figures and the
// exited workers' counters summed, gauges that must not be summed aggregated otherwise, and a
// worker that does not answer counted with what it said last. Figures are literal, as
// Registry.getMetricsAsJSON() gives them; workers are plain objects.
import type { Logger } from 'pino';
import { describe, expect, it } from 'vitest';
import type { MetricsJson } from '../../src/cluster/messages.js';
import { ClusterMetrics } from '../../src/cluster/metrics-aggregation.js';

type Metric = MetricsJson[number];
type Labels = Record<string, string | number>;
interface W {
  readonly id: number;
}

function metric(type: 'counter' | 'gauge' | 'histogram', name: string, values: { value: number; labels?: Labels; metricName?: string }[]): Metric {
  return {
    name,
    help: name,
    type,
    aggregator: 'sum',
    values: values.map((v) => ({ labels: {}, ...v })),
  } as unknown as Metric;
}
const requests = (value: number): Metric => metric('counter', 'wikiedge_requests_total', [{ value, labels: { cache: 'hit' } }]);
const held = (value: number): Metric => metric('gauge', 'wikiedge_cache_bytes', [{ value, labels: { tier: 'shared' } }]);
const redisUp = (value: number): Metric => metric('gauge', 'wikiedge_redis_up', [{ value }]);
const upstreamInfo = (): Metric => metric('gauge', 'wikiedge_upstream_info', [{ value: 1, labels: { generator: 'MediaWiki 1.39.17' } }]);
const latency = (count: number, sum: number): Metric =>
  metric('histogram', 'wikiedge_request_duration_seconds', [
    { value: count, labels: { le: 0.1 }, metricName: 'wikiedge_request_duration_seconds_bucket' },
    { value: count, labels: { le: '+Inf' }, metricName: 'wikiedge_request_duration_seconds_bucket' },
    { value: sum, metricName: 'wikiedge_request_duration_seconds_sum' },
    { value: count, metricName: 'wikiedge_request_duration_seconds_count' },
  ]);

/** Workers whose answers the test sets: figures, or an Error for one that does not answer. */
function cluster() {
  const answers = new Map<W, MetricsJson | Error>();
  const warnings: { worker: number; msg: string }[] = [];
  const log = { warn: (o: { worker: number }, msg: string) => warnings.push({ worker: o.worker, msg }) } as unknown as Logger;
  const metrics = new ClusterMetrics<W>(async (w) => {
    const a = answers.get(w);
    if (a instanceof Error) throw a;
    if (!a) throw new Error('never set');
    return a;
  }, log);
  /** One series' value in the exposition of a scrape of these workers; undefined if absent. */
  const scrape = async (workers: W[]) => {
    const { body, contentType } = await metrics.exposition(workers);
    expect(contentType).toMatch(/^text\/plain/);
    return (series: string) => {
      const line = body.split('\n').find((l) => l.startsWith(`${series} `));
      return line === undefined ? undefined : Number(line.slice(series.length + 1));
    };
  };
  return { answers, warnings, metrics, scrape };
}

describe('ClusterMetrics', () => {
  it('sums the live workers’ counters and cache gauges', async () => {
    const c = cluster();
    const [w1, w2] = [{ id: 1 }, { id: 2 }];
    c.answers.set(w1, [requests(3), held(100)]);
    c.answers.set(w2, [requests(5), held(250)]);
    const read = await c.scrape([w1, w2]);
    expect(read('wikiedge_requests_total{cache="hit"}')).toBe(8);
    // Summed on purpose: bytes held and budget both become the machine's.
    expect(read('wikiedge_cache_bytes{tier="shared"}')).toBe(350);
  });

  it('wikiedge_redis_up is the lowest of the workers, never their sum', async () => {
    const c = cluster();
    const [w1, w2] = [{ id: 1 }, { id: 2 }];
    c.answers.set(w1, [redisUp(1)]);
    c.answers.set(w2, [redisUp(1)]);
    expect((await c.scrape([w1, w2]))('wikiedge_redis_up')).toBe(1);
    c.answers.set(w2, [redisUp(0)]);
    expect((await c.scrape([w1, w2]))('wikiedge_redis_up')).toBe(0);
  });

  it('wikiedge_upstream_info is 1 for what any worker saw, not the number of workers', async () => {
    const c = cluster();
    const [w1, w2] = [{ id: 1 }, { id: 2 }];
    c.answers.set(w1, [upstreamInfo()]);
    c.answers.set(w2, [upstreamInfo()]);
    expect((await c.scrape([w1, w2]))('wikiedge_upstream_info{generator="MediaWiki 1.39.17"}')).toBe(1);
  });

  it('a worker that does not answer counts with its last figures, and is logged', async () => {
    const c = cluster();
    const [w1, w2] = [{ id: 1 }, { id: 2 }];
    c.answers.set(w1, [requests(3)]);
    c.answers.set(w2, [requests(5)]);
    expect((await c.scrape([w1, w2]))('wikiedge_requests_total{cache="hit"}')).toBe(8);
    c.answers.set(w1, [requests(4)]);
    c.answers.set(w2, new Error('no answer within 5000 ms'));
    expect((await c.scrape([w1, w2]))('wikiedge_requests_total{cache="hit"}')).toBe(9);
    expect(c.warnings).toEqual([{ worker: 2, msg: 'metrics: a worker did not answer, its last figures are used' }]);
  });

  it('a worker that never answered adds nothing', async () => {
    const c = cluster();
    const [w1, w2] = [{ id: 1 }, { id: 2 }];
    c.answers.set(w1, [requests(3)]);
    c.answers.set(w2, new Error('worker exited'));
    expect((await c.scrape([w1, w2]))('wikiedge_requests_total{cache="hit"}')).toBe(3);
  });

  it('an exited worker’s counters and histograms stay in the sums; its gauges go', async () => {
    const c = cluster();
    const [w1, w2] = [{ id: 1 }, { id: 2 }];
    c.answers.set(w1, [requests(3), held(100), latency(3, 0.3)]);
    c.answers.set(w2, [requests(5), held(250), latency(5, 0.5)]);
    await c.scrape([w1, w2]);
    c.metrics.retire(w2); // the scrape right after waits for the retirement
    c.answers.set(w1, [requests(4), held(100), latency(4, 0.4)]);
    const read = await c.scrape([w1]);
    expect(read('wikiedge_requests_total{cache="hit"}')).toBe(9);
    expect(read('wikiedge_request_duration_seconds_count')).toBe(9);
    expect(read('wikiedge_request_duration_seconds_bucket{le="+Inf"}')).toBe(9);
    expect(read('wikiedge_request_duration_seconds_sum')).toBeCloseTo(0.9);
    expect(read('wikiedge_cache_bytes{tier="shared"}')).toBe(100);
  });

  it('the retired sums add up over several exits, each counted once', async () => {
    const c = cluster();
    const [w1, w2, w3, w4] = [{ id: 1 }, { id: 2 }, { id: 3 }, { id: 4 }];
    c.answers.set(w1, [requests(1)]);
    c.answers.set(w2, [requests(10)]);
    await c.scrape([w1, w2]);
    c.metrics.retire(w2);
    c.answers.set(w3, [requests(100)]); // w2's replacement
    await c.scrape([w1, w3]);
    c.metrics.retire(w3);
    c.metrics.retire(w3); // a second retirement finds nothing left to add
    c.answers.set(w4, [requests(1000)]);
    expect((await c.scrape([w1, w4]))('wikiedge_requests_total{cache="hit"}')).toBe(1111);
    expect((await c.scrape([w1, w4]))('wikiedge_requests_total{cache="hit"}')).toBe(1111);
  });

  it('a worker that drained hands over its final figures: what it counted after the last scrape is kept', async () => {
    const c = cluster();
    const [w1, w2] = [{ id: 1 }, { id: 2 }];
    c.answers.set(w1, [requests(3)]);
    c.answers.set(w2, [requests(5)]);
    await c.scrape([w1, w2]);
    c.metrics.keepFinal(w2, [requests(8), held(40)]); // 3 more since that scrape
    c.metrics.retire(w2);
    expect((await c.scrape([w1]))('wikiedge_requests_total{cache="hit"}')).toBe(11);
  });

  it('a worker that exited before it ever answered adds nothing', async () => {
    const c = cluster();
    const [w1, w2] = [{ id: 1 }, { id: 2 }];
    c.answers.set(w1, [requests(3)]);
    c.metrics.retire(w2);
    expect((await c.scrape([w1]))('wikiedge_requests_total{cache="hit"}')).toBe(3);
  });

  it('a worker that retires while a scrape waits for its answer is counted once: never twice, never dropped', async () => {
    const c = cluster();
    const [w1, w2] = [{ id: 1 }, { id: 2 }];
    c.answers.set(w1, [requests(3)]);
    c.answers.set(w2, [requests(5)]);
    await c.scrape([w1, w2]);
    // The scrape asks w2, which drains, hands over its final figures and exits before the answer is read.
    const during = c.scrape([w1, w2]);
    c.metrics.keepFinal(w2, [requests(8)]);
    c.metrics.retire(w2);
    expect((await during)('wikiedge_requests_total{cache="hit"}')).toBe(11);
    expect((await c.scrape([w1]))('wikiedge_requests_total{cache="hit"}')).toBe(11);
    expect((await c.scrape([w1]))('wikiedge_requests_total{cache="hit"}')).toBe(11);
  });

  it('an answer asked before a worker’s final figures and read after them does not replace them (the worker still live)', async () => {
    const c = cluster();
    const [w1, w2] = [{ id: 1 }, { id: 2 }];
    c.answers.set(w1, [requests(3)]);
    c.answers.set(w2, [requests(5)]);
    await c.scrape([w1, w2]);
    // The scrape asks w2 (which answers 6), then w2's final figures (8) arrive before that answer
    // is read, and it has not exited yet: the older answer must not win.
    c.answers.set(w2, [requests(6)]);
    const during = c.scrape([w1, w2]);
    c.metrics.keepFinal(w2, [requests(8)]);
    await during;
    c.metrics.retire(w2);
    expect((await c.scrape([w1]))('wikiedge_requests_total{cache="hit"}')).toBe(11);
  });
});
