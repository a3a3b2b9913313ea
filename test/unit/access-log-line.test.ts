// The access log writes pino's own lines (level, time, the logger's bindings, msg) without going
// through log.info(): every field a varnishncsa or nginx `combined` line has, as JSON that any
// string (a user agent, an operator's module name) cannot break, and none below level info.
import { Writable } from 'node:stream';
import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { AccessLog, jsonString, logPurge, MAX_USER_AGENT_CHARS, REDACTED } from '../../src/observe/access-log.js';
import { createLogger } from '../../src/observe/logging.js';
import { RequestTally } from '../../src/observe/request-metrics.js';
import { parseTarget } from '../../src/words/target.js';

function capture(level: 'info' | 'warn' = 'info') {
  const lines: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      lines.push(...chunk.toString('utf8').split('\n').filter(Boolean));
      done();
    },
  });
  const log = createLogger(level, { destination: sink });
  return { log, lines, parsed: () => lines.map((l) => JSON.parse(l) as Record<string, unknown>) };
}

const facts = {
  reqId: 'req-1',
  method: 'POST',
  target: '/w/api.php?action=logout&token=abc%2B%5C',
  path: '/w/api.php',
  module: 'logout',
  disposition: 'pass' as const,
  status: 200,
  seconds: 0.0123456,
  client: '203.0.113.7',
  userAgent: 'mwn/2.0 (bot "x")',
  bytesIn: 321,
  bytesOut: 654,
  upstreamMs: 11.5,
  passReason: 'method' as const,
};

describe('the access log line', () => {
  it('is a pino line with every field of a request', () => {
    const { log, parsed } = capture();
    AccessLog.of(log.child({ worker: 3 })).request(facts);
    const [line] = parsed();
    expect(line).toEqual({
      level: 30,
      time: expect.any(Number),
      service: 'wikiedge',
      worker: 3,
      reqId: 'req-1',
      method: 'POST',
      path: '/w/api.php',
      url: `/w/api.php?action=logout&token=${REDACTED}`,
      module: 'logout',
      cache: 'pass',
      status: 200,
      ms: 12.346,
      client: '203.0.113.7',
      ua: 'mwn/2.0 (bot "x")',
      bytesIn: 321,
      bytesOut: 654,
      upstreamMs: 11.5,
      pass: 'method',
      timeIso: new Date(line!['time'] as number).toISOString(),
      msg: 'request',
    });
    expect(Math.abs((line!['time'] as number) - Date.now())).toBeLessThan(5_000);
  });

  it('leaves out what a request did not have', () => {
    const { log, parsed } = capture();
    AccessLog.of(log).request({ ...facts, path: undefined, userAgent: undefined, upstreamMs: undefined, passReason: undefined });
    const [line] = parsed();
    expect(Object.keys(line!)).not.toContain('ua');
    expect(Object.keys(line!)).not.toContain('path');
    expect(Object.keys(line!)).not.toContain('upstreamMs');
  });

  it('keeps a line one line of JSON whatever the strings hold, and bounds the user agent', () => {
    const { log, lines, parsed } = capture();
    const ua = `evil\n{"level":60}\u0000\u2028"\\${'x'.repeat(1000)}`;
    AccessLog.of(log).request({ ...facts, userAgent: ua, module: 'my"module', errorCode: 'wikiedge-bad\nrequest', client: '::1"' });
    expect(lines).toHaveLength(1);
    const [line] = parsed();
    expect(line!['ua']).toBe(ua.slice(0, MAX_USER_AGENT_CHARS));
    expect(line!['module']).toBe('my"module');
    expect(line!['error']).toBe('wikiedge-bad\nrequest');
    expect(line!['client']).toBe('::1"');
    expect(jsonString('plain')).toBe('"plain"');
    expect(jsonString('a"b')).toBe(JSON.stringify('a"b'));
  });

  it('writes a hit from fragments kept per URL and metrics cell, the same fields as any request', () => {
    const { log, parsed } = capture();
    const tally = new RequestTally(new Registry());
    const cell = tally.cell('hit', 'query+siteinfo', 'GET', 200);
    const target = parseTarget('/w/api.php?action=query&meta=siteinfo&format=json');
    const writer = AccessLog.of(log);
    writer.hit(target, cell, 'req-2', 200, 0.00002, '127.0.0.1', undefined, 90, 400);
    writer.hit(target, cell, 'req-3', 200, 0.00003, '127.0.0.1', 'curl/8', 91, 401);
    const head = tally.cell('hit', 'query+siteinfo', 'HEAD', 200);
    writer.hit(target, head, 'req-4', 200, 0.00003, '127.0.0.1', undefined, 92, 120);
    const [first, second, third] = parsed();
    expect(first).toEqual({
      level: 30,
      time: expect.any(Number),
      service: 'wikiedge',
      reqId: 'req-2',
      method: 'GET',
      path: '/w/api.php',
      url: '/w/api.php?action=query&meta=siteinfo&format=json',
      module: 'query+siteinfo',
      cache: 'hit',
      status: 200,
      ms: 0.02,
      client: '127.0.0.1',
      bytesIn: 90,
      bytesOut: 400,
      timeIso: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      msg: 'request',
    });
    expect(second).toMatchObject({ reqId: 'req-3', ua: 'curl/8', bytesIn: 91, bytesOut: 401, method: 'GET' });
    // Another cell for the same URL: its own fragment.
    expect(third).toMatchObject({ reqId: 'req-4', method: 'HEAD', bytesOut: 120 });
  });

  it('writes nothing below level info', () => {
    const { log, lines } = capture('warn');
    AccessLog.of(log).request(facts);
    expect(lines).toEqual([]);
  });

  it('says what a purge removed and who asked', () => {
    const { log, parsed } = capture();
    logPurge(log, { source: 'http-purge', kind: 'url', what: '/w/api.php?action=query&token=x', purged: 3, redisPurged: 2 });
    logPurge(log, { source: 'admin', kind: 'all', purged: 10, workers: 2, missedWorkers: 0 });
    expect(parsed()).toEqual([
      expect.objectContaining({
        msg: 'purge',
        source: 'http-purge',
        kind: 'url',
        what: `/w/api.php?action=query&token=${REDACTED}`,
        purged: 3,
        redisPurged: 2,
      }),
      expect.objectContaining({ msg: 'purge', source: 'admin', kind: 'all', purged: 10, workers: 2, missedWorkers: 0 }),
    ]);
  });
});
