/**
 * Work a request leaves running once its answer went out: a miss's compression and store
 * (steps/flow.ts fetchAndStore answers first, then stores). Closing the gateway waits for it,
 * within a bound, before it closes the Redis connection and the upstream pool the store and
 * the cross-replica lock's release still use (apps/app.ts closeGateway).
 */
export class AfterAnswers {
  private readonly pending = new Set<Promise<void>>();

  /** Tracks `work` until it settles; its outcome is its owner's to handle. */
  track(work: Promise<unknown>): void {
    const settled = work.then(
      () => undefined,
      () => undefined,
    );
    this.pending.add(settled);
    void settled.then(() => this.pending.delete(settled));
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
    await Promise.race([Promise.all([...this.pending]), bound]);
    clearTimeout(timer);
  }
}
