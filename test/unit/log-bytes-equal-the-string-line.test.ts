// A hit's access-log line is put into the log batch as bytes (src/observe/log-bytes.ts, observe/access-log.ts
// AccessLog.hit) when the logger writes to standard output's batches: those bytes must be the
// ones the string line has, for every value a hit can carry (a user agent with quotes, control
// characters or non-ASCII text, a long one, any address, any duration), and a value the byte
// writers do not take must leave nothing half-written in the batch.
import { Writable } from 'node:stream';
import fc from 'fast-check';
import { Registry } from 'prom-client';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { AccessLog, MAX_USER_AGENT_CHARS } from '../../src/observe/access-log.js';
import { putMicrosAsMillis, putPlainString, putUint } from '../../src/observe/log-bytes.js';
import { createLogger, LineBuffer } from '../../src/observe/logging.js';
import { RequestTally } from '../../src/observe/request-metrics.js';
import { parseTarget } from '../../src/words/target.js';

type Sink = ConstructorParameters<typeof LineBuffer>[0];

/** A logger whose stream is a LineBuffer (the byte path), its batches collected as text. */
function batchedLogger(batchBytes = 64 * 1024) {
  const writes: Buffer[] = [];
  const sink = { write: (b: Buffer) => (writes.push(Buffer.from(b)), true), flush: (cb?: () => void) => cb?.(), flushSync: () => {} };
  const lines = new LineBuffer(sink as unknown as Sink, batchBytes, 60_000);
  const log = createLogger('info', { destination: lines });
  return { log, text: () => (lines.flushSync(), Buffer.concat(writes).toString('utf8')) };
}

/** A logger whose stream is a plain Writable (the string path). */
function stringLogger() {
  const chunks: Buffer[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      chunks.push(Buffer.from(chunk));
      done();
    },
  });
  const log = createLogger('info', { destination: sink });
  return { log, text: () => Buffer.concat(chunks).toString('utf8') };
}

const tally = new RequestTally(new Registry());
const cell = tally.cell('hit', 'query+siteinfo', 'GET', 200);

