/**
 * The purge side of the Redis tier: removing entries through their index sets (one script call),
 * by URL prefix or all at once (SCAN, never KEYS), and the pub/sub channel that carries every
 * purge to every replica's local tier (this one's included).
 *
 *   P u:<url key> / P s:<sha256(slot)> / P m:<sha256(module)>   the index sets entries.ts fills
 *   P purge     the channel: {"kind":"url","urlKey":…} and friends; never a cookie (slots are
 *               HMACs), never an entry
 *
 * Bounds: URL and session purges (on a client's path) by `timeoutMs`; module, prefix and all
 * purges (admin requests) by max(1 s, 20 × timeoutMs) per call. Down: skipped at once, the
 * caller reports `redisPurged: null`.
 */
import { randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import type { RedisMetrics } from '../../metrics.js';
import type { RedisConnection } from './connection.js';
import { type RedisKeys, globEscape } from './keys.js';
import type { RedisInvalidations } from './invalidations.js';

/** What travels on the purge channel: never a cookie (slots are HMACs), never an entry. */
export type PurgeMessage =
  | { readonly kind: 'url'; readonly urlKey: string }
  | { readonly kind: 'slot'; readonly slot: string }
  | { readonly kind: 'module'; readonly module: string }
  | { readonly kind: 'prefix'; readonly prefix: string }
  | { readonly kind: 'all' }
  /** A change: every entry depending on one of the tags (invalidation/dependencies.ts). */
  | { readonly kind: 'tags'; readonly tags: readonly string[] }
  /** A user's rights changed: every entry of its sessions. */
  | { readonly kind: 'user'; readonly user: string }
  /** A gap in the change signals: nothing stored before `before` (ms) is vouched for. */
  | { readonly kind: 'expire'; readonly before: number };

// KEYS: index sets; ARGV[1] the entry key prefix. Deletes every member's entry and the sets.
const PURGE_LUA = `
local n = 0
for i = 1, #KEYS do
  local members = redis.call('SMEMBERS', KEYS[i])
  for _, m in ipairs(members) do n = n + redis.call('DEL', ARGV[1] .. m) end
  redis.call('DEL', KEYS[i])
end
return n`;

interface PurgeScript {
  wikiedgePurge(numKeys: number, ...args: string[]): Promise<number>;
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
    case 'tags': {
      const tags = o['tags'];
      return Array.isArray(tags) && tags.every((t) => typeof t === 'string') ? { kind: 'tags', tags: tags as string[] } : undefined;
    }
    case 'user':
      return s('user') ? { kind: 'user', user: s('user')! } : undefined;
    case 'expire':
      return typeof o['before'] === 'number' && Number.isFinite(o['before']) ? { kind: 'expire', before: o['before'] } : undefined;
    default:
      return undefined;
  }
}

export interface RedisPurgesOptions {
  readonly keyPrefix: string;
  readonly timeoutMs: number;
  readonly log: Logger;
  readonly metrics: RedisMetrics;
  /** Apply a purge (ours or another replica's) to the local tier. */
  readonly onPurge: (message: PurgeMessage) => void;
}

export class RedisPurges {
  private readonly cmd: RedisConnection['cmd'] & PurgeScript;
  /** Names this replica's messages on the channel. */
  private readonly id = randomBytes(6).toString('hex');
  private readonly purgeTimeoutMs: number;

  constructor(
    private readonly connection: RedisConnection,
    private readonly keys: RedisKeys,
    private readonly opts: RedisPurgesOptions,
    private readonly invalidations: RedisInvalidations,
  ) {
    this.purgeTimeoutMs = Math.max(1_000, opts.timeoutMs * 20);
    this.cmd = connection.cmd as RedisConnection['cmd'] & PurgeScript;
    this.cmd.defineCommand('wikiedgePurge', { lua: PURGE_LUA });
    connection.subscribe(keys.channel, (text) => this.onMessage(text));
  }

  /**
   * Remove entries from Redis and tell every replica (this one included) to remove them from its
   * local tier. Resolves to the number of entries removed from Redis, or null when Redis could
   * not be reached (then neither Redis nor the other replicas were purged).
   */
  async purge(message: PurgeMessage): Promise<number | null> {
    // Down: skip at once (a logout or a PURGE must not wait for a hung Redis); the caller reports it.
    if (!this.connection.up) return null;
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
        // Writes racing with it are refused as after a gap.
        if (removed !== null && !(await this.invalidations.expire(0))) removed = null;
        break;
      case 'tags':
        removed = await this.invalidations.invalidate(message.tags);
        break;
      case 'user':
        removed = await this.invalidations.evictUser(message.user);
        break;
      case 'expire':
        removed = (await this.invalidations.expire(message.before)) ? 0 : null;
        break;
    }
    if (removed === null) return null;
    const published = await this.connection.call('publish', () =>
      this.cmd.publish(this.keys.channel, JSON.stringify({ ...message, from: this.id })),
    );
    return published.ok ? removed : null;
  }

  /** One script call; URL and session purges (on a client's path) get the tight bound. */
  private async purgeIndexes(indexKeys: string[], timeoutMs = this.purgeTimeoutMs): Promise<number | null> {
    const r = await this.connection.call(
      'purge',
      () => this.cmd.wikiedgePurge(indexKeys.length, ...indexKeys, this.keys.entryPrefix),
      { timeoutMs },
    );
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
    const ok = await this.scan(`${globEscape(this.opts.keyPrefix)}[eusmld]:*`, async (keys) => {
      if (keys.length === 0) return true;
      const r = await this.connection.call('purge', () => this.cmd.unlink(...keys), { timeoutMs: this.purgeTimeoutMs });
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
      const r = await this.connection.call('purge', () => this.cmd.scan(c, 'MATCH', match, 'COUNT', 1000), {
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
}
