/**
 * How many copies the other replicas removed for an admin purge. The purge channel (purges.ts)
 * says nothing back, so:
 *
 *   P replicas      every replica's random id, scored by when its heartbeat ends (Redis' own
 *                   clock: TIME in the script, so hosts' clocks need not agree); renewed every
 *                   HEARTBEAT_MS, gone HEARTBEAT_TTL_MS after a replica stopped renewing it, at
 *                   once when it closes
 *   P a:<purge id>  a hash: replica id -> entries it removed, written by each replica that
 *                   applied the purge, gone ACK_TTL_MS after its last answer
 *
 * One key per command, so it works alike on one Redis, behind Sentinels and on a Redis Cluster
 * (the ack key carries its own hash tag, the replicas' set the global `{g}` one: keys.ts).
 *
 * Bounds: only a message carrying an ack id is answered (an admin purge, and a session's purge
 * its client's answer waits for: purges.ts purgeCounted), each replica answers with one hash
 * field of two short values; the purger reads at most MAX_REPLICAS ids and waits at most
 * ACK_WAIT_MS (CLIENT_ACK_WAIT_MS on a client's path). A PURGE carries no ack id: it neither
 * waits nor makes anyone write.
 */
import type { RedisConnection } from './connection.js';
import type { RedisKeys } from './keys.js';
import type { ReplicaCount } from '../purge.js';

/** How often a replica says it is alive. */
export const HEARTBEAT_MS = 2_000;
/** How long a replica that stopped saying so is still expected to answer (a crash: named as missing meanwhile). */
export const HEARTBEAT_TTL_MS = 10_000;
/** How long the admin purge waits for every replica expected to answer. */
export const ACK_WAIT_MS = 500;
/**
 * How long a purge a client's answer waits for (a session holder's write, a logout) waits for the
 * other replicas to have applied it: without the wait, the client's next request, sent to another
 * replica, could arrive there before the purge did and be answered from what the write changed
 * (test/integration/a-session-write-refreshes-the-users-other-sessions.test.ts, its replicas
 * cases). A replica that does not answer in time (gone, stalled) costs the write this much once
 * per write until its heartbeat lapses (HEARTBEAT_TTL_MS). A replica that is alive but slow (a
 * loaded 2-core host: 250 ms was passed there, and the write's user read its old copy) still
 * answers within it: applying a purge is a few Redis calls and a local eviction.
 */
export const CLIENT_ACK_WAIT_MS = 1_000;
/** How long the acknowledgements of a purge are kept (they are read within ACK_WAIT_MS). */
const ACK_TTL_MS = 10_000;
/** At most this many replicas are read, and named as missing. */
export const MAX_REPLICAS = 256;
/** Between two reads of the acknowledgements: from the first, doubled up to the last (replicas on one network answer within milliseconds). */
const FIRST_POLL_MS = 2;
const POLL_MS = 20;

/** An ack id or a replica id, as this module makes them (randomBytes hex): anything else on the channel is ignored. */
export const ACK_ID = /^[0-9a-f]{12,32}$/;

