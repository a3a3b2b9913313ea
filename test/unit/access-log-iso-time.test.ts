// A request line's `timeIso` is its `time` in ISO 8601, to the millisecond, whatever the lines
// before it (observe/access-log.ts keeps the part of a second its lines share).
import { Writable } from 'node:stream';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { AccessLog } from '../../src/observe/access-log.js';
import { createLogger } from '../../src/observe/logging.js';

const facts = {
  reqId: 'req-1',
  method: 'GET',
  target: '/w/api.php?action=query',
  path: '/w/api.php',
  module: 'query',
  disposition: 'miss' as const,
  status: 200,
  seconds: 0.001,
  client: '203.0.113.7',
  userAgent: undefined,
  bytesIn: 1,
  bytesOut: 2,
};

/** Times within one second, across seconds, and back: every millisecond's padding. */
const TIMES = [1_764_380_000_000, 1_764_380_000_005, 1_764_380_000_050, 1_764_380_000_999, 1_764_380_001_000, 1_764_380_001_007, 0, 999, 1_764_380_000_123];

describe('the access log line time', () => {
  afterEach(() => vi.restoreAllMocks());

  it('timeIso is new Date(time).toISOString() for each line', () => {
    const lines: string[] = [];
    const sink = new Writable({
      write(chunk: Buffer, _enc, done) {
        lines.push(...chunk.toString('utf8').split('\n').filter(Boolean));
        done();
      },
    });
    const access = AccessLog.open(createLogger('info', { destination: sink }), { format: 'json', file: '' });
    const now = vi.spyOn(Date, 'now');
    for (const time of TIMES) {
      now.mockReturnValue(time);
      access.request(facts);
    }
    const parsed = lines.map((l) => JSON.parse(l) as { time: number; timeIso: string });
    expect(parsed.map((l) => l.time)).toEqual(TIMES);
    expect(parsed.map((l) => l.timeIso)).toEqual(TIMES.map((t) => new Date(t).toISOString()));
  });
});
