/**
 * The change follower's state in Redis (invalidation/follower.ts), so that it survives the
 * follower and is shared by the replicas:
 *
 *   P rc-cursor   the cursor (JSON, invalidation/follower.ts Cursor), no expiry: losing it is a gap.
 *                 Version 2: {v: 2, ts, id, floorTs, floorId, seen: [[seconds, rcid], …],
 *                 polledAt, behind?, owedBy?}, at most SEEN_MAX pairs (~20 kB). The form before it
 *                 ({ts, id, seen: [rcid, …], polledAt}) is still read (follower.ts
 *                 cursorFromStored); anything else is a gap (cursor-lost). Stored as is here:
 *                 this layer does not know the cursor's shape
 *   P rc-lease    the replica that follows now: SET NX PX, renewed by its holder every poll;
 *                 when the holder dies the lease expires and another replica takes it
 *
 * Each replica keeps the last cursor it wrote (as the follower) or read (as a standby, the
 * follower's). Every row up to that cursor was applied, so when Redis comes back without one (a
 * restart, a failover that lost the write) it is written back (SET NX: the first replica to ask
 * wins, the others read it) instead of the follower starting over with a gap (cursor-lost) that
 * would take every replica's cache with it. An older cursor than the lost one only means rows
 * applied twice (invalidated again), never a row skipped.
 */
import { randomBytes } from 'node:crypto';
import type { RedisConnection } from './connection.js';
import type { RedisKeys } from './keys.js';

// KEYS[1] the lease; ARGV[1] our id, ARGV[2] PX. Taken when free, renewed when ours.
const LEASE_LUA = `
local holder = redis.call('GET', KEYS[1])
if holder == false then
  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
  return 1
end
if holder == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return 1
end
return 0`;

const RELEASE_LUA = `
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0`;

interface Scripts {
  wikiedgeLease(lease: string, id: string, ms: number): Promise<number>;
  wikiedgeLeaseRelease(lease: string, id: string): Promise<number>;
}

export class RedisFollowerState {
  private readonly cmd: RedisConnection['cmd'] & Scripts;
  private readonly id = randomBytes(9).toString('base64url');
  /** The last cursor written or read here, as stored (JSON). */
  private last: string | undefined;

  constructor(
    private readonly connection: RedisConnection,
    private readonly keys: RedisKeys,
  ) {
    this.cmd = connection.cmd as RedisConnection['cmd'] & Scripts;
    // numberOfKeys given, so that the key is the call's first argument: ioredis' cluster
    // auto-pipelining groups a call by its first argument's slot (lib/autoPipelining.ts
    // getFirstValueInFlattenedArray), and a leading key count put it in slot("1")'s pipeline.
    this.cmd.defineCommand('wikiedgeLease', { lua: LEASE_LUA, numberOfKeys: 1 });
    this.cmd.defineCommand('wikiedgeLeaseRelease', { lua: RELEASE_LUA, numberOfKeys: 1 });
  }

  /**
   * The stored cursor (parsed JSON), undefined when there is none, or throws when Redis fails. A
   * value that is no JSON (an operator's SET, a partial restore) is returned as the text it is:
   * not a cursor (follower-cursor.ts cursorFromStored), so the follower takes its `cursor-lost`
   * gap and writes a cursor over it; thrown, it stopped every replica's follower for good
   * (test/in-process/change-follower-cursor-that-is-no-json.test.ts).
   */
  async loadCursor(): Promise<unknown> {
    const r = await this.connection.call('get', () => this.cmd.get(this.keys.rcCursor), { evenIfDown: true });
    if (!r.ok) throw new Error('redis: the change follower cursor could not be read');
    if (r.value !== null) {
      this.last = r.value;
      return parsed(r.value);
    }
    const last = this.last;
    if (last === undefined) return undefined;
    // Redis lost it: this replica's own, unless another replica wrote one back first.
    const put = await this.connection.call('set', () => this.cmd.set(this.keys.rcCursor, last, 'NX'), { evenIfDown: true });
    if (!put.ok) throw new Error('redis: the change follower cursor could not be written back');
    if (put.value !== null) return parsed(last);
    const again = await this.connection.call('get', () => this.cmd.get(this.keys.rcCursor), { evenIfDown: true });
    if (!again.ok) throw new Error('redis: the change follower cursor could not be read');
    if (again.value !== null) this.last = again.value;
    return again.value === null ? undefined : parsed(again.value);
  }

  async saveCursor(cursor: unknown): Promise<void> {
    const text = JSON.stringify(cursor);
    const r = await this.connection.call('set', () => this.cmd.set(this.keys.rcCursor, text), { evenIfDown: true });
    if (!r.ok) throw new Error('redis: the change follower cursor could not be written');
    this.last = text;
  }

  /**
   * Whether this replica holds the lease now (taken or renewed for `ms`): true; held by another
   * replica: false; undefined when Redis did not say (down, or the call timed out).
   */
  async holdLease(ms: number): Promise<boolean | undefined> {
    const r = await this.connection.call('lock', () => this.cmd.wikiedgeLease(this.keys.rcLease, this.id, ms));
    return r.ok ? Number(r.value) === 1 : undefined;
  }

  async releaseLease(): Promise<void> {
    await this.connection.call('unlock', () => this.cmd.wikiedgeLeaseRelease(this.keys.rcLease, this.id));
  }
}

/** JSON's value, or the text itself when it is no JSON. */
function parsed(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}
