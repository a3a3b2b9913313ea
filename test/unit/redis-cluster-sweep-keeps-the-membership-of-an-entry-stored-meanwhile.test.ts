// On a Redis Cluster a sweep (an invalidation, a URL or session purge) reads an index set's
// members, unlinks their entries, then takes the members out of the set: steps that are not one
// atomic script there (src/cache/redis/cluster-writes.ts). An entry's member is the same at every
// store of its key, so an answer fetched after the invalidation and stored while the sweep was
// between its read and its removal joined the set with a SADD that changed nothing, and the
// sweep's SREM then took its membership out: the entry stayed in Redis where no later purge or
// invalidation of that tag or URL found it, served to every replica as `hit-shared` until its
// TTL. The sweep now takes out only the members no store joined since its read.
//
// The cluster's scripts declare every key they touch and run on one Redis alike: a real server
// stands in for the masters, and the sweep's removal is held until the store has run.
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ClusterWrites, type ClusterStore } from '../../src/cache/redis/cluster-writes.js';
import { type RedisKeys, redisKeys } from '../../src/cache/redis/keys.js';
import { redisInstalled } from '../support/redis-backends.js';
import { startRedis, type TestRedis } from '../support/redis.js';

/** A store of the anonymous answer of `urlKey`, indexed under its URL only, unguarded. */
function storeOf(keys: RedisKeys, urlKey: string, payload: string): ClusterStore {
  const key = `${urlKey}\nanon\n-`;
  return {
    entryKey: keys.entry(key),
    payload: Buffer.from(payload),
    px: 600_000,
    member: keys.member(key),
    urlKey,
    indexes: [keys.url(urlKey)],
    guards: [],
    mark: undefined,
  };
}

