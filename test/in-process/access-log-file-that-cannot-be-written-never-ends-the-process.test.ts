// A log file whose sonic-boom fails (it cannot be opened: a directory removed after the start, a
// read-only file system) emits 'error'; without a listener that is thrown and ends the process
// (https://nodejs.org/api/events.html#error-events), every connection refused after. With it
// (src/observe/logging.ts LineBuffer.failed): said once on standard error, the lines go to
// standard output from then on, and SIGUSR1's reopen() opens the file again by its name.
import { mkdirSync, readdirSync, readFileSync, readlinkSync } from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { batchedDestination } from '../../src/observe/logging.js';
import { scratchDir } from '../support/scratch.js';

describe('a log file that cannot be opened', () => {
  afterEach(() => vi.restoreAllMocks());

  it('never ends the process: said once on stderr, lines go to stdout, and reopen() opens the file once it can', async () => {
    const said: string[] = [];
    vi.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => (said.push(String(chunk)), true));
    const uncaught = vi.fn();
    process.on('uncaughtException', uncaught);
    try {
      const dir = path.join(scratchDir('wikiedge-log-gone-'), 'later');
      const file = path.join(dir, 'access.log');
      const lines = batchedDestination(file, { flushEveryMs: 10 });
      for (let i = 0; i < 5; i++) lines.write(`{"n":${i}}\n`);
      for (let i = 0; i < 100 && !lines.fallenBack; i++) await sleep(10);
      expect(lines.fallenBack).toBe(true);
      // More lines and flushes after the failure: no second error, no second word.
      for (let i = 5; i < 10; i++) lines.write(`{"n":${i}}\n`);
      lines.flush();
      await sleep(100);
      expect(uncaught).not.toHaveBeenCalled();
      const words = said.filter((s) => s.includes('access log: cannot write to'));
      expect(words).toHaveLength(1);
      expect(JSON.parse(words[0]!)).toMatchObject({ level: 50, file, msg: expect.stringContaining('until SIGUSR1 reopens it') });
      expect(words[0]).toContain('ENOENT');

      mkdirSync(dir);
      lines.reopen();
      expect(lines.fallenBack).toBe(false);
      lines.write('{"n":"after"}\n');
      lines.flush();
      await vi.waitFor(() => expect(readFileSync(file, 'utf8')).toBe('{"n":"after"}\n'), { timeout: 5_000 });
    } finally {
      process.off('uncaughtException', uncaught);
    }
  });

  it('closed once fallen back (a reload away from it): standard output, which the process`s logger shares, stays open', async () => {
    vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
    const uncaught = vi.fn();
    process.on('uncaughtException', uncaught);
    try {
      const lines = batchedDestination(path.join(scratchDir('wikiedge-log-closed-'), 'gone', 'access.log'), { flushEveryMs: 10 });
      lines.write('{"n":0}\n');
      for (let i = 0; i < 100 && !lines.fallenBack; i++) await sleep(10);
      expect(lines.fallenBack).toBe(true);
      lines.close();
      // Whatever standard output still had to write is written (an ended writer is destroyed then).
      await sleep(100);
      // The logger's own batches on standard output: written and flushed as before.
      const logger = batchedDestination(1, { flushEveryMs: 10 });
      expect(() => {
        logger.write('{"level":30,"msg":"standard output still open"}\n');
        logger.flush();
      }).not.toThrow();
      await sleep(50);
      expect(uncaught).not.toHaveBeenCalled();
    } finally {
      process.off('uncaughtException', uncaught);
    }
  });

  it('lets go of the file it could not write: no descriptor left on it, however often SIGUSR1 tries again', async () => {
    vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
    const onFull = () =>
      readdirSync('/proc/self/fd').filter((fd) => {
        try {
          return readlinkSync(`/proc/self/fd/${fd}`) === '/dev/full';
        } catch {
          return false;
        }
      }).length;
    const lines = batchedDestination('/dev/full', { flushEveryMs: 10 });
    for (let round = 0; round < 4; round++) {
      lines.write(`{"round":${round}}\n`);
      lines.flush();
      await vi.waitFor(() => expect(lines.fallenBack).toBe(true), { timeout: 5_000 });
      await vi.waitFor(() => expect(onFull()).toBe(0), { timeout: 5_000 });
      lines.reopen();
    }
  });
});
