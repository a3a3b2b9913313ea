/**
 * What has been invalidated lately, so that an answer fetched before a change cannot be stored
 * after it. Without this, a miss that asked the wiki just before an edit, and got its answer just
 * after the edit's PURGE removed the old entries, would store the old page for a whole (long) TTL.
 *
 * Every invalidation takes the next sequence number and records it for each tag. A fetch notes
 * the number before it asks the wiki (mark); its answer is stored only if none of its tags was
 * invalidated since (invalidatedSince). A flush of everything counts for every tag.
 *
 * Bounded: the most recent `maxTags` tags are kept; a mark older than the oldest forgotten record
 * is answered conservatively (invalidated: the answer is delivered, not stored). Fetches last
 * seconds; a tag is forgotten only after `maxTags` newer ones.
 */
export class InvalidationLog {
  private seq = 0;
  private readonly tags = new Map<string, number>();
  /** Marks below this may have missed a forgotten record. */
  private forgottenUpTo = 0;
  private flushedAt = 0;
  /** The last flush that removed entries (a purge of everything), not a gap: see invalidatedSince. */
  private purgedAllAt = 0;

  constructor(private readonly maxTags = 100_000) {}

  mark(): number {
    return this.seq;
  }

  record(tags: readonly string[]): void {
    const n = ++this.seq;
    for (const tag of tags) {
      this.tags.delete(tag);
      this.tags.set(tag, n);
    }
    while (this.tags.size > this.maxTags) {
      const [oldest, at] = this.tags.entries().next().value as [string, number];
      this.tags.delete(oldest);
      this.forgottenUpTo = Math.max(this.forgottenUpTo, at);
    }
  }

  /**
   * Everything is invalidated: a purge of everything, or a gap in the change signals (nothing
   * stored before it is vouched for; the entries held stay, not fresh).
   */
  recordFlush(cause: 'purge' | 'gap' = 'purge'): void {
    this.flushedAt = ++this.seq;
    if (cause === 'purge') this.purgedAllAt = this.seq;
  }

  /**
   * `exceptGaps`: for entries that keep their storedAt (a reload's hand-over), which a gap already
   * makes not fresh (freshness.ts), as it does every entry held: only purges count. An answer
   * fetched meanwhile counts gaps too: stored, it would be fresh from now.
   */
  invalidatedSince(deps: readonly string[], mark: number, exceptGaps = false): boolean {
    if (this.seq === mark) return false;
    if ((exceptGaps ? this.purgedAllAt : this.flushedAt) > mark || this.forgottenUpTo > mark) return true;
    for (const tag of deps) if ((this.tags.get(tag) ?? 0) > mark) return true;
    return false;
  }
}
