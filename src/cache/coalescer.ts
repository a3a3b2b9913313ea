/**
 * Concurrent misses for one key make one upstream request. The leader's outcome is offered to
 * the waiters; a waiter uses it only if the leader's answer was stored for that very key (which
 * already names the identity slot), otherwise it goes to the wiki itself. A waiter never waits
 * longer than `maxWaitMs`, whatever the leader does.
 */
export class Coalescer<T> {
  private readonly inflight = new Map<string, Leading<T>>();

  constructor(private readonly maxWaitMs: number) {}

  /** The leader's pending outcome for `key`, if one is on its way. */
  pending(key: string): Promise<T | undefined> | undefined {
    const leading = this.inflight.get(key);
    if (!leading) return undefined;
    const outcome = leading.outcome();
    return new Promise((resolve) => {
      const timer = setTimeout(() => resolve(undefined), this.maxWaitMs);
      timer.unref();
      void outcome.then((v) => {
        clearTimeout(timer);
        resolve(v);
      });
    });
  }

  /**
   * Lead `key` until the returned lead is settled: its outcome goes to the waiters that came
   * meanwhile, and the key is free again. Nothing is allocated for waiters until one comes (most
   * misses have none: steps/flow.ts lookupOrFetch settles its lead from the one handler of its fetch).
   */
  begin(key: string): Lead<T> {
    const leading = new Leading<T>(() => {
      if (this.inflight.get(key) === leading) this.inflight.delete(key);
    });
    this.inflight.set(key, leading);
    return leading;
  }

  /** Run `work` as the leader for `key`; the promise resolves to what waiters may share. */
  lead(key: string, work: () => Promise<T | undefined>): Promise<T | undefined> {
    const leading = this.begin(key);
    return work().then(
      (v) => {
        leading.settle(v);
        return v;
      },
      () => {
        leading.settle(undefined);
        return undefined;
      },
    );
  }

  get size(): number {
    return this.inflight.size;
  }
}

/** A leader's hold on its key. */
export interface Lead<T> {
  /** Offer `outcome` (undefined: nothing to share) to the waiters, and free the key. */
  settle(outcome: T | undefined): void;
}

class Leading<T> implements Lead<T> {
  private shared: Promise<T | undefined> | undefined;
  private resolve: ((outcome: T | undefined) => void) | undefined;
  private settled = false;
  private value: T | undefined;

  constructor(private readonly free: () => void) {}

  /** What the waiters get: made when the first one comes. */
  outcome(): Promise<T | undefined> {
    if (this.settled) return Promise.resolve(this.value);
    return (this.shared ??= new Promise((resolve) => (this.resolve = resolve)));
  }

  settle(outcome: T | undefined): void {
    if (this.settled) return;
    this.settled = true;
    this.value = outcome;
    this.free();
    this.resolve?.(outcome);
  }
}
