// A reader of the gateway's standard output that stops reading (a stuck log shipper, a full
// pipe) must neither stop the gateway nor grow its memory without bound: sonic-boom holds at
// most MAX_PENDING_BYTES (16 MiB) for it, and beyond that whole batches are dropped and counted
// (src/observe/logging.ts, wikiedge_log_lines_dropped_total). Against a real FIFO nobody reads.
import { execFileSync } from 'node:child_process';
import { createReadStream, openSync } from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { batchedDestination, droppedLogLines } from '../../src/observe/logging.js';
import { scratchDir } from '../support/scratch.js';

describe('a log reader that does not read', () => {
  it('drops and counts whole batches past the bound, keeps the writer going, and writes again once read', async () => {
    const fifo = path.join(scratchDir('wikiedge-fifo-'), 'log');
    execFileSync('mkfifo', [fifo]);
    // Read and write: opening does not wait for a reader, and nobody reads until the end.
    const fd = openSync(fifo, 'r+');
    const dest = batchedDestination(fd, { flushEveryMs: 10 });
    const line = `${'x'.repeat(999)}\n`;
    const before = droppedLogLines();
    const t0 = Date.now();
    // 40 MB of lines: far past the pipe's buffer and the 16 MiB bound.
    for (let i = 0; i < 40_000; i++) dest.write(line);
    // Never blocked on the reader: the loop took no longer than writing memory does.
    expect(Date.now() - t0).toBeLessThan(5_000);
    for (let i = 0; i < 100 && droppedLogLines() === before; i++) await sleep(20);
    expect(droppedLogLines() - before).toBeGreaterThan(10_000);
    // Reading again drains what was held, and later lines go out: every line is either read or
    // counted as dropped, none lost unseen.
    let read = 0;
    const reader = createReadStream('', { fd, autoClose: false });
    reader.on('data', (chunk) => (read += chunk.length));
    const accounted = () => read + (droppedLogLines() - before) * line.length;
    for (let i = 0; i < 250 && accounted() < 40_000 * line.length; i++) await sleep(20);
    expect(accounted()).toBe(40_000 * line.length);
    expect(droppedLogLines() - before).toBeLessThan(40_000);
    const readBefore = read;
    dest.write('last line\n');
    dest.flush();
    for (let i = 0; i < 100 && read === readBefore; i++) await sleep(20);
    expect(read - readBefore).toBe('last line\n'.length);
    // The fd stays open: the destination keeps its flush interval for the life of the process.
    reader.destroy();
  });
});
