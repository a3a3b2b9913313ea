/**
 * Keeps the shared tier's own entries from filling Redis. Redis runs with `maxmemory-policy
 * noeviction` (docs/REDIS.md), so once `used_memory` reaches `maxmemory` it refuses writes with
 * OOM, and each refusal takes the tier down on the replica that met it: one client asking new
 * URLs (cache-busting parameters) would otherwise write a new entry per request, each kept for
 * its TTL and stale-if-error, until every replica lost the tier
 * (test/in-process/attack-cache-busting-fills-redis.test.ts).
 *
 * So `INFO memory` of every master the tier stores to (one Redis, the Sentinels' primary, each
 * master of a cluster) is read every MEMORY_POLL_MS, not per request, and at connect (the INFO
 * of ./server-check.ts). While a master's `used_memory` is at or above HIGH_WATER of its
 * `maxmemory`, new entries are not written to Redis (the local tier keeps them); it resumes once a
 * reading is below LOW_WATER. A store whose bytes, added to the last reading and to what this
 * process wrote since it was asked, would cross HIGH_WATER is skipped too: a burst between two
 * readings cannot reach `maxmemory` by this process' writes. Only entry stores are skipped: reads,
 * purges, invalidations, guards, locks and the change follower's cursor are small and go on.
 *
 * On a cluster an entry's key and its index sets are on several masters (./cluster-writes.ts):
 * every master with a bound must have room, and what is written counts against each.
 * A Redis without `maxmemory` (0) is left as it is, with a warning once.
 *
 * Not covered: other replicas' writes between two readings (each replica keeps its own
 * account), and Redis' memory that is not data (replication and client buffers); the 10 %
 * between HIGH_WATER and `maxmemory` is their room.
 */
import type { Logger } from 'pino';
import type { RedisMetrics } from '../../observe/metrics.js';
import { memoryOf } from './server-check.js';

/** Above this share of `maxmemory` no entry is written. */
export const HIGH_WATER = 0.9;
/** Below this share entries are written again (hysteresis: not on and off at every reading). */
export const LOW_WATER = 0.85;
/** How often every master's `INFO memory` is read while the tier is up. */
export const MEMORY_POLL_MS = 1_000;
/**
 * Skips are logged at most this often per master (with how many since the last line): under a
 * steady flood the estimate skips, a reading below LOW_WATER lets a few stores through, and so
 * on, every second.
 */
export const WARN_EVERY_MS = 60_000;

/** A master's last reading and what this process wrote to the tier since it was asked. */
export interface MasterMemory {
  readonly used: number;
  readonly max: number;
  /** Above HIGH_WATER at a reading, and not yet below LOW_WATER since. */
  readonly full: boolean;
  /** Bytes this process wrote since the reading was asked. */
  readonly writtenSince: number;
}

/** Whether a master is full after a reading of `used` of `max`, given whether it was. Pure. */
export function fullAfter(wasFull: boolean, used: number, max: number): boolean {
  if (max <= 0) return false;
  return used >= max * (wasFull ? LOW_WATER : HIGH_WATER);
}

/** Whether a store of `bytes` may go to a master whose account is `m`. Pure. */
export function roomFor(m: MasterMemory, bytes: number): boolean {
  if (m.max <= 0) return true;
  return !m.full && m.used + m.writtenSince + bytes <= m.max * HIGH_WATER;
}

/**
 * What a store of an encoded entry of `payloadBytes` may take in Redis: the value rounded up to
 * the allocator's size class (jemalloc's classes are at most 25 % apart), its key, expiry and
 * dictionary entry, and a member added to each of its `indexes` sets. An over-estimate. Pure.
 */
export function storeBytes(payloadBytes: number, indexes: number): number {
  return Math.ceil(payloadBytes * 1.25) + 256 + 128 * indexes;
}

/** A master the tier stores to, and how to ask it for `INFO memory`. */
export interface MemoryNode {
  readonly name: string;
  info(): Promise<string>;
}

interface Account {
  used: number;
  max: number;
  full: boolean;
  /** `written` when the reading was asked. */
  writtenAt: number;
}

