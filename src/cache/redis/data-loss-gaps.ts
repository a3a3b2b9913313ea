/**
 * A gap owed because Redis may have lost acknowledged writes (cluster-watch.ts for a cluster's
 * masters, connection.ts for the one primary of a URL or of Sentinels): `onDataLost` records it
 * (nothing stored before now is vouched for, here and on every replica through Redis), and is
 * tried again GAP_RETRY_MS apart until it succeeds (the tier may be down just then), one call at a
 * time; `fresh` is true for the call that follows a loss not yet handed on (not only a retry).
 */
const GAP_RETRY_MS = 1_000;

export class DataLossGaps {
  /** A gap to record: a loss was seen and `onDataLost` has not yet succeeded. */
  private owed = false;
  /** A loss was seen since `onDataLost` was last called (not only tried again). */
  private freshLoss = false;
  private timer: NodeJS.Timeout | undefined;
  private recording = false;
  private closed = false;

  constructor(private readonly onDataLost: (fresh: boolean) => Promise<boolean> = () => Promise.resolve(true)) {}

  /** A loss was seen: record a gap (now, or as soon as the tier takes it). */
  owe(): void {
    this.owed = true;
    this.freshLoss = true;
    void this.record();
  }

  private async record(): Promise<void> {
    if (this.recording || this.closed) return;
    this.recording = true;
    try {
      // Owed again while a call was on its way: that call's instant may precede the new loss.
      while (this.owed && !this.closed) {
        this.owed = false;
        const fresh = this.freshLoss;
        this.freshLoss = false;
        if (!(await this.onDataLost(fresh).catch(() => false))) {
          this.owed = true;
          break;
        }
      }
    } finally {
      this.recording = false;
    }
    if (this.owed && !this.closed && this.timer === undefined) {
      this.timer = setTimeout(() => {
        this.timer = undefined;
        void this.record();
      }, GAP_RETRY_MS);
      this.timer.unref();
    }
  }

  close(): void {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
  }
}
