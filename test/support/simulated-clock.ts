// Simulated time for code that takes a Clock (src/invalidation/purge-confirmation.ts): minutes of
// PURGEs and slow answers run in milliseconds, the same on a busy machine as on an idle one.
import type { Clock } from '../../src/invalidation/purge-confirmation.js';

interface Timer {
  readonly at: number;
  readonly seq: number;
  readonly fn: () => void;
}

/** Lets every promise callback that is ready run (one turn of the event loop). */
const drain = () => new Promise<void>((resolve) => setImmediate(resolve));

export class SimulatedClock implements Clock {
  private timers: Timer[] = [];
  private seq = 0;

  constructor(private t: number) {}

  now(): number {
    return this.t;
  }

  later(ms: number, fn: () => void): () => void {
    const timer = { at: this.t + Math.max(0, ms), seq: this.seq++, fn };
    this.timers.push(timer);
    return () => {
      this.timers = this.timers.filter((t) => t !== timer);
    };
  }

  sleep(ms: number): Promise<void> {
    return new Promise((resolve) => this.later(ms, resolve));
  }

  /** Moves time on by `ms`, running each timer due at its own time, in order, and what it wakes. */
  async advance(ms: number): Promise<void> {
    const end = this.t + ms;
    for (;;) {
      await drain();
      const due = this.timers.filter((t) => t.at <= end).sort((a, b) => a.at - b.at || a.seq - b.seq)[0];
      if (!due) break;
      this.timers = this.timers.filter((t) => t !== due);
      this.t = due.at;
      due.fn();
    }
    this.t = end;
    await drain();
  }
}