describe('a hit line written as bytes', () => {
  beforeEach(() => {
    vi.useFakeTimers();
    vi.setSystemTime(1_764_000_000_123);
  });
  afterEach(() => vi.useRealTimers());

  const hitArgs = fc.record({
    target: fc.constantFrom(
      '/w/api.php?action=query&meta=siteinfo&format=json',
      '/w/api.php?action=query&titles=Caf%C3%A9&lgpassword=x&format=json',
      '/w/api.php?action=query&titles=Café"\\&format=json',
    ),
    reqId: fc.oneof(fc.constantFrom('0f3a9c2e11b4-1', 'abc-zz9'), fc.stringMatching(/^[A-Za-z0-9._:@-]{1,40}$/)),
    status: fc.constantFrom(200, 304, 404),
    seconds: fc.oneof(fc.double({ min: 0, max: 100, noNaN: true }), fc.constantFrom(0, 0.000_000_4, 0.0015, 0.012, 1.5e-5, 12, -0.000_001)),
    client: fc.oneof(fc.constantFrom('127.0.0.1', '::1', '2001:db8::7', '::ffff:203.0.113.9', 'a"b'), fc.string({ maxLength: 40 })),
    userAgent: fc.option(
      fc.oneof(
        fc.constantFrom('mwn/2.0', 'curl/8.5.0', 'Mozilla/5.0 (X11; Linux x86_64)', 'evil\n{"level":60}', 'é日\u2028'),
        fc.string({ maxLength: 300 }),
        fc.string({ minLength: 250, maxLength: 300, unit: 'grapheme-ascii' }),
      ),
      { nil: undefined },
    ),
    bytesIn: fc.nat(),
    bytesOut: fc.nat(),
    host: fc.option(fc.oneof(fc.constantFrom('wiki.example.org', 'localhost:8080', '[::1]:8080', 'é.example'), fc.string({ maxLength: 300 })), {
      nil: undefined,
    }),
    referer: fc.option(
      fc.oneof(
        fc.constantFrom(
          'https://wiki.example.org/wiki/Main_Page',
          'https://x.example/?token=abc&a=1',
          'https://x.example/"q"',
          'https://wiki.example.org/wiki/Special:ConfirmEmail/0123456789abcdef0123',
          'https://wiki.example.org/wiki/Special:ResetPassword/0123456789abcdef0123456789abcdef',
        ),
        fc.string({ maxLength: 80 }),
      ),
      { nil: undefined },
    ),
    httpVersion: fc.constantFrom('1.1', '1.0', '2.0', undefined),
  });

  it('is the string line, byte for byte, whatever the request carried', () => {
    const bytes = batchedLogger();
    const string = stringLogger();
    let seen = 0;
    fc.assert(
      fc.property(hitArgs, (a) => {
        const target = parseTarget(a.target);
        for (const { log } of [bytes, string])
          AccessLog.of(log).hit(target, cell, a.reqId, a.status, a.seconds, a.client, a.userAgent, a.bytesIn, a.bytesOut, a.host, a.referer, a.httpVersion);
        const line = bytes.text().slice(seen);
        expect(line).toBe(string.text().slice(seen));
        expect(JSON.parse(line)).toMatchObject({ reqId: a.reqId, client: a.client, status: a.status });
        seen += line.length;
      }),
      { numRuns: 500 },
    );
  }, 30_000);

  it('is taken for a plain hit (the batch holds the line before any string is written)', () => {
    const writes = vi.spyOn(LineBuffer.prototype, 'write');
    const bytes = batchedLogger();
    AccessLog.of(bytes.log).hit(parseTarget('/w/api.php?action=query&meta=siteinfo'), cell, 'r-1', 200, 0.00002, '127.0.0.1', 'curl/8', 80, 400);
    expect(writes).not.toHaveBeenCalled();
    // With the Host, a plain Referer and the protocol too (the json format's fields).
    AccessLog.of(bytes.log).hit(
      parseTarget('/w/api.php?action=query&meta=siteinfo'),
      cell,
      'r-0',
      200,
      0.00002,
      '127.0.0.1',
      'curl/8',
      80,
      400,
      'wiki.example.org',
      'https://wiki.example.org/wiki/Main_Page',
      '1.1',
    );
    expect(writes).not.toHaveBeenCalled();
    AccessLog.of(bytes.log).hit(parseTarget('/w/api.php?action=query&meta=siteinfo'), cell, 'r-2', 200, 0.00002, '127.0.0.1', 'bot "x"', 80, 400);
    expect(writes).toHaveBeenCalledTimes(1);
    writes.mockRestore();
    expect(
      bytes
        .text()
        .split('\n')
        .filter(Boolean)
        .map((l) => (JSON.parse(l) as { reqId: string }).reqId),
    ).toEqual(['r-1', 'r-0', 'r-2']);
  });

  it('keeps every line whole and in order across batches, a refused value included', () => {
    const bytes = batchedLogger(2048);
    const string = stringLogger();
    const target = parseTarget('/w/api.php?action=query&meta=siteinfo&format=json');
    for (let i = 0; i < 200; i++) {
      const ua = i % 7 === 0 ? `bot "${i}"` : i % 11 === 0 ? 'x'.repeat(MAX_USER_AGENT_CHARS + 50) : `bot/${i}`;
      for (const { log } of [bytes, string]) AccessLog.of(log).hit(target, cell, `r-${i}`, 200, i / 1e5, '203.0.113.7', ua, i, 2 * i);
    }
    const lines = bytes.text().split('\n').filter(Boolean);
    expect(lines).toHaveLength(200);
    expect(lines.map((l) => (JSON.parse(l) as { reqId: string }).reqId)).toEqual(Array.from({ length: 200 }, (_, i) => `r-${i}`));
    expect(bytes.text()).toBe(string.text());
  });
});

describe('the byte writers', () => {
  const text = (f: (buf: Uint8Array) => number) => {
    const buf = new Uint8Array(64);
    const end = f(buf);
    return end < 0 ? null : Buffer.from(buf.subarray(0, end)).toString('latin1');
  };

  it('write a count as String() does, and refuse what is not a safe non-negative integer', () => {
    fc.assert(fc.property(fc.maxSafeNat(), (n) => text((b) => putUint(b, 0, n)) === String(n)));
    for (const n of [-1, 1.5, Number.NaN, Number.POSITIVE_INFINITY, 2 ** 53]) expect(text((b) => putUint(b, 0, n))).toBeNull();
  });

  it('write microseconds as String(us / 1000) does', () => {
    fc.assert(fc.property(fc.integer({ min: 0, max: 1e14 }), (us) => text((b) => putMicrosAsMillis(b, 0, us)) === String(us / 1000)));
    expect(text((b) => putMicrosAsMillis(b, 0, -0))).toBe('0');
    expect(text((b) => putMicrosAsMillis(b, 0, -1))).toBeNull();
  });

  it('write a plain string as JSON.stringify does, and refuse any other', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 30 }), (s) => {
        const written = text((b) => putPlainString(b, 0, s));
        return written === null ? /[^\x20\x21\x23-\x5b\x5d-\x7e]/.test(s) : written === JSON.stringify(s);
      }),
    );
  });
});
