/**
 * The log thread (log-records.ts): every SLEEP_MS, or sooner when the event loop finds the ring
 * over half full or asks for a flush, it turns the hit records waiting into lines and hands them
 * back to the event loop's batches through the second ring. It never writes to standard output
 * itself: the event loop's batches stay the one writer of it, so lines of the two threads are
 * never interleaved inside a write (a pipe keeps writes whole only up to PIPE_BUF, 4 KiB).
 */
import { writeFileSync } from 'node:fs';
import { workerData } from 'node:worker_threads';
import { HitLineFormatter, putLines, RecordRing } from './log-records.js';

export interface HitLogWorkerData {
  readonly records: SharedArrayBuffer;
  readonly lines: SharedArrayBuffer;
  readonly slots: number;
}

/** How long the thread sleeps between rounds: ~100 records a round at 10,000 hits a second. */
const SLEEP_MS = 10;
/** How long it waits for room in the ring back when the event loop has not taken its lines. */
const FULL_WAIT_MS = 5;

const data = workerData as HitLogWorkerData;
const records = new RecordRing(data.records);
const lines = new RecordRing(data.lines);
const pause = new Int32Array(new SharedArrayBuffer(4));
const formatter = new HitLineFormatter(data.slots, (batch) => {
  // The event loop takes lines every few ms; until it does, this thread waits (and the event
  // loop, finding the record ring full, drops and counts hits rather than wait for it).
  while (!putLines(lines, batch)) Atomics.wait(pause, 0, 0, FULL_WAIT_MS);
});

// The thread's name in top -H, ps -L and /proc (15 characters at most): an operator sees what
// the CPU beside the event loop is spent on, and can move or renice it.
try {
  writeFileSync('/proc/thread-self/comm', 'wikiedge-log');
} catch {
  // Not Linux, or no /proc: the name is a convenience.
}

for (;;) {
  const asked = records.flushAsked();
  formatter.drain(records);
  records.noteFlushed(asked);
  records.sleep(SLEEP_MS);
}
