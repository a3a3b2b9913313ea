// The request tally is exported exactly as prom-client's own Counter and Histogram would export
// the same observations: same names, labels, bucket bounds, cumulative counts, sum and count.
import { Counter, Histogram, Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { REQUEST_DURATION_BUCKETS, RequestTally } from '../../src/request-metrics.js';

const observations = [
  { disposition: 'hit', module: 'wbavailablebadges', method: 'GET', status: 200, seconds: 0.00004 },
  { disposition: 'hit', module: 'wbavailablebadges', method: 'GET', status: 200, seconds: 0.0001 }, // on a bound: le is inclusive
  { disposition: 'hit', module: 'query', method: 'HEAD', status: 200, seconds: 0.0003 },
  { disposition: 'miss', module: 'query', method: 'GET', status: 200, seconds: 0.012 },
  { disposition: 'error', module: 'query', method: 'GET', status: 502, seconds: 0.3 },
  { disposition: 'pass', module: '-', method: 'POST', status: 499, seconds: 42 }, // above every bound
] as const;

function statusClass(status: number) {
  return `${Math.floor(status / 100)}xx`;
}

async function viaPromClient(): Promise<string> {
  const registry = new Registry();
  const counter = new Counter({
    name: 'wikiedge_requests_total',
    help: 'Client requests by disposition (the X-Cache value), module, method and status class.',
    labelNames: ['disposition', 'module', 'method', 'status_class'],
    registers: [registry],
  });
  const histogram = new Histogram({
    name: 'wikiedge_request_duration_seconds',
    help: 'Time from request to the last byte handed to the socket, by disposition.',
    labelNames: ['disposition'],
    buckets: [...REQUEST_DURATION_BUCKETS],
    registers: [registry],
  });
  for (const o of observations) {
    counter.inc({ disposition: o.disposition, module: o.module, method: o.method, status_class: statusClass(o.status) });
    histogram.observe({ disposition: o.disposition }, o.seconds);
  }
  return registry.metrics();
}

async function viaTally(): Promise<string> {
  const registry = new Registry();
  const tally = new RequestTally(registry);
  for (const o of observations) tally.record(tally.cell(o.disposition, o.module, o.method, o.status), o.seconds);
  return registry.metrics();
}

/** Series lines, sorted: the order of label sets is not part of the format. */
function series(text: string): string[] {
  return text.split('\n').filter((l) => l !== '').sort();
}

describe('request metrics exposition', () => {
  it('equals what prom-client exports for the same requests', async () => {
    const [expected, actual] = [await viaPromClient(), await viaTally()];
    expect(series(actual)).toEqual(series(expected));
    expect(actual).toContain('wikiedge_request_duration_seconds_bucket{le="0.0001",disposition="hit"} 2');
    expect(actual).toContain('wikiedge_request_duration_seconds_bucket{le="+Inf",disposition="pass"} 1');
  });

  it('keeps one cell per label combination and counts through it', async () => {
    const registry = new Registry();
    const tally = new RequestTally(registry);
    const cell = tally.cell('hit', 'query', 'GET', 204);
    expect(tally.cell('hit', 'query', 'GET', 200)).toBe(cell); // same status class
    for (let i = 0; i < 5; i++) tally.record(cell, 0.00002);
    const text = await registry.metrics();
    expect(text).toContain('wikiedge_requests_total{disposition="hit",module="query",method="GET",status_class="2xx"} 5');
    expect(text).toContain('wikiedge_request_duration_seconds_count{disposition="hit"} 5');
  });

  it('resets with the registry', async () => {
    const registry = new Registry();
    const tally = new RequestTally(registry);
    tally.record(tally.cell('miss', 'query', 'GET', 200), 0.01);
    registry.resetMetrics();
    const text = await registry.metrics();
    expect(text).toContain('wikiedge_requests_total{disposition="miss",module="query",method="GET",status_class="2xx"} 0');
    expect(text).toContain('wikiedge_request_duration_seconds_count{disposition="miss"} 0');
  });
});
