// With the log thread (src/log-records.ts), a hit is written by the event loop as a binary
// record naming slots of a string table, and the thread makes the line. That line must be the
// string line, byte for byte, for every value a hit can carry; a slot reused for another string
// must never lend a hit someone else's URL, address or user agent; a full ring drops hits
// (counted), never half a line. Here the thread's side runs in this thread, on the same ring.
import { existsSync } from 'node:fs';
import path from 'node:path';
import { Writable } from 'node:stream';
import fc from 'fast-check';
import { Registry } from 'prom-client';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { AccessLog } from '../../src/access-log.js';
import { HitLineFormatter, HitRecordWriter, RecordRing, putLines, takeLines } from '../../src/log-records.js';
import { createLogger, droppedLogLines, type HitLogThread, LineBuffer } from '../../src/logging.js';
import { RequestTally } from '../../src/request-metrics.js';
import { parseTarget } from '../../src/target.js';

type Sink = ConstructorParameters<typeof LineBuffer>[0];

/**
 * A logger whose LineBuffer has a log thread, played here: hits go into a ring of `ringBytes`
 * with `slots` string slots, and `text()` formats what is waiting, as the thread does.
 */
function recordedLogger({ slots = 2048, ringBytes = 1024 * 1024 } = {}) {
  const writes: Buffer[] = [];
  const sink = { write: (b: Buffer) => (writes.push(Buffer.from(b)), true), flush: (cb?: () => void) => cb?.(), flushSync: () => {} };
  const lines = new LineBuffer(sink as unknown as Sink, 64 * 1024, 60_000);
  const ring = new RecordRing(ringBytes);
  const writer = new HitRecordWriter(ring, slots);
  lines.hitThread = { writer, take: () => {}, flushSync: () => {} } as unknown as HitLogThread;
  const formatter = new HitLineFormatter(slots, (made) => lines.writeBytes(made), 4096);
  const log = createLogger('info', { destination: lines });
  const text = () => {
    formatter.drain(ring);
    lines.flushSync();
    return Buffer.concat(writes).toString('utf8');
  };
  return { log, text, ring, formatter, writer };
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

/** The thread's module as built (npm test builds before the suites run). */
const builtWorker = path.resolve(import.meta.dirname, '../../dist/hit-log-worker.js');

const tally = new RequestTally(new Registry());
const cell = tally.cell('hit', 'query+siteinfo', 'GET', 200);

describe('a hit line made by the log thread from records', () => {
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
      fc.oneof(fc.constantFrom('mwn/2.0', 'curl/8.5.0', 'Mozilla/5.0 (X11; Linux x86_64)', 'evil\n{"level":60}', 'é日\u2028'), fc.string({ maxLength: 300 }), fc.string({ minLength: 250, maxLength: 300, unit: 'grapheme-ascii' })),
      { nil: undefined },
    ),
    bytesIn: fc.nat(),
    bytesOut: fc.oneof(fc.nat(), fc.maxSafeNat()),
    connection: fc.constantFrom(0, 1, 2),
  });

  it('is the string line, byte for byte, whatever the request carried', () => {
    const recorded = recordedLogger();
    const string = stringLogger();
    const connections = [{}, {}, {}];
    let seen = 0;
    fc.assert(
      fc.property(hitArgs, (a) => {
        const target = parseTarget(a.target);
        AccessLog.of(recorded.log).hit(target, cell, a.reqId, a.status, a.seconds, a.client, a.userAgent, a.bytesIn, a.bytesOut, connections[a.connection]);
        AccessLog.of(string.log).hit(target, cell, a.reqId, a.status, a.seconds, a.client, a.userAgent, a.bytesIn, a.bytesOut);
        const line = recorded.text().slice(seen);
        expect(line).toBe(string.text().slice(seen));
        seen += line.length;
      }),
      { numRuns: 500 },
    );
  });

  it('takes the record path for a plain hit: nothing is written until the thread makes the line', () => {
    const recorded = recordedLogger();
    const writes = vi.spyOn(LineBuffer.prototype, 'write');
    AccessLog.of(recorded.log).hit(parseTarget('/w/api.php?action=query&meta=siteinfo'), cell, 'r-1', 200, 0.00002, '127.0.0.1', 'curl/8', 80, 400);
    expect(writes).not.toHaveBeenCalled();
    writes.mockRestore();
    expect(recorded.ring.hasRecords()).toBe(true);
    expect(JSON.parse(recorded.text())).toMatchObject({ reqId: 'r-1', ua: 'curl/8', client: '127.0.0.1' });
  });

  it('never lends a hit the string of a reused slot (8 slots, the fewest allowed, for the 4 strings of a hit; 40 URLs, addresses and user agents in turn)', () => {
    const recorded = recordedLogger({ slots: 8 });
    const before = droppedLogLines();
    const string = stringLogger();
    const connection = {};
    for (let i = 0; i < 400; i++) {
      const target = parseTarget(`/w/api.php?action=query&titles=P${i % 40}&format=json`);
      const args = [target, cell, `r-${i}`, 200, i / 1e5, `203.0.113.${i % 7}`, i % 5 === 0 ? undefined : `bot/${i % 9}`, i, 2 * i] as const;
      AccessLog.of(recorded.log).hit(...args, i % 3 === 0 ? connection : {});
      AccessLog.of(string.log).hit(...args);
      // The thread reads now and then, as it does every few ms.
      if (i % 17 === 0) recorded.text();
    }
    expect(recorded.formatter.unreadable).toBe(0);
    expect(droppedLogLines() - before).toBe(0);
    expect(recorded.text()).toBe(string.text());
  });

  it('drops hits, counted, when the ring is full, and the lines it kept are whole and in order', () => {
    const recorded = recordedLogger({ ringBytes: 4096 });
    const target = parseTarget('/w/api.php?action=query&meta=siteinfo&format=json');
    const before = droppedLogLines();
    for (let i = 0; i < 200; i++) AccessLog.of(recorded.log).hit(target, cell, `r-${i}`, 200, 0.00001, '127.0.0.1', 'bot/1', 80, 400);
    const dropped = droppedLogLines() - before;
    expect(dropped).toBeGreaterThan(100);
    const lines = recorded.text().split('\n').filter(Boolean);
    expect(lines.length + dropped).toBe(200);
    const ids = lines.map((l) => Number((JSON.parse(l) as { reqId: string }).reqId.slice(2)));
    expect(ids).toEqual(ids.toSorted((x, y) => x - y));
    expect(ids[0]).toBe(0);
    // Once read, the ring takes hits again.
    AccessLog.of(recorded.log).hit(target, cell, 'after', 200, 0.00001, '127.0.0.1', 'bot/1', 80, 400);
    expect(recorded.text()).toContain('"reqId":"after"');
  });

  it('writes a request id it cannot carry as itself as the string line, at once', () => {
    const recorded = recordedLogger();
    const string = stringLogger();
    const target = parseTarget('/w/api.php?action=query&meta=siteinfo');
    for (const { log } of [recorded, string]) AccessLog.of(log).hit(target, cell, 'r"é', 200, 0.00002, '127.0.0.1', undefined, 80, 400);
    // The strings it named went to the thread; no hit record did.
    expect(recorded.formatter.drain(recorded.ring)).toBe(0);
    expect(recorded.text()).toBe(string.text());
  });
});

