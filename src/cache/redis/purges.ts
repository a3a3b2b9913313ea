/**
 * The purge side of the Redis tier: removing entries through their index sets (one script call),
 * by URL prefix or all at once (SCAN, never KEYS), and the pub/sub channel that carries every
 * purge to every replica's local tier (this one's included).
 *
 *   P u:<url key> / P s:<sha256(slot)> / P m:<sha256(module)>   the index sets entries.ts fills
 *   P purge     the channel: {"kind":"url","urlKey":…} and friends; never a cookie (slots are
 *               HMACs), never an entry
 *
 * An admin purge's message also carries an ack id: every other replica that applies it says how
 * many entries it removed (replica-acks.ts), and purgeCounted waits for them, bounded.
 *
 * Bounds: URL and session purges (on a client's path) by `timeoutMs`; module, prefix and all
 * purges (admin requests) by max(1 s, 20 × timeoutMs) per call. Down: skipped at once, the
 * caller reports `redisPurged: null`.
 */
import { randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import type { RedisMetrics } from '../../observe/metrics.js';
import type { RedisConnection } from './connection.js';
import { type RedisKeys, globEscape } from './keys.js';
import { GUARD_MS, PURGE_BATCH, type RedisInvalidations } from './invalidations.js';
import { moduleGuard, slotGuard, urlGuard } from '../guards.js';
import { userTag } from '../../policy/dependencies.js';
import { ClusterWrites } from './cluster-writes.js';
import type { PurgeMessage } from '../../words/purge-message.js';
import { matchesUrlPattern, redisGlobOf, urlPatternProblem, urlPrefixMatcher } from '../url-match.js';
import type { CountedAcks } from '../storage.js';
import { ACK_ID, ACK_WAIT_MS, CLIENT_ACK_WAIT_MS, ReplicaAcks } from './replica-acks.js';

export type { PurgeMessage } from '../../words/purge-message.js';
export { PURGE_BATCH };

/** A user's slots per message: 1,000 slots of 22 characters stay well under MAX_MESSAGE_CHARS. */
export const SLOTS_PER_MESSAGE = 1_000;
/** The longest channel message a replica reads; a longer one is dropped (and counted: onMessage). */
export const MAX_MESSAGE_CHARS = 65_536;
/** The characters of tags one message carries: with its envelope, under MAX_MESSAGE_CHARS. */
const TAG_CHARS_PER_MESSAGE = 60_000;

/** Parse a channel message; anything malformed is ignored. */
export function parsePurgeMessage(text: string): PurgeMessage | undefined {
  if (text.length > MAX_MESSAGE_CHARS) return undefined;
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
      if (!s('slot')) return undefined;
      return o['wrote'] === true ? { kind: 'slot', slot: s('slot')!, wrote: true } : { kind: 'slot', slot: s('slot')! };
    case 'module':
      return s('module') ? { kind: 'module', module: s('module')! } : undefined;
    case 'prefix':
      return s('prefix') !== undefined ? { kind: 'prefix', prefix: s('prefix')! } : undefined;
    case 'pattern':
      return s('pattern') !== undefined && urlPatternProblem(s('pattern')!) === undefined ? { kind: 'pattern', pattern: s('pattern')! } : undefined;
    case 'all':
      return { kind: 'all' };
    case 'tags': {
      const tags = o['tags'];
      return Array.isArray(tags) && tags.every((t) => typeof t === 'string') ? { kind: 'tags', tags: tags as string[] } : undefined;
    }
    case 'user': {
      if (!s('user')) return undefined;
      const slots = o['slots'];
      if (slots === undefined) return { kind: 'user', user: s('user')! };
      return Array.isArray(slots) && slots.length <= SLOTS_PER_MESSAGE && slots.every((t) => typeof t === 'string')
        ? { kind: 'user', user: s('user')!, slots: slots as string[] }
        : undefined;
    }
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
  /** Apply a purge (ours or another replica's) to the local tier; how many entries it removed (storage.ts SharedTierHooks.onPurge). */
  readonly onPurge: (message: PurgeMessage) => number | void | Promise<number>;
  /** The clock the wait for other replicas' answers is bounded on. */
  readonly now?: () => number;
}

export class RedisPurges {
  private readonly cmd: RedisConnection['cmd'];
  /** Names this replica's messages on the channel. */
  private readonly id = randomBytes(6).toString('hex');
  private readonly purgeTimeoutMs: number;
  /** On a Redis Cluster: sweeps in steps (cluster-writes.ts) instead of SWEEP_LUA (invalidations.ts), SPUBLISH. */
  private readonly clustered: ClusterWrites | undefined;
  /** The other replicas' answers to admin purges, and this one's heartbeat. */
  private readonly acks: ReplicaAcks;
  /**
   * Per admin purge in flight: what its message removed here when it came back on the channel
   * before this replica purged its own tier (purge.ts purgeEverywhere), counted as this
   * replica's own copies.
   */
  private readonly heardOwn = new Map<string, number>();
  /** When an unreadable message was last warned of (onMessage). */
  private unreadableWarnedAt = -Infinity;

  constructor(
    private readonly connection: RedisConnection,
    private readonly keys: RedisKeys,
    private readonly opts: RedisPurgesOptions,
    private readonly invalidations: RedisInvalidations,
  ) {
    this.purgeTimeoutMs = Math.max(1_000, opts.timeoutMs * 20);
    this.cmd = connection.cmd;
    this.clustered = keys.cluster ? new ClusterWrites(connection.cmd, keys, GUARD_MS) : undefined;
    this.acks = new ReplicaAcks(connection, keys, this.id);
    connection.subscribe(keys.channel, (text) => this.onMessage(text));
  }

  /**
   * An admin purge: purge(), its message carrying an ack id; `acks` settles once every replica
   * alive answered, or ACK_WAIT_MS passed (replica-acks.ts). The replicas alive are read before
   * the message is published, so that none answers before it is expected.
   */
  async purgeCounted(message: PurgeMessage, onClientPath = false): Promise<{ removed: number | null; acks?: Promise<CountedAcks> }> {
    if (!this.connection.up) return { removed: null };
    const expected = await this.acks.alive();
    const ackId = randomBytes(8).toString('hex');
    if (expected) this.heardOwn.set(ackId, 0);
    const removed = await this.purge(message, onClientPath, expected && ackId);
    if (removed === null || !expected) {
      this.heardOwn.delete(ackId);
      return { removed };
    }
    const bound = onClientPath ? CLIENT_ACK_WAIT_MS : ACK_WAIT_MS;
    const collected = this.acks.collect(ackId, expected, this.opts.now ?? Date.now, bound).then((replicas) => {
      const heardHere = this.heardOwn.get(ackId) ?? 0;
      this.heardOwn.delete(ackId);
      return { replicas, heardHere };
    });
    return { removed, acks: collected };
  }

  /** Stop this replica's heartbeat and say it is gone. */
  close(): Promise<void> {
    return this.acks.close();
  }

  /**
   * Remove entries from Redis and tell every replica (this one included) to remove them from its
   * local tier. Resolves to the number of entries removed from Redis, or null when Redis could
   * not be reached (then neither Redis nor the other replicas were purged).
   */
  async purge(message: PurgeMessage, onClientPath = false, ackId?: string): Promise<number | null> {
    // Down: skip at once (a logout or a PURGE must not wait for a hung Redis); the caller reports it.
    if (!this.connection.up) return null;
    let removed: number | null;
    let published: readonly PurgeMessage[] = [message];
    switch (message.kind) {
      case 'url':
        removed = await this.purgeIndexes([this.keys.url(message.urlKey)], [urlGuard(message.urlKey)], this.opts.timeoutMs);
        break;
      case 'slot':
        removed = await this.purgeIndexes([this.keys.slot(message.slot)], [slotGuard(message.slot)], this.opts.timeoutMs);
        break;
      case 'module':
        removed = await this.purgeIndexes(this.clustered?.moduleParts(message.module) ?? [this.keys.module(message.module)], [moduleGuard(message.module)]);
        break;
      // No guard tag names a prefix or everything: writes racing with them are refused as after
      // a gap, recorded before the scan (a fetch storing while the scan runs, behind its
      // cursor, would otherwise outlive the purge).
      case 'prefix':
        removed = (await this.invalidations.expire(0)) ? await this.purgePrefix(message.prefix) : null;
        break;
      case 'pattern':
        removed = (await this.invalidations.expire(0)) ? await this.purgePattern(message.pattern) : null;
        break;
      case 'all':
        removed = (await this.invalidations.expire(0)) ? await this.purgeAll() : null;
        break;
      case 'tags':
        removed = await this.invalidations.invalidate(message.tags);
        // A follower's batch of 2,000 rows names up to ~190,000 characters of tags: sent as one
        // message, every other replica dropped it (MAX_MESSAGE_CHARS) and kept what it changed.
        published = tagMessages(message.tags);
        break;
      case 'user': {
        const evicted = await this.evictUser(message, onClientPath ? this.opts.timeoutMs : undefined);
        removed = evicted?.removed ?? null;
        // Every replica's local tier indexes sessions by slot and knows only the users it saw
        // sign in: the message names every slot known to belong to the user.
        if (evicted) published = userMessages(message.user, evicted.slots);
        break;
      }
      case 'expire':
        removed = (await this.invalidations.expire(message.before)) ? 0 : null;
        break;
    }
    if (removed === null) return null;
    for (const m of published) {
      const text = JSON.stringify({ ...m, from: this.id, ...(ackId && { ack: ackId }) });
      const sent = await this.connection.call('publish', () =>
        this.clustered ? this.cmd.spublish(this.keys.channel, text) : this.cmd.publish(this.keys.channel, text),
      );
      if (!sent.ok) return null;
    }
    return removed;
  }

  /**
   * A user's sessions, from Redis' list of them (invalidations.ts noteSession) and the message:
   * their entries and index sets removed, their slots' purges recorded (guards.ts).
   */
  private async evictUser(message: Extract<PurgeMessage, { kind: 'user' }>, timeoutMs?: number): Promise<{ removed: number; slots: string[] } | null> {
    const listed = await this.invalidations.userSessions(message.user, timeoutMs);
    if (listed === null) return null;
    const slots = [...new Set([...(message.slots ?? []), ...listed.slots])];
    // Every answer stored while whose session it was was known, whether or not the list still
    // names its session (dependencies.ts userTag): in the first call, which a write's answer waits for anyway.
    const tag = userTag(message.user);
    const batches: { sets: string[]; guards: string[] }[] = [{ sets: this.clustered ? this.clustered.depParts(tag) : [this.keys.dep(tag)], guards: [tag] }];
    for (let i = 0; i < slots.length; i += 100) {
      const chunk = slots.slice(i, i + 100);
      // The first hundred share the tag's call.
      if (i > 0) batches.push({ sets: [], guards: [] });
      const batch = batches.at(-1)!;
      batch.sets.push(...chunk.map((slot) => this.keys.slot(slot)));
      batch.guards.push(...chunk.map(slotGuard));
    }
    // Lists written before slots were kept as they are name the index sets only.
    if (listed.indexKeys.length > 0) batches.push({ sets: listed.indexKeys, guards: [] });
    let removed = 0;
    for (const batch of batches) {
      const n = await this.purgeIndexes(batch.sets, batch.guards, timeoutMs);
      if (n === null) return null;
      removed += n;
    }
    return { removed, slots };
  }

  /**
   * One script call: the index sets' entries removed and the guard tags' purge recorded. URL and
   * session purges (on a client's path) get the tight bound.
   */
  private async purgeIndexes(indexKeys: string[], guardTags: readonly string[] = [], timeoutMs = this.purgeTimeoutMs): Promise<number | null> {
    const guards = guardTags.map((tag) => this.keys.invalidatedAt(tag));
    const writes = this.clustered;
    if (writes) {
      const r = await this.connection.call('purge', () => writes.sweep(indexKeys, guards), { timeoutMs });
      return r.ok ? r.value : null;
    }
    return this.invalidations.sweep(guards, indexKeys, timeoutMs);
  }

  /**
   * A prefix names keys whose query holds its parameters in any order (url-match.ts
   * urlPrefixMatcher): the keys of its path are listed and the matcher picks among them.
   */
  private purgePrefix(prefix: string): Promise<number | null> {
    const q = prefix.indexOf('?');
    return this.purgeMatching(q === -1 ? prefix : prefix.slice(0, q + 1), urlPrefixMatcher(prefix));
  }

  /** An admin's pattern (url-match.ts): the keys that begin with its text before the first star, matched whole. */
  private purgePattern(pattern: string): Promise<number | null> {
    return this.purgeMatching(pattern.split('*')[0]!, (key) => matchesUrlPattern(pattern, key), redisGlobOf(pattern));
  }

  /**
   * The URL keys that begin with `literal` and that `keep` names, then what they index, 100 at a
   * time. One Redis: SCAN over the URL index names (never KEYS), with `glob` as its MATCH when
   * given. A cluster: the URL register's range of `literal` instead (no SCAN of every node).
   */
  private async purgeMatching(literal: string, keep: (urlKey: string) => boolean, glob = `${globEscape(literal)}*`): Promise<number | null> {
    const writes = this.clustered;
    if (writes) {
      const urls = await this.connection.call('purge', () => writes.urlsWithPrefix(literal, keep), { timeoutMs: this.purgeTimeoutMs });
      if (!urls.ok) return null;
      let n = 0;
      for (let i = 0; i < urls.value.length; i += 100) {
        const removed = await this.purgeIndexes(urls.value.slice(i, i + 100).map((u) => this.keys.url(u)));
        if (removed === null) return null;
        n += removed;
      }
      return n;
    }
    let n = 0;
    const indexPrefix = `${this.opts.keyPrefix}u:`;
    const ok = await this.scan(`${globEscape(this.opts.keyPrefix)}u:${glob}`, async (found) => {
      const keys = found.filter((k) => keep(k.slice(indexPrefix.length)));
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
    const writes = this.clustered;
    const cluster = this.connection.cluster;
    if (writes && cluster) {
      const match = `${globEscape(this.opts.keyPrefix)}[eusmldrx]:*`;
      const r = await this.connection.call('purge', () => writes.removeAll(cluster, match), { timeoutMs: this.purgeTimeoutMs });
      return r.ok ? r.value : null;
    }
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
    if (!message) {
      // Another replica's purge this one cannot read (a newer version's, or one too long) is a
      // purge missed: counted, and warned of once a minute, never silent.
      this.opts.metrics.purgeMessages.inc({ kind: 'unreadable' });
      const now = (this.opts.now ?? Date.now)();
      if (now - this.unreadableWarnedAt >= 60_000) {
        this.unreadableWarnedAt = now;
        this.opts.log.warn({ chars: text.length }, 'a redis purge message could not be read and was not applied');
      }
      return;
    }
    this.opts.metrics.purgeMessages.inc({ kind: message.kind });
    let applied: number | void | Promise<number>;
    try {
      applied = this.opts.onPurge(message);
    } catch (err) {
      this.opts.log.error({ err: String(err) }, 'applying a redis purge message failed');
      return;
    }
    // A purge that waits for the replicas (an admin's, a session's on its client's path) waits
    // for this one's count (replica-acks.ts), answered once it is applied; its own copies the
    // purger counts itself.
    const { ack, from } = ackOf(text);
    if (ack === undefined) return;
    const answer = (removed: number) => {
      if (from !== this.id) void this.acks.answer(ack, removed);
      else if (this.heardOwn.has(ack)) this.heardOwn.set(ack, this.heardOwn.get(ack)! + removed);
    };
    if (applied instanceof Promise) {
      applied.then(answer, (err: unknown) => this.opts.log.error({ err: String(err) }, 'applying a redis purge message failed'));
    } else answer(applied ?? 0);
  }
}

/** The ack id and sender of a channel message (already parsed once: well-formed), when both look as this module makes them. */
function ackOf(text: string): { ack?: string; from?: string } {
  const o = JSON.parse(text) as Record<string, unknown>;
  const ack = o['ack'];
  const from = o['from'];
  return typeof ack === 'string' && ACK_ID.test(ack) ? { ack, ...(typeof from === 'string' && { from }) } : {};
}

/** A purge by tags as channel messages, each under MAX_MESSAGE_CHARS (one message without any tag). */
export function tagMessages(tags: readonly string[]): PurgeMessage[] {
  const messages: PurgeMessage[] = [];
  let chunk: string[] = [];
  let chars = 0;
  for (const tag of tags) {
    const size = JSON.stringify(tag).length + 1;
    if (chunk.length > 0 && chars + size > TAG_CHARS_PER_MESSAGE) {
      messages.push({ kind: 'tags', tags: chunk });
      chunk = [];
      chars = 0;
    }
    chunk.push(tag);
    chars += size;
  }
  if (chunk.length > 0 || messages.length === 0) messages.push({ kind: 'tags', tags: chunk });
  return messages;
}

/** A user purge as channel messages: its slots SLOTS_PER_MESSAGE at a time (one message without any). */
export function userMessages(user: string, slots: readonly string[]): PurgeMessage[] {
  if (slots.length === 0) return [{ kind: 'user', user }];
  const messages: PurgeMessage[] = [];
  for (let i = 0; i < slots.length; i += SLOTS_PER_MESSAGE) messages.push({ kind: 'user', user, slots: slots.slice(i, i + SLOTS_PER_MESSAGE) });
  return messages;
}
