// The request tally is exported exactly as prom-client's own Counter and Histogram would export
// the same observations: same names, labels, bucket bounds, cumulative counts, sum and count.
import { Counter, Histogram, Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { DISPOSITIONS } from '../../src/words/outcomes.js';
import { REQUEST_DURATION_BUCKETS, RequestTally } from '../../src/observe/request-metrics.js';

const observations = [
  { disposition: 'hit', module: 'wbavailablebadges', method: 'GET', status: 200, seconds: 0.00004, bytes: 512 },
  { disposition: 'hit', module: 'wbavailablebadges', method: 'GET', status: 200, seconds: 0.0001, bytes: 512 }, // on a bound: le is inclusive
  { disposition: 'hit', module: 'query', method: 'HEAD', status: 200, seconds: 0.0003, bytes: 200 },
  { disposition: 'miss', module: 'query', method: 'GET', status: 200, seconds: 0.012, bytes: 4096 },
  { disposition: 'error', module: 'query', method: 'GET', status: 502, seconds: 0.3, bytes: 300 },
  { disposition: 'pass', module: '-', method: 'POST', status: 499, seconds: 42, bytes: 0 }, // above every bound
  { disposition: 'pass', module: '-', method: 'GET', status: 299, seconds: 0.01, bytes: 10 }, // a code outside the known set
  { disposition: 'pass', module: '-', method: 'GET', status: 599, seconds: 0.01, bytes: 10 }, // another, of another class: a series of its own
] as const;

function statusClass(status: number) {
  return `${Math.floor(status / 100)}xx`;
}

async function viaPromClient(): Promise<string> {
  const registry = new Registry();
  const counter = new Counter({
    name: 'wikiedge_requests_total',
    help: 'Client requests by disposition (the X-Cache value), module, method, status class and status code.',
    labelNames: ['disposition', 'module', 'method', 'status_class', 'code'],
    registers: [registry],
  });
  const histogram = new Histogram({
    name: 'wikiedge_request_duration_seconds',
    help: 'Time from request to the last byte handed to the socket, by disposition.',
    labelNames: ['disposition'],
    buckets: [...REQUEST_DURATION_BUCKETS],
    registers: [registry],
  });
  const bytes = new Counter({
    name: 'wikiedge_response_bytes_total',
    help: 'Bytes written to clients (status line, headers and body, as counted by the socket), by disposition.',
    labelNames: ['disposition'],
    registers: [registry],
  });
  for (const disposition of DISPOSITIONS) bytes.inc({ disposition }, 0);
  for (const o of observations) {
    const code = o.status === 299 || o.status === 599 ? 'other' : String(o.status);
    counter.inc({ disposition: o.disposition, module: o.module, method: o.method, status_class: statusClass(o.status), code });
    histogram.observe({ disposition: o.disposition }, o.seconds);
    bytes.inc({ disposition: o.disposition }, o.bytes);
  }
  return registry.metrics();
}

async function viaTally(): Promise<string> {
  const registry = new Registry();
  const tally = new RequestTally(registry);
  for (const o of observations) tally.record(tally.cell(o.disposition, o.module, o.method, o.status), o.seconds, o.bytes);
  return registry.metrics();
}

/** Series lines, sorted: the order of label sets is not part of the format. */
function series(text: string): string[] {
  return text
    .split('\n')
    .filter((l) => l !== '')
    .sort();
}

describe('request metrics exposition', () => {
  it('equals what prom-client exports for the same requests', async () => {
    const [expected, actual] = [await viaPromClient(), await viaTally()];
    expect(series(actual)).toEqual(series(expected));
    expect(actual).toContain('wikiedge_request_duration_seconds_bucket{le="0.0001",disposition="hit"} 2');
    expect(actual).toContain('wikiedge_request_duration_seconds_bucket{le="+Inf",disposition="pass"} 3');
    expect(actual).toContain('wikiedge_requests_total{disposition="pass",module="-",method="GET",status_class="5xx",code="other"} 1');
    expect(actual).toContain('wikiedge_requests_total{disposition="pass",module="-",method="GET",status_class="2xx",code="other"} 1');
    expect(actual).toContain('wikiedge_response_bytes_total{disposition="hit"} 1224');
    expect(actual).toContain('wikiedge_response_bytes_total{disposition="stale"} 0');
  });

  it('keeps one cell per label combination and counts through it', async () => {
    const registry = new Registry();
    const tally = new RequestTally(registry);
    const cell = tally.cell('hit', 'query', 'GET', 204);
    expect(tally.cell('hit', 'query', 'GET', 204)).toBe(cell);
    // Same status class, another code: a series of its own.
    expect(tally.cell('hit', 'query', 'GET', 200)).not.toBe(cell);
    for (let i = 0; i < 5; i++) tally.record(cell, 0.00002);
    const text = await registry.metrics();
    expect(text).toContain('wikiedge_requests_total{disposition="hit",module="query",method="GET",status_class="2xx",code="204"} 5');
    expect(text).toContain('wikiedge_requests_total{disposition="hit",module="query",method="GET",status_class="2xx",code="200"} 0');
    expect(text).toContain('wikiedge_request_duration_seconds_count{disposition="hit"} 5');
  });

  it('resets with the registry', async () => {
    const registry = new Registry();
    const tally = new RequestTally(registry);
    tally.record(tally.cell('miss', 'query', 'GET', 200), 0.01);
    registry.resetMetrics();
    const text = await registry.metrics();
    expect(text).toContain('wikiedge_requests_total{disposition="miss",module="query",method="GET",status_class="2xx",code="200"} 0');
    expect(text).toContain('wikiedge_request_duration_seconds_count{disposition="miss"} 0');
  });
});
