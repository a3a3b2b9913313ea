/**
 * A refused request (429: its client's budget is spent) is answered after a delay rather than at
 * once. A client that honours Retry-After loses nothing: it was going to wait at least a second.
 * A client that ignores it and asks again the moment it is refused (a flood, a broken retry
 * loop) is slowed to one request per connection per delay, instead of making the gateway answer
 * refusals as fast as it can: measured (docs/BENCHMARKS.md, flood), 64 connections refused at
 * once took ~6,000 answers/s of the gateway's CPU and pushed everyone's hits from 0.13 to 12 ms.
 * nginx's `limit_req` without `nodelay` delays excess requests for the same reason.
 *
 * A waiting refusal holds its socket and a timer, nothing else: no turn at the wiki, no lock, no
 * coalescing leadership. Refusals are thrown at once, marked (words/errors.ts answerAfterDelay), and
 * the wait happens in the one error writer (steps/error-reply.ts) once the request has let go of all
 * of them; the gateway's own background refreshes are never answered and never wait. The
 * refusals of the queue's timeout are not delayed: they waited already. At most `maxWaiting` wait at
 * once; past that refusals are answered at once (a flood on that many connections is a problem
 * for the operator's connection limits, not for a delay).
 */
import { setTimeout as sleep } from 'node:timers/promises';

export class RefusalDelay {
  private waiting = 0;

  constructor(
    private readonly delayMs: number,
    private readonly maxWaiting: number,
  ) {}

  /** Resolves after the delay; at once when the delay is off or `maxWaiting` already wait. */
  async wait(): Promise<void> {
    if (this.delayMs === 0 || this.waiting >= this.maxWaiting) return;
    this.waiting++;
    try {
      await sleep(this.delayMs, undefined, { ref: false });
    } finally {
      this.waiting--;
    }
  }

  /** Refusals waiting now. */
  get size(): number {
    return this.waiting;
  }
}
