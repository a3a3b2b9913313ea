// src/logging.ts LineBatches: request lines are gathered and handed to sonic-boom a batch at a
// time, in order, none lost: on size, on the flush interval, on flush() and on flushSync().
import { afterEach, describe, expect, it, vi } from 'vitest';
import { LineBatches } from '../../src/logging.js';

type Sink = ConstructorParameters<typeof LineBatches>[0];

function fakeSink(opts: { flushSyncThrows?: boolean } = {}) {
  const writes: string[] = [];
  const calls: string[] = [];
  const sink = {
    write: (s: string) => (writes.push(s), true),
    flush: (cb?: () => void) => (calls.push('flush'), cb?.()),
    flushSync: () => {
      calls.push('flushSync');
      if (opts.flushSyncThrows) throw new Error('sonic boom is not ready yet');
    },
  };
  return { sink: sink as unknown as Sink, writes, calls };
}

describe('log line batches', () => {
  afterEach(() => vi.useRealTimers());

  it('holds lines until the batch size is reached, then hands them over as one write, in order', () => {
    const { sink, writes } = fakeSink();
    const batches = new LineBatches(sink, 20, 60_000);
    batches.write('a123456\n');
    batches.write('b123456\n');
    expect(writes).toEqual([]);
    batches.write('c123456\n'); // 24 characters: over 20
    expect(writes).toEqual(['a123456\nb123456\nc123456\n']);
    batches.write('d\n');
    expect(writes).toHaveLength(1);
  });

  it('hands held lines over when the flush interval passes, and not before', () => {
    vi.useFakeTimers();
    const { sink, writes } = fakeSink();
    const batches = new LineBatches(sink, 8 * 1024, 250);
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
    const batches = new LineBatches(sink, 8 * 1024, 60_000);
    batches.write('one\n');
    const done = vi.fn();
    batches.flush(done);
    expect(writes).toEqual(['one\n']);
    expect(calls).toEqual(['flush']);
    expect(done).toHaveBeenCalledOnce();
  });

  it('flushSync() hands held lines over and writes them synchronously; a sink that cannot is not an error', () => {
    const ok = fakeSink();
    const batches = new LineBatches(ok.sink, 8 * 1024, 60_000);
    batches.write('last words\n');
    batches.flushSync();
    expect(ok.writes).toEqual(['last words\n']);
    expect(ok.calls).toEqual(['flushSync']);

    const gone = fakeSink({ flushSyncThrows: true });
    const orphan = new LineBatches(gone.sink, 8 * 1024, 60_000);
    orphan.write('x\n');
    expect(() => orphan.flushSync()).not.toThrow();
    expect(gone.writes).toEqual(['x\n']);
  });

  it('registers a flush for process exit', () => {
    const before = process.listenerCount('exit');
    new LineBatches(fakeSink().sink, 8 * 1024, 60_000);
    expect(process.listenerCount('exit')).toBe(before + 1);
  });
});