export class RedisMemory {
  private readonly accounts = new Map<string, Account>();
  /** Bytes this process sent to Redis in entry stores, ever. */
  private written = 0;
  private readonly timer: NodeJS.Timeout;
  private reading = false;
  private closed = false;
  /** Masters already said to have no maxmemory. */
  private readonly unbounded = new Set<string>();
  /** By master: when a skip was last logged, and the skips since. */
  private readonly warned = new Map<string, { at: number; skipped: number }>();

  /**
   * `nodes`: the masters to read now (none while the tier is down); `timeoutMs`: the bound on
   * each INFO (a master that does not answer keeps its last reading, and the writes since count).
   */
  constructor(
    private readonly nodes: () => MemoryNode[],
    private readonly timeoutMs: number,
    private readonly metrics: RedisMetrics,
    private readonly log: Logger,
    private readonly now: () => number = Date.now,
  ) {
    this.timer = setInterval(() => void this.poll(), MEMORY_POLL_MS);
    this.timer.unref();
  }

  /** An INFO answer of the master `name` asked when `written` was `writtenAt` (the connect's INFO, or a poll's). */
  note(name: string, info: string, writtenAt = this.written): void {
    const m = memoryOf(info);
    if (!m || this.closed) return;
    if (m.max <= 0 && !this.unbounded.has(name)) {
      this.unbounded.add(name);
      this.log.warn(
        { redisMemory: 'unbounded', node: name, used: m.used },
        "redis has no maxmemory: nothing bounds the shared tier in Redis but its entries' TTLs (docs/REDIS.md asks for maxmemory with noeviction)",
      );
    }
    const full = fullAfter(this.accounts.get(name)?.full ?? false, m.used, m.max);
    this.accounts.set(name, { used: m.used, max: m.max, full, writtenAt });
  }

  /**
   * Whether an entry store of `bytes` (storeBytes) may go to Redis; if so it is counted as
   * written, else as skipped (wikiedge_redis_stores_skipped_total{reason="memory"}), logged at
   * most once per WARN_EVERY_MS per master.
   */
  admit(bytes: number): boolean {
    for (const [name, a] of this.accounts) {
      if (roomFor({ used: a.used, max: a.max, full: a.full, writtenSince: this.written - a.writtenAt }, bytes)) continue;
      this.metrics.storesSkipped.inc({ reason: 'memory' });
      const now = this.now();
      const last = this.warned.get(name);
      if (last && now - last.at < WARN_EVERY_MS) last.skipped++;
      else {
        this.warned.set(name, { at: now, skipped: 0 });
        this.log.warn(
          {
            redisMemory: 'full',
            node: name,
            used: a.used,
            max: a.max,
            writtenSince: this.written - a.writtenAt,
            bytes,
            highWater: HIGH_WATER,
            lowWater: LOW_WATER,
            // Skipped since the previous line, if any (they were not logged).
            ...(last && { skippedSince: last.skipped }),
          },
          'redis memory near its maxmemory: new entries are kept in the local tier only until it is below the low-water mark',
        );
      }
      return false;
    }
    this.written += bytes;
    return true;
  }

  /** Read every master now (also each MEMORY_POLL_MS); one round at a time. */
  async poll(): Promise<void> {
    if (this.reading || this.closed) return;
    this.reading = true;
    try {
      const nodes = this.nodes();
      if (nodes.length === 0) return;
      // A master no longer among them (a cluster's slots moved) no longer decides.
      const names = new Set(nodes.map((n) => n.name));
      for (const name of this.accounts.keys()) if (!names.has(name)) this.accounts.delete(name);
      await Promise.all(
        nodes.map(async (node) => {
          const writtenAt = this.written;
          const info = await Promise.race([
            node.info().catch(() => undefined),
            new Promise<undefined>((resolve) => setTimeout(() => resolve(undefined), this.timeoutMs).unref()),
          ]);
          if (info !== undefined) this.note(node.name, info, writtenAt);
        }),
      );
    } finally {
      this.reading = false;
    }
  }

  close(): void {
    this.closed = true;
    clearInterval(this.timer);
  }
}
