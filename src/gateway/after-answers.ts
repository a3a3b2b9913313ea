/**
 * Work a request leaves running once its answer went out: a miss's compression and store
 * (steps/flow.ts fetchAndStore answers first, then stores). Closing the gateway waits for it,
 * within a bound, before it closes the Redis connection and the upstream pool the store and
 * the cross-replica lock's release still use (apps/app.ts closeGateway).
 */
export class AfterAnswers {
  private readonly pending = new Set<Running>();

  /**
   * Work begun, until its `done()`: the miss's one handler of its fetch calls it (steps/flow.ts
   * lookupOrFetch), so tracking a miss costs no promise of its own.
   */
  begin(): Running {
    const running = new Running(this.pending);
    this.pending.add(running);
    return running;
  }

  /** Tracks `work` until it settles; its outcome is its owner's to handle. */
  track(work: Promise<unknown>): void {
    const running = this.begin();
    work.then(
      () => running.done(),
      () => running.done(),
    );
  }

  /** How many are still running. */
  get size(): number {
    return this.pending.size;
  }

  /** Resolves once everything tracked now has settled, or after `boundMs`, whichever is first. */
  async settled(boundMs: number): Promise<void> {
    if (this.pending.size === 0) return;
    let timer: NodeJS.Timeout | undefined;
    const bound = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, boundMs);
      timer.unref();
    });
    await Promise.race([Promise.all([...this.pending].map((r) => r.ended())), bound]);
    clearTimeout(timer);
  }
}

/** One piece of work a request left running. */
export class Running {
  private end: Promise<void> | undefined;
  private resolve: (() => void) | undefined;
  private finished = false;

  constructor(private readonly pending: Set<Running>) {}

  done(): void {
    if (this.finished) return;
    this.finished = true;
    this.pending.delete(this);
    this.resolve?.();
  }

  /** Resolves when it is done: made only when someone waits (a closing gateway, a trace). */
  ended(): Promise<void> {
    if (this.finished) return Promise.resolve();
    return (this.end ??= new Promise((resolve) => (this.resolve = resolve)));
  }
}