// KEYS[1] P replicas; ARGV[1] the replica id ('' to only read), ARGV[2] its heartbeat's TTL (ms),
// ARGV[3] at most this many ids returned. Ends the heartbeats past their time, renews this one,
// returns the ids alive.
const HEARTBEAT_LUA = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
if ARGV[1] ~= '' then redis.call('ZADD', KEYS[1], now + tonumber(ARGV[2]), ARGV[1]) end
return redis.call('ZRANGEBYSCORE', KEYS[1], now, '+inf', 'LIMIT', 0, tonumber(ARGV[3]))`;

// KEYS[1] P a:<purge id>; ARGV[1] the replica id, ARGV[2] entries it removed, ARGV[3] the key's TTL (ms).
const ACK_LUA = `
redis.call('HINCRBY', KEYS[1], ARGV[1], ARGV[2])
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return 1`;

interface AckScripts {
  wikiedgeHeartbeat(key: string, replica: string, ttlMs: string, max: string): Promise<string[]>;
  wikiedgeAck(key: string, replica: string, removed: string, ttlMs: string): Promise<number>;
}

/**
 * The admin purge's answer from what the replicas wrote: `expected` are the ids alive when it was
 * published (this one's left out), `acks` what each answered. A replica that answered without
 * being expected (it started meanwhile) counts too.
 */
export function replicaCount(self: string, expected: readonly string[], acks: Readonly<Record<string, string>>): ReplicaCount {
  const others = expected.filter((id) => id !== self);
  const answeredIds = Object.keys(acks).filter((id) => id !== self);
  const purged = answeredIds.reduce((sum, id) => sum + (Number(acks[id]) || 0), 0);
  const missing = others.filter((id) => acks[id] === undefined).slice(0, MAX_REPLICAS);
  return { answered: answeredIds.length, expected: others.length, purged, missing };
}

export class ReplicaAcks {
  private readonly cmd: RedisConnection['cmd'] & AckScripts;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly connection: RedisConnection,
    private readonly keys: RedisKeys,
    /** This replica's id (a random one per process, never a host's name). */
    readonly self: string,
  ) {
    this.cmd = connection.cmd as RedisConnection['cmd'] & AckScripts;
    this.cmd.defineCommand('wikiedgeHeartbeat', { lua: HEARTBEAT_LUA, numberOfKeys: 1 });
    this.cmd.defineCommand('wikiedgeAck', { lua: ACK_LUA, numberOfKeys: 1 });
    this.timer = setInterval(() => void this.alive(this.self), HEARTBEAT_MS);
    this.timer.unref();
    // Said as soon as the tier answers, not HEARTBEAT_MS later: a purge waiting for the replicas
    // meanwhile would not have waited for this one (the call at construction fails while the
    // connection is not yet up).
    connection.onUp(() => void this.alive(this.self));
    void this.alive(this.self);
  }

  /** The ids alive now (this one's included when it renewed), or undefined when Redis could not say. */
  async alive(renew = ''): Promise<string[] | undefined> {
    const r = await this.connection.call('set', () => this.cmd.wikiedgeHeartbeat(this.keys.replicas, renew, String(HEARTBEAT_TTL_MS), String(MAX_REPLICAS)));
    return r.ok ? r.value : undefined;
  }

  /** This replica applied the purge `purgeId` and removed `removed` entries. */
  async answer(purgeId: string, removed: number): Promise<void> {
    await this.connection.call('purge', () => this.cmd.wikiedgeAck(this.keys.purgeAcks(purgeId), this.self, String(removed), String(ACK_TTL_MS)));
  }

  /**
   * Wait until every replica of `expected` answered the purge `purgeId`, at most `boundMs`; then
   * the count. `now`: the clock the bound is read on.
   */
  async collect(purgeId: string, expected: readonly string[], now: () => number, boundMs = ACK_WAIT_MS): Promise<ReplicaCount> {
    const deadline = now() + boundMs;
    const others = expected.filter((id) => id !== this.self);
    let acks: Record<string, string> = {};
    // No other replica is alive: none to wait for.
    if (others.length === 0) return replicaCount(this.self, expected, acks);
    let pollMs = FIRST_POLL_MS;
    for (;;) {
      const left = deadline - now();
      const r = await this.connection.call('purge', () => this.cmd.hgetall(this.keys.purgeAcks(purgeId)), { timeoutMs: Math.max(50, left) });
      if (r.ok) acks = r.value;
      if (others.every((id) => acks[id] !== undefined) || now() + pollMs > deadline) break;
      const wait = pollMs;
      await new Promise<void>((resolve) => setTimeout(resolve, wait).unref());
      pollMs = Math.min(POLL_MS, pollMs * 2);
    }
    return replicaCount(this.self, expected, acks);
  }

  /** Stop saying this replica is alive, and say it is gone (best effort: else its heartbeat ends by itself). */
  async close(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    await this.connection.call('set', () => this.cmd.zrem(this.keys.replicas, this.self));
  }
}
