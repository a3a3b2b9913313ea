/**
 * The optional second tier, shared by every replica through one Redis (WIKIEDGE_REDIS_URL):
 * entries (both tiers' keys, hashed), index sets for purges, a short fetch lock per key, and a
 * pub/sub channel that carries purges to every replica's local LRU.
 *
 * Keys (P = WIKIEDGE_REDIS_KEY_PREFIX, default `wikiedge:`):
 *   P e:<sha256(cache key)>     the encoded entry (entry-codec.ts), PX = what is left of
 *                               ttl + max(grace, stale-if-error) from the entry's storedAt
 *   P l:<sha256(cache key)>     the fetch lock: SET NX PX WIKIEDGE_REDIS_LOCK_MS, a random token
 *   P u:<url key>               set of entry hashes of that URL (every variant), for PURGE and
 *                               (by SCAN MATCH) for prefix purges
 *   P s:<sha256(session slot)>  set of entry hashes of that session, for logout evictions
 *   P m:<sha256(module)>        set of entry hashes by module, for module purges
 *   P purge                     the channel: {"kind":"url","urlKey":…} and friends
 * Cache keys already hold an HMAC of the session's credentials, never a raw cookie; they are
 * hashed once more so key lengths are bounded. Index sets expire with their longest entry.
 *
 * Faults: every call is bounded by `timeoutMs` (module, prefix and all purges, which are admin
 * requests, by max(1 s, 20 × timeoutMs)); the first failure
 * marks the tier down (logged once) and every later call returns at once without Redis, until
 * the connection is ready again and a PING answers (logged once). ioredis reconnects by itself;
 * commands are never queued while disconnected (enableOfflineQueue: false).
 */
import { createHash, randomBytes } from 'node:crypto';
import { Redis, type RedisOptions } from 'ioredis';
import type { Logger } from 'pino';
import type { Tier } from '../outcomes.js';
import type { RedisMetrics, RedisOp, RedisWaitOutcome } from '../metrics.js';
import { decodeEntry, encodeEntry } from './entry-codec.js';
import { type StaleWindows, remainingKeepMs } from './freshness.js';
import type { CacheEntry } from './store.js';

/** What travels on the purge channel: never a cookie (slots are HMACs), never an entry. */
export type PurgeMessage =
  | { readonly kind: 'url'; readonly urlKey: string }
  | { readonly kind: 'slot'; readonly slot: string }
  | { readonly kind: 'module'; readonly module: string }
  | { readonly kind: 'prefix'; readonly prefix: string }
  | { readonly kind: 'all' };

export interface RedisTierOptions {
  readonly url: string;
  readonly timeoutMs: number;
  readonly lockMs: number;
  readonly keyPrefix: string;
  readonly windows: StaleWindows;
  readonly now: () => number;
  readonly log: Logger;
  readonly metrics: RedisMetrics;
  /** Apply a purge (ours or another replica's) to the local tier. */
  readonly onPurge: (message: PurgeMessage) => void;
  /** Test hook: replace the client factory. */
  readonly connect?: (url: string, options: RedisOptions) => Redis;
}

export type LockResult =
  | { readonly kind: 'won'; readonly token: string }
  | { readonly kind: 'lost' }
  | { readonly kind: 'unavailable' };

type Outcome<T> = { readonly ok: true; readonly value: T } | { readonly ok: false };
const FAILED: Outcome<never> = { ok: false };

// KEYS[1] entry, KEYS[2..] index sets; ARGV[1] payload, ARGV[2] px, ARGV[3] member.
// An index set lives as long as its longest-lived member (PTTL is -1 for a set just made).
const STORE_LUA = `
local px = tonumber(ARGV[2])
redis.call('SET', KEYS[1], ARGV[1], 'PX', px)
for i = 2, #KEYS do
  redis.call('SADD', KEYS[i], ARGV[3])
  if redis.call('PTTL', KEYS[i]) < px then redis.call('PEXPIRE', KEYS[i], px) end
end
return 1`;

// KEYS: index sets; ARGV[1] the entry key prefix. Deletes every member's entry and the sets.
const PURGE_LUA = `
local n = 0
for i = 1, #KEYS do
  local members = redis.call('SMEMBERS', KEYS[i])
  for _, m in ipairs(members) do n = n + redis.call('DEL', ARGV[1] .. m) end
  redis.call('DEL', KEYS[i])
end
return n`;

// Delete the lock only if it is still ours (it may have expired and been taken by another replica).
const UNLOCK_LUA = `
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0`;