describe.runIf(redisInstalled)('a cluster sweep beside a store of the same entry', () => {
  let redis: TestRedis;
  let client: Redis;
  beforeAll(async () => {
    redis = await startRedis();
    client = new Redis(redis.port, '127.0.0.1');
  }, 30_000);
  afterAll(async () => {
    client?.disconnect();
    await redis?.stop();
  });

  /** A client whose removal of members (the sweep's last step) waits for `release`. */
  function heldAtRemoval(held = new Set(['srem', 'wikiedgeUnjoin'])) {
    let reached!: () => void;
    const atRemoval = new Promise<void>((r) => (reached = r));
    let release!: () => void;
    const released = new Promise<void>((r) => (release = r));
    const cmd = new Proxy(client, {
      get(target, name, receiver) {
        const value = Reflect.get(target, name, receiver) as unknown;
        if (typeof name !== 'string' || !held.has(name) || typeof value !== 'function') return value;
        return async (...args: unknown[]) => {
          reached();
          await released;
          return (value as (...a: unknown[]) => Promise<unknown>).apply(target, args);
        };
      },
    });
    return { cmd, atRemoval, release };
  }

  it('an entry stored again while a URL sweep runs keeps its membership, and the next purge finds it', async () => {
    const keys = redisKeys(`sweep:${randomUUID()}:`, true);
    const urlKey = '/w/api.php?action=query&titles=Sweep';
    const key = `${urlKey}\nanon\n-`;
    const set = keys.url(urlKey);
    const store = (payload: string) => storeOf(keys, urlKey, payload);
    const plain = new ClusterWrites(client, keys, 600_000);
    expect(await plain.store(store('before the purge'))).toBe(true);

    const { cmd, atRemoval, release } = heldAtRemoval();
    const sweeping = new ClusterWrites(cmd, keys, 600_000).sweep([set], []);
    await atRemoval;
    // The purged entry is gone; an answer fetched after the purge is stored meanwhile.
    expect(await client.exists(keys.entry(key))).toBe(0);
    expect(await plain.store(store('after the purge'))).toBe(true);
    release();
    expect(await sweeping).toBe(1);

    expect(await client.getBuffer(keys.entry(key))).toEqual(Buffer.from('after the purge'));
    expect(await client.sismember(set, keys.member(key))).toBe(1);
    // The next purge of the URL finds and removes it.
    expect(await plain.sweep([set], [])).toBe(1);
    expect(await client.exists(keys.entry(key))).toBe(0);
    expect(await client.scard(set)).toBe(0);
    expect(await client.zcard(keys.endsOf(set))).toBe(0);
  });

  it('a store whose SET reaches its master after the sweep`s UNLINK still ends indexed', async () => {
    // The SET and the joins go to different masters: sent together, a join could land before
    // the sweep read the set and the SET after it unlinked the entry.
    const keys = redisKeys(`sweep:${randomUUID()}:`, true);
    const urlKey = '/w/api.php?action=query&titles=Late';
    const key = `${urlKey}\nanon\n-`;
    const set = keys.url(urlKey);
    const store = (payload: string) => storeOf(keys, urlKey, payload);
    const plain = new ClusterWrites(client, keys, 600_000);
    expect(await plain.store(store('before the purge'))).toBe(true);

    const slowSet = heldAtRemoval(new Set(['set']));
    const storing = new ClusterWrites(slowSet.cmd, keys, 600_000).store(store('after the purge'));
    await slowSet.atRemoval;
    // Whatever of the store was sent with its SET has landed by now.
    await new Promise((r) => setTimeout(r, 50));
    const sweeper = heldAtRemoval();
    const sweeping = new ClusterWrites(sweeper.cmd, keys, 600_000).sweep([set], []);
    await sweeper.atRemoval;
    slowSet.release();
    expect(await storing).toBe(true);
    sweeper.release();
    await sweeping;

    // The entry written after the UNLINK is indexed: the next purge finds it.
    expect(await client.getBuffer(keys.entry(key))).toEqual(Buffer.from('after the purge'));
    expect(await client.sismember(set, keys.member(key))).toBe(1);
    expect(await plain.sweep([set], [])).toBe(1);
    expect(await client.exists(keys.entry(key))).toBe(0);
  });

  it('an entry whose joins never came (its process died between the steps) lives seconds, not its TTL', async () => {
    const keys = redisKeys(`sweep:${randomUUID()}:`, true);
    const urlKey = '/w/api.php?action=query&titles=Orphan';
    const key = `${urlKey}\nanon\n-`;
    const stuck = heldAtRemoval(new Set(['wikiedgeJoin']));
    void new ClusterWrites(stuck.cmd, keys, 600_000).store(storeOf(keys, urlKey, 'never indexed')).catch(() => undefined);
    await stuck.atRemoval;
    const pttl = await client.pttl(keys.entry(key));
    expect(pttl).toBeGreaterThan(0);
    expect(pttl).toBeLessThanOrEqual(10_000);
  });

  it('the whole lifetime is given to the value this store wrote only, not to another store`s of the key', async () => {
    const keys = redisKeys(`sweep:${randomUUID()}:`, true);
    const urlKey = '/w/api.php?action=query&titles=Twice';
    const key = `${urlKey}\nanon\n-`;
    const joining = heldAtRemoval(new Set(['wikiedgeJoin']));
    const storing = new ClusterWrites(joining.cmd, keys, 600_000).store(storeOf(keys, urlKey, 'first replica`s answer'));
    await joining.atRemoval;
    // Another replica's store of the same key lands meanwhile, with its own lifetime.
    await client.set(keys.entry(key), 'second replica`s answer', 'PX', 5_000);
    joining.release();
    expect(await storing).toBe(true);
    await new Promise((r) => setTimeout(r, 50));
    expect(await client.pttl(keys.entry(key))).toBeLessThanOrEqual(5_000);
  });

  it('a member no store joined since the read leaves the set and its ends', async () => {
    const keys = redisKeys(`sweep:${randomUUID()}:`, true);
    const set = keys.depPart('p:Sweep', 0);
    const writes = new ClusterWrites(client, keys, 600_000);
    for (const n of [1, 2, 3]) {
      const key = `/w/api.php?action=query&titles=Sweep${n}\nanon\n-`;
      await writes.store({
        entryKey: keys.entry(key),
        payload: Buffer.from(String(n)),
        px: 600_000,
        member: keys.member(key),
        urlKey: `/w/api.php?action=query&titles=Sweep${n}`,
        indexes: [set],
        guards: [],
        mark: undefined,
      });
    }
    expect(await writes.sweep([set], [])).toBe(3);
    expect(await client.scard(set)).toBe(0);
    expect(await client.zcard(keys.endsOf(set))).toBe(0);
  });
});