describe('the record ring', () => {
  it('hands every record over in order across many wraps, and refuses what does not fit', () => {
    const ring = new RecordRing(1024);
    const back = new RecordRing(1024);
    const got: string[] = [];
    let sent = 0;
    for (let round = 0; round < 300; round++) {
      // A few batches of different sizes, then the reader takes them.
      for (let k = 0; k < 1 + (round % 4); k++) {
        const text = `line ${sent} ${'x'.repeat((sent * 37) % 150)}\n`;
        if (putLines(ring, Buffer.from(text))) sent++;
      }
      takeLines(ring, (bytes) => got.push(Buffer.from(bytes).toString()));
    }
    expect(got).toHaveLength(sent);
    got.forEach((text, i) => expect(text.startsWith(`line ${i} `)).toBe(true));
    expect(putLines(back, Buffer.alloc(2000))).toBe(false);
  });
});

describe.runIf(existsSync(builtWorker))('the log thread (dist/hit-log-worker.js)', () => {
  it('has written the line of every hit recorded when the process flushes at exit', () => {
    const writes: Buffer[] = [];
    const sink = { write: (b: Buffer) => (writes.push(Buffer.from(b)), true), flush: (cb?: () => void) => cb?.(), flushSync: () => {} };
    const lines = new LineBuffer(sink as unknown as Sink, 64 * 1024, 60_000);
    lines.startHitThread(builtWorker);
    expect(lines.hitThread).toBeDefined();
    const log = createLogger('info', { destination: lines });
    const target = parseTarget('/w/api.php?action=query&meta=siteinfo&format=json');
    for (let i = 0; i < 2000; i++) AccessLog.of(log).hit(target, cell, `r-${i}`, 200, 0.00001, '127.0.0.1', 'bot/1', 80, 400);
    // At once, as process.on('exit') does: the thread has had no time of its own.
    lines.flushSync();
    const ids = Buffer.concat(writes)
      .toString('utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => (JSON.parse(l) as { reqId: string }).reqId);
    expect(ids).toEqual(Array.from({ length: 2000 }, (_, i) => `r-${i}`));
  });
});