interface Scripts {
  wikiedgeStore(numKeys: number, ...args: (string | Buffer | number)[]): Promise<number>;
  wikiedgePurge(numKeys: number, ...args: string[]): Promise<number>;
  wikiedgeUnlock(lockKey: string, token: string): Promise<number>;
}

export const sha256 = (s: string): string => createHash('sha256').update(s).digest('hex');

/** Escape Redis glob metacharacters (SCAN MATCH). */
export function globEscape(s: string): string {
  return s.replace(/[*?[\]\\]/g, '\\$&');
}

/** Redis key names for a prefix; pure, for tests. */
export function redisKeys(prefix: string) {
  return {
    entry: (key: string) => `${prefix}e:${sha256(key)}`,
    member: (key: string) => sha256(key),
    lock: (key: string) => `${prefix}l:${sha256(key)}`,
    url: (urlKey: string) => `${prefix}u:${urlKey}`,
    slot: (slot: string) => `${prefix}s:${sha256(slot)}`,
    module: (module: string) => `${prefix}m:${sha256(module)}`,
    entryPrefix: `${prefix}e:`,
    channel: `${prefix}purge`,
  };
}

/** Parse a channel message; anything malformed is ignored. */
export function parsePurgeMessage(text: string): PurgeMessage | undefined {
  if (text.length > 65_536) return undefined;
  let m: unknown;
  try {
    m = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (typeof m !== 'object' || m === null) return undefined;
  const o = m as Record<string, unknown>;
  const s = (k: string) => (typeof o[k] === 'string' ? (o[k] as string) : undefined);
  switch (o['kind']) {
    case 'url':
      return s('urlKey') !== undefined ? { kind: 'url', urlKey: s('urlKey')! } : undefined;
    case 'slot':
      return s('slot') ? { kind: 'slot', slot: s('slot')! } : undefined;
    case 'module':
      return s('module') ? { kind: 'module', module: s('module')! } : undefined;
    case 'prefix':
      return s('prefix') !== undefined ? { kind: 'prefix', prefix: s('prefix')! } : undefined;
    case 'all':
      return { kind: 'all' };
    default:
      return undefined;
  }
}

const sleep = (ms: number) =>
  new Promise<void>((resolve) => {
    setTimeout(resolve, ms).unref();
  });

export class RedisTier {
  private readonly cmd: Redis & Scripts;
  private readonly sub: Redis;
  private readonly keys: ReturnType<typeof redisKeys>;
  private readonly id = randomBytes(6).toString('hex');
  private state: 'starting' | 'up' | 'down' = 'starting';
  private subscribed = false;
  private subState: 'starting' | 'up' | 'down' = 'starting';
  private probing: NodeJS.Timeout | undefined;
  private closed = false;
  private lastError = '';
  private readonly inflightGets = new Map<string, Promise<Outcome<Buffer | null>>>();
  private readonly purgeTimeoutMs: number;
  private readonly upWaiters: (() => void)[] = [];

  constructor(private readonly opts: RedisTierOptions) {
    this.keys = redisKeys(opts.keyPrefix);
    this.purgeTimeoutMs = Math.max(1_000, opts.timeoutMs * 20);
    const base: RedisOptions = {
      // RESP2: the widest server compatibility; the subscriber has its own connection anyway.
      protocol: 2,
      connectTimeout: Math.max(1_000, opts.timeoutMs * 20),
      // Reconnect forever, at most a second apart.
      retryStrategy: (times) => Math.min(50 * times, 1_000),
      disableClientInfo: true,
      enableAutoPipelining: false,
    };
    const connect = opts.connect ?? ((url, o) => new Redis(url, o));
    this.cmd = connect(opts.url, {
      ...base,
      connectionName: 'wikiedge',
      // Never queue while disconnected, never replay after a reconnect: fail at once instead.
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      autoResendUnfulfilledCommands: false,
    }) as Redis & Scripts;
    this.cmd.defineCommand('wikiedgeStore', { lua: STORE_LUA });
    this.cmd.defineCommand('wikiedgePurge', { lua: PURGE_LUA });
    this.cmd.defineCommand('wikiedgeUnlock', { lua: UNLOCK_LUA, numberOfKeys: 1 });
    this.cmd.on('error', (err: Error) => {
      this.lastError = err.message;
      if (this.state === 'starting') this.markDown('connect', err);
    });
    this.cmd.on('ready', () => void this.probe());
    this.cmd.on('close', () => {
      if (!this.closed) this.markDown('connection', new Error(this.lastError || 'connection closed'));
    });

    this.sub = connect(opts.url, {
      ...base,
      connectionName: 'wikiedge-sub',
      // The SUBSCRIBE is queued until connected, and replayed on every reconnect.
      enableOfflineQueue: true,
      autoResubscribe: true,
      maxRetriesPerRequest: null,
    });
    this.sub.on('error', (err: Error) => {
      this.lastError = err.message;
    });
    this.sub.on('ready', () => this.subscriberUp());
    this.sub.on('close', () => this.subscriberDown());
    this.sub.on('message', (channel: string, message: string) => {
      if (channel === this.keys.channel) this.onMessage(message);
    });
    this.sub.subscribe(this.keys.channel).then(
      () => this.subscriberUp(),
      (err: unknown) => {
        if (!this.closed) opts.metrics.error('subscribe');
        this.lastError = String(err);
      },
    );
  }

  /** True while Redis is used on the request path. */
  get up(): boolean {
    return this.state === 'up';
  }

  /** Resolves when the tier is up (or after `maxMs`, whichever is first): used once at start. */
  async ready(maxMs: number): Promise<boolean> {
    if (this.state === 'up' && this.subscribed) return true;
    await Promise.race([
      new Promise<void>((resolve) => this.upWaiters.push(resolve)),
      sleep(maxMs),
    ]);
    return this.state === 'up';
  }

  // ------------------------------------------------------------------------------ state
  private markUp(): void {
    if (this.closed || this.state === 'up') return;
    const was = this.state;
    this.state = 'up';
    this.opts.metrics.up.set(1);
    if (this.probing) clearInterval(this.probing);
    this.probing = undefined;
    this.opts.log.info({ redis: 'up', was }, 'redis tier up: shared entries, locks and purges in use');
    this.notifyWaiters();
  }

  private markDown(op: RedisOp | 'connection' | 'connect', err: unknown): void {
    if (this.closed || this.state === 'down') return;
    this.state = 'down';
    this.opts.metrics.up.set(0);
    this.opts.log.warn(
      { redis: 'down', op, err: err instanceof Error ? err.message : String(err) },
      'redis tier down: serving from the local tier and the wiki until it is back',
    );
    // A slow Redis leaves the connection "ready": no event will say it is back, so probe.
    this.probing ??= setInterval(() => void this.probe(), Math.max(250, this.opts.timeoutMs * 5));
    this.probing.unref();
  }

  private async probe(): Promise<void> {
    if (this.closed || this.cmd.status !== 'ready') return;
    const r = await this.call('ping', () => this.cmd.ping(), { timeoutMs: this.opts.timeoutMs, evenIfDown: true });
    if (r.ok) this.markUp();
  }

  private subscriberUp(): void {
    if (this.closed) return;
    this.subscribed = true;
    if (this.subState === 'down') this.opts.log.info({ redisSubscriber: 'up' }, 'redis purge channel subscribed again');
    this.subState = 'up';
    this.notifyWaiters();
  }

  private subscriberDown(): void {
    if (this.closed) return;
    this.subscribed = false;
    if (this.subState === 'up') {
      this.opts.log.warn(
        { redisSubscriber: 'down' },
        'redis purge channel lost: purges by other replicas do not reach this one until it is back',
      );
    }
    this.subState = 'down';
  }

  private notifyWaiters(): void {
    if (this.state !== 'up' || !this.subscribed) return;
    for (const w of this.upWaiters.splice(0)) w();
  }

  /**
   * Run one Redis call, bounded. Never throws: a failure or timeout counts in
   * wikiedge_redis_errors_total{op}, marks the tier down, and returns FAILED.
   */
  private call<T>(
    op: RedisOp,
    fn: () => Promise<T>,
    { timeoutMs = this.opts.timeoutMs, evenIfDown = false } = {},
  ): Promise<Outcome<T>> {
    if (this.closed || (!evenIfDown && this.state !== 'up')) return Promise.resolve(FAILED);
    return new Promise((resolve) => {
      let settled = false;
      const fail = (err: unknown) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        this.opts.metrics.error(op);
        this.markDown(op, err);
        resolve(FAILED);
      };
      const timer = setTimeout(() => fail(new Error(`redis ${op} timed out after ${timeoutMs} ms`)), timeoutMs);
      let p: Promise<T>;
      try {
        p = fn();
      } catch (err) {
        fail(err);
        return;
      }
      p.then(
        (value) => {
          if (settled) return;
          settled = true;
          clearTimeout(timer);
          resolve({ ok: true, value });
        },
        (err: unknown) => fail(err),
      );
    });
  }

  // ----------------------------------------------------------------------------- entries
  /**
   * The entry stored under `key` by any replica, or undefined (absent, Redis unusable, or not an
   * entry of `tier`). Concurrent lookups of one key share one GET.
   */
  async get(tier: Tier, key: string): Promise<CacheEntry | undefined> {
    if (!this.up) {
      this.opts.metrics.lookup('unavailable');
      return undefined;
    }
    const rk = this.keys.entry(key);
    let p = this.inflightGets.get(rk);
    if (!p) {
      p = this.call('get', () => this.cmd.getBuffer(rk)).finally(() => this.inflightGets.delete(rk));
      this.inflightGets.set(rk, p);
    }
    const r = await p;
    if (!r.ok) {
      this.opts.metrics.lookup('unavailable');
      return undefined;
    }
    const entry = r.value === null ? undefined : this.decode(tier, r.value);
    this.opts.metrics.lookup(entry ? 'hit' : 'miss');
    return entry;
  }

  private decode(tier: Tier, buf: Buffer): CacheEntry | undefined {
    try {
      const d = decodeEntry(buf);
      // The key names the slot, so this cannot differ; checked anyway: never cross tiers.
      return d.tier === tier ? d.entry : undefined;
    } catch {
      return undefined;
    }
  }

  /** Write an entry (and its index memberships) for every replica. Resolves when done or given up. */
  async set(tier: Tier, key: string, entry: CacheEntry): Promise<boolean> {
    if (!this.up) return false;
    const px = remainingKeepMs(entry, this.opts.now(), this.opts.windows);
    if (px === 0) return false;
    let payload: Buffer;
    try {
      payload = encodeEntry(tier, entry);
    } catch {
      return false;
    }
    const indexes = [this.keys.url(entry.urlKey)];
    if (entry.slot !== undefined) indexes.push(this.keys.slot(entry.slot));
    for (const m of new Set(entry.modules)) indexes.push(this.keys.module(m));
    const r = await this.call('set', () =>
      this.cmd.wikiedgeStore(1 + indexes.length, this.keys.entry(key), ...indexes, payload, px, this.keys.member(key)),
    );
    if (r.ok) this.opts.metrics.stored.inc({ tier });
    return r.ok;
  }

  // -------------------------------------------------------------------------------- lock
  /** Try to become the one replica that fetches `key` now. */
  async lock(key: string): Promise<LockResult> {
    if (!this.up) {
      this.opts.metrics.lock('unavailable');
      return { kind: 'unavailable' };
    }
    const token = randomBytes(9).toString('base64url');
    const r = await this.call('lock', () => this.cmd.set(this.keys.lock(key), token, 'PX', this.opts.lockMs, 'NX'));
    const result: LockResult = !r.ok ? { kind: 'unavailable' } : r.value === 'OK' ? { kind: 'won', token } : { kind: 'lost' };
    this.opts.metrics.lock(result.kind);
    return result;
  }

  /** Release a lock we won (only if it is still ours). */
  async unlock(key: string, token: string): Promise<void> {
    // Down: the lock expires by itself (PX).
    await this.call('unlock', () => this.cmd.wikiedgeUnlock(this.keys.lock(key), token));
  }

  /**
   * Having lost the lock: poll for the winner's entry, every 5 ms growing to 50 ms, for at most
   * `maxWaitMs` (and never past the lock's own lifetime). Each poll is one round trip: EXISTS
   * lock, then GET entry. Ends with the entry if `accept` takes it; `released` when the lock is
   * gone without an acceptable entry (the winner's answer was not storable, or it failed);
   * `timeout`; or `unavailable` when Redis fails.
   */
  async waitForEntry(
    tier: Tier,
    key: string,
    accept: (entry: CacheEntry) => boolean,
    maxWaitMs: number,
  ): Promise<{ outcome: RedisWaitOutcome; entry?: CacheEntry }> {
    const started = Date.now();
    const deadline = started + Math.min(maxWaitMs, this.opts.lockMs);
    const lockKey = this.keys.lock(key);
    const entryKey = this.keys.entry(key);
    let delay = 5;
    const end = (outcome: RedisWaitOutcome, entry?: CacheEntry) => {
      this.opts.metrics.wait(outcome);
      return entry ? { outcome, entry } : { outcome };
    };
    for (;;) {
      await sleep(Math.max(0, Math.min(delay, deadline - Date.now())));
      const r = await this.call('poll', () => this.cmd.pipeline().exists(lockKey).getBuffer(entryKey).exec());
      if (!r.ok || !r.value) return end('unavailable');
      const [[lockErr, locked], [getErr, buf]] = r.value as [[Error | null, number], [Error | null, Buffer | null]];
      if (lockErr || getErr) {
        this.opts.metrics.error('poll');
        return end('unavailable');
      }
      const entry = buf ? this.decode(tier, buf) : undefined;
      if (entry && accept(entry)) return end('entry', entry);
      if (locked === 0) return end('released');
      if (Date.now() >= deadline) return end('timeout');
      delay = Math.min(delay * 1.5, 50);
    }
  }

  // ------------------------------------------------------------------------------ purges
  /**
   * Remove entries from Redis and tell every replica (this one included) to remove them from its
   * local tier. Resolves to the number of entries removed from Redis, or null when Redis could
   * not be reached (then neither Redis nor the other replicas were purged).
   */
  async purge(message: PurgeMessage): Promise<number | null> {
    // Down: skip at once (a logout or a PURGE must not wait for a hung Redis); the caller reports it.
    if (!this.up) return null;
    let removed: number | null;
    switch (message.kind) {
      case 'url':
        removed = await this.purgeIndexes([this.keys.url(message.urlKey)], this.opts.timeoutMs);
        break;
      case 'slot':
        removed = await this.purgeIndexes([this.keys.slot(message.slot)], this.opts.timeoutMs);
        break;
      case 'module':
        removed = await this.purgeIndexes([this.keys.module(message.module)]);
        break;
      case 'prefix':
        removed = await this.purgePrefix(message.prefix);
        break;
      case 'all':
        removed = await this.purgeAll();
        break;
    }
    if (removed === null) return null;
    const published = await this.call('publish', () =>
      this.cmd.publish(this.keys.channel, JSON.stringify({ ...message, from: this.id })),
    );
    return published.ok ? removed : null;
  }

  /** One script call; URL and session purges (on a client's path) get the tight bound. */
  private async purgeIndexes(indexKeys: string[], timeoutMs = this.purgeTimeoutMs): Promise<number | null> {
    const r = await this.call('purge', () => this.cmd.wikiedgePurge(indexKeys.length, ...indexKeys, this.keys.entryPrefix), {
      timeoutMs,
    });
    return r.ok ? Number(r.value) : null;
  }

  /** SCAN over the URL index names (never KEYS), then purge what they index, 100 at a time. */
  private async purgePrefix(prefix: string): Promise<number | null> {
    let n = 0;
    const ok = await this.scan(`${globEscape(this.opts.keyPrefix)}u:${globEscape(prefix)}*`, async (keys) => {
      for (let i = 0; i < keys.length; i += 100) {
        const removed = await this.purgeIndexes(keys.slice(i, i + 100));
        if (removed === null) return false;
        n += removed;
      }
      return true;
    });
    return ok ? n : null;
  }

  /** Every entry and index set of this prefix (locks included: harmless). */
  private async purgeAll(): Promise<number | null> {
    let n = 0;
    const ok = await this.scan(`${globEscape(this.opts.keyPrefix)}[eusml]:*`, async (keys) => {
      if (keys.length === 0) return true;
      const r = await this.call('purge', () => this.cmd.unlink(...keys), { timeoutMs: this.purgeTimeoutMs });
      if (!r.ok) return false;
      n += keys.filter((k) => k.startsWith(this.keys.entryPrefix)).length;
      return true;
    });
    return ok ? n : null;
  }

  private async scan(match: string, each: (keys: string[]) => Promise<boolean>): Promise<boolean> {
    let cursor = '0';
    do {
      const c = cursor;
      const r = await this.call('purge', () => this.cmd.scan(c, 'MATCH', match, 'COUNT', 1000), {
        timeoutMs: this.purgeTimeoutMs,
      });
      if (!r.ok) return false;
      cursor = r.value[0];
      if (!(await each(r.value[1]))) return false;
    } while (cursor !== '0');
    return true;
  }

  private onMessage(text: string): void {
    const message = parsePurgeMessage(text);
    if (!message) return;
    this.opts.metrics.purgeMessages.inc({ kind: message.kind });
    try {
      this.opts.onPurge(message);
    } catch (err) {
      this.opts.log.error({ err: String(err) }, 'applying a redis purge message failed');
    }
  }

  // ------------------------------------------------------------------------------- close
  /** Close both connections (QUIT, bounded; then drop them). */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (this.probing) clearInterval(this.probing);
    this.opts.metrics.up.set(0);
    const quit = (c: Redis) => (c.status === 'ready' ? c.quit().catch(() => undefined) : Promise.resolve());
    await Promise.race([Promise.all([quit(this.cmd), quit(this.sub)]), sleep(500)]);
    this.cmd.disconnect();
    this.sub.disconnect();
  }
}
