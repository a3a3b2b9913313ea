// What pino promises about flushing holds with the gateway's batched destination (src/observe/logging.ts,
// batchedDestination) writing to a real file while libuv's thread pool is busy, as it is when
// the gateway compresses, resolves or reads files: a fatal line is on disk when log.fatal()
// returns, logger.flush(cb) calls back only once what was logged is on disk, and a full batch
// is written without waiting for the flush interval.
import { pbkdf2 } from 'node:crypto';
import { closeSync, openSync, readFileSync } from 'node:fs';
import path from 'node:path';
import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { batchedDestination } from '../../src/observe/logging.js';
import { scratchDir } from '../support/scratch.js';

const fds: number[] = [];
function logToFile(flushEveryMs = 60_000) {
  const file = path.join(scratchDir('wikiedge-log-'), 'out.log');
  const fd = openSync(file, 'w');
  fds.push(fd);
  const log = pino({ level: 'info' }, batchedDestination(fd, { flushEveryMs }));
  return { log, onDisk: () => readFileSync(file, 'utf8') };
}

/** Four thread-pool jobs of ~100 ms or more: an asynchronous write queued behind them waits. */
function busyThreadPool(): Promise<unknown> {
  return Promise.all(Array.from({ length: 4 }, () => new Promise((r) => pbkdf2('x', 'y', 200_000, 32, 'sha512', r))));
}

describe('log flush guarantees', () => {
  afterEach(() => {
    for (const fd of fds.splice(0)) closeSync(fd);
  });

  it('a fatal line, and the lines held before it, are on disk when log.fatal() returns', async () => {
    const { log, onDisk } = logToFile();
    const busy = busyThreadPool();
    log.info('held before');
    log.fatal('last words');
    const written = onDisk();
    expect(written).toContain('"msg":"last words"');
    expect(written.indexOf('held before')).toBeLessThan(written.indexOf('last words'));
    expect(written.indexOf('held before')).toBeGreaterThanOrEqual(0);
    await busy;
  });

  it('logger.flush(cb) calls back only once the lines are on disk', async () => {
    const { log, onDisk } = logToFile();
    const busy = busyThreadPool();
    log.info('flush me');
    const seenAtCallback = await new Promise<string>((resolve) => log.flush(() => resolve(onDisk())));
    expect(seenAtCallback).toContain('flush me');
    await busy;
  });

  it('a full batch is written without waiting for the flush interval; what is held comes with the interval', async () => {
    const { log, onDisk } = logToFile(100);
    const line = 'x'.repeat(1100);
    for (let i = 0; i < 60; i++) log.info({ i }, line); // ~67 KiB: one full batch of 64 KiB, then a few lines held
    log.info({ i: 60 }, 'tail'); // held: less than a batch is left after the full ones
    await new Promise((r) => setTimeout(r, 30));
    const early = onDisk()
      .split('\n')
      .filter(Boolean)
      .map((l) => (JSON.parse(l) as { i: number }).i);
    expect(early.length).toBeGreaterThanOrEqual(20);
    expect(early).not.toContain(60);
    await new Promise((r) => setTimeout(r, 300));
    const all = onDisk()
      .split('\n')
      .filter(Boolean)
      .map((l) => (JSON.parse(l) as { i: number }).i);
    expect(all).toEqual(Array.from({ length: 61 }, (_, i) => i));
  });
});
