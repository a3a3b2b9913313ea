/**
 * Redis' gap mark (`P stale-before`, invalidations.ts): entries stored before it are not vouched
 * for, on every replica. This process learns it each time the tier comes up (at start, and after
 * every down: a replica that started while Redis was unreachable or still loading its dataset,
 * or that lost it for a while, never heard the gaps recorded meanwhile), and reads it again,
 * every RETRY_MS while the tier stays up, until a read answers.
 *
 * Until it is known, this process cannot tell a Redis entry stored before a gap from one stored
 * after it, so it vouches for none: lookups find no Redis entry (entries.ts get), a lock's waiter
 * takes none (redis-tier.ts waitForEntry), and the lock counts no entry as "already fetched"
 * (locks.ts LOCK_LUA). The local tier and the wiki answer meanwhile.
 *
 * Learned, it is handed to the local tier first (`onLearned`: cache/tiered-storage.ts applies it
 * as a gap, so that the Redis entries it then finds stored before it are judged stale, not
 * fresh, by the same freshness as its own), and only then is it `known`. Gaps heard later on the
 * purge channel (an `expire` message) raise it (`heard`); a channel lost meanwhile is a gap of its
 * own (connection.ts onChannelResumed).
 */
import type { Logger } from 'pino';
import type { RedisConnection } from './connection.js';

/** How often a read that failed is tried again while the tier stays up. */
const RETRY_MS = 250;

/** What the lock is told while the mark is unknown: no entry is vouched for (locks.ts). */
export const NOTHING_VOUCHED = Number.MAX_SAFE_INTEGER;

export interface StaleBeforeOptions {
  /** Read the mark: 0 when none, undefined when Redis did not answer (invalidations.ts staleBefore). */
  readonly read: () => Promise<number | undefined>;
  /** The mark read, before it is known here (see above). */
  readonly onLearned?: (at: number) => void;
  readonly log: Logger;
}

export class StaleBeforeMark {
  /** The newest mark known since the tier last came up; undefined until a read answered. */
  private value: number | undefined;
  /** Bumped each time the tier comes up: a read begun before answers for an older Redis. */
  private generation = 0;
  private retry: NodeJS.Timeout | undefined;
  /** The newest gap heard on the channel while the mark was being read (heard). */
  private heardMeanwhile = 0;
  private failing = false;
  private closed = false;
  private readonly waiters: (() => void)[] = [];

  constructor(
    private readonly connection: RedisConnection,
    private readonly opts: StaleBeforeOptions,
  ) {
    connection.onUp(() => {
      this.value = undefined;
      this.heardMeanwhile = 0;
      this.generation++;
      void this.learn(this.generation);
    });
  }

  /** The mark, once read since the tier last came up. */
  get known(): number | undefined {
    return this.value;
  }

  /** What the lock compares an entry's storedAt with: the mark, or, unknown, every instant. */
  get lockCutoff(): number {
    return this.value ?? NOTHING_VOUCHED;
  }

  /** A gap heard on the purge channel (ours or another replica's): the mark Redis now holds is at least this. */
  heard(before: number): void {
    if (this.value === undefined) this.heardMeanwhile = Math.max(this.heardMeanwhile, before);
    else if (before > this.value) this.value = before;
  }

  /** Resolves once the mark is known, or after `maxMs`. */
  async learned(maxMs: number): Promise<boolean> {
    if (this.value === undefined && maxMs > 0) {
      let timer: NodeJS.Timeout | undefined;
      await new Promise<void>((resolve) => {
        this.waiters.push(resolve);
        timer = setTimeout(resolve, maxMs);
        timer.unref();
      });
      clearTimeout(timer);
    }
    return this.value !== undefined;
  }

  close(): void {
    this.closed = true;
    if (this.retry) clearTimeout(this.retry);
    this.retry = undefined;
    for (const w of this.waiters.splice(0)) w();
  }

  private async learn(generation: number): Promise<void> {
    if (this.retry) clearTimeout(this.retry);
    this.retry = undefined;
    const at = await this.opts.read();
    if (this.closed || generation !== this.generation) return;
    if (at === undefined) {
      if (!this.failing) {
        this.failing = true;
        this.opts.log.warn(
          { redisStaleBefore: 'unread' },
          'the gap mark in redis (stale-before) could not be read: no redis entry is served until it is, tried again',
        );
      }
      // Tried again while the tier stays up; a tier that went down reads it again when it comes up (onUp).
      this.retry = setTimeout(() => {
        this.retry = undefined;
        if (!this.closed && generation === this.generation && this.connection.up) void this.learn(generation);
      }, RETRY_MS);
      this.retry.unref();
      return;
    }
    if (this.failing) {
      this.failing = false;
      this.opts.log.info({ redisStaleBefore: at }, 'the gap mark in redis (stale-before) was read: redis entries are served again');
    }
    this.opts.onLearned?.(at);
    // A gap published while the read was on its way may not be in what it read.
    this.value = Math.max(at, this.heardMeanwhile);
    for (const w of this.waiters.splice(0)) w();
  }
}
