/**
 * Concurrent misses for one key make one upstream request. The leader's outcome is offered to
 * the waiters; a waiter uses it only if the leader's answer was stored for that very key (which
 * already names the identity slot), otherwise it goes to the wiki itself. A waiter never waits
 * longer than `maxWaitMs`, whatever the leader does.
 */
export class Coalescer<T> {
  private readonly inflight = new Map<string, Promise<T | undefined>>();

  constructor(private readonly maxWaitMs: number) {}

  /** The leader's pending outcome for `key`, if one is on its way. */
  pending(key: string): Promise<T | undefined> | undefined {
    const p = this.inflight.get(key);
    if (!p) return undefined;
    return new Promise((resolve) => {
      const timer = setTimeout(() => resolve(undefined), this.maxWaitMs);
      timer.unref();
      p.then(
        (v) => {
          clearTimeout(timer);
          resolve(v);
        },
        () => {
          clearTimeout(timer);
          resolve(undefined);
        },
      );
    });
  }

  /** Run `work` as the leader for `key`; the promise resolves to what waiters may share. */
  lead(key: string, work: () => Promise<T | undefined>): Promise<T | undefined> {
    const p = work().finally(() => {
      if (this.inflight.get(key) === p) this.inflight.delete(key);
    });
    this.inflight.set(key, p);
    return p;
  }

  get size(): number {
    return this.inflight.size;
  }
}
