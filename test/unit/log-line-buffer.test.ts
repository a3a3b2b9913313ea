// src/observe/logging.ts LineBuffer: lines are encoded into a batch buffer and handed to sonic-boom a
// batch at a time, in order, none lost: when the next line would not fit, on the flush
// interval, on flush() and on flushSync(); a line longer than a batch goes alone, after what
// was held.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { LineBuffer } from '../../src/observe/logging.js';

type Sink = ConstructorParameters<typeof LineBuffer>[0];

function fakeSink(opts: { flushSyncThrows?: boolean } = {}) {
  const writes: string[] = [];
  const calls: string[] = [];
  const sink = {
    // Copied at once: the batch buffer is the sink's from here on, as with sonic-boom.
    write: (b: Buffer) => (writes.push(b.toString('utf8')), true),
    flush: (cb?: () => void) => (calls.push('flush'), cb?.()),
    flushSync: () => {
      calls.push('flushSync');
      if (opts.flushSyncThrows) throw new Error('sonic boom is not ready yet');
    },
  };
  return { sink: sink as unknown as Sink, writes, calls };
}

describe('log line buffer', () => {
  afterEach(() => vi.useRealTimers());

  it('holds lines until the next would not fit, then hands them over as one write, in order', () => {
    const { sink, writes } = fakeSink();
    const batches = new LineBuffer(sink, 32, 60_000);
    batches.write('a12\n'); // room for 12 bytes asked (3 per char), 4 used
    batches.write('b12\n'); // 8 used
    expect(writes).toEqual([]);
    batches.write('c1234\n'); // 18 more asked, 24 left: held
    expect(writes).toEqual([]);
    batches.write('d1\n'); // 9 asked, 18 left: held
    batches.write('e1234\n'); // 18 asked, 15 left: the batch goes first
    expect(writes).toEqual(['a12\nb12\nc1234\nd1\n']);
  });

  it('encodes UTF-8, and hands a line that could not fit a batch over alone, after the lines held', () => {
    const { sink, writes } = fakeSink();
    const batches = new LineBuffer(sink, 32, 60_000);
    batches.write('é日\n');
    batches.write(`${'x'.repeat(20)}\n`); // 63 bytes asked: more than a batch
    expect(writes).toEqual(['é日\n', `${'x'.repeat(20)}\n`]);
    batches.write('next\n');
    batches.flushSync();
    expect(writes.at(-1)).toBe('next\n');
  });

  it('hands held lines over when the flush interval passes, and not before', () => {
    vi.useFakeTimers();
    const { sink, writes } = fakeSink();
    const batches = new LineBuffer(sink, 8 * 1024, 250);
    batches.write('lonely\n');
    vi.advanceTimersByTime(200);
    expect(writes).toEqual([]);
    vi.advanceTimersByTime(60);
    expect(writes).toEqual(['lonely\n']);
    vi.advanceTimersByTime(1_000);
    expect(writes).toEqual(['lonely\n']); // nothing held: nothing written
  });

  it('flush() hands held lines over before asking the sink to flush', () => {
    const { sink, writes, calls } = fakeSink();
    const batches = new LineBuffer(sink, 8 * 1024, 60_000);
    batches.write('one\n');
    const done = vi.fn();
    batches.flush(done);
    expect(writes).toEqual(['one\n']);
    expect(calls).toEqual(['flush']);
    expect(done).toHaveBeenCalledOnce();
  });

  it('flushSync() hands held lines over and writes them synchronously; a sink that cannot is not an error', () => {
    const ok = fakeSink();
    const batches = new LineBuffer(ok.sink, 8 * 1024, 60_000);
    batches.write('last words\n');
    batches.flushSync();
    expect(ok.writes).toEqual(['last words\n']);
    expect(ok.calls).toEqual(['flushSync']);

    const gone = fakeSink({ flushSyncThrows: true });
    const orphan = new LineBuffer(gone.sink, 8 * 1024, 60_000);
    orphan.write('x\n');
    expect(() => orphan.flushSync()).not.toThrow();
    expect(gone.writes).toEqual(['x\n']);
  });

  it('registers a flush for process exit', () => {
    const before = process.listenerCount('exit');
    new LineBuffer(fakeSink().sink, 8 * 1024, 60_000);
    expect(process.listenerCount('exit')).toBe(before + 1);
  });
});
