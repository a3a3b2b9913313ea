// A store on a Redis Cluster writes its entry and joins its index sets, on other masters, in one
// round trip (src/cache/redis/cluster-writes.ts). When a join fails, the entry may be written
// where no set names it: the store unlinks it and fails; when even that UNLINK fails, it says so
// (`onUnindexed`, which records a gap: src/cache/redis/cluster-watch.ts). A client stands in for
// the cluster here, its keys a map, each command failing when told to.
import { describe, expect, it } from 'vitest';
import type { Redis } from 'ioredis';
import { ClusterWrites, type ClusterStore } from '../../src/cache/redis/cluster-writes.js';
import { redisKeys } from '../../src/cache/redis/keys.js';

const keys = redisKeys('wikiedge:', true);

/** A cluster client whose `failing` commands reject, as a dying master's do. */
function client(failing: Set<string>, seq: number | null = null) {
  const stored = new Map<string, Buffer>();
  const answer = <T>(name: string, value: () => T) =>
    failing.has(name) ? Promise.reject(new Error(`${name}: Connection is closed.`)) : Promise.resolve(value());
  const fake = {
    defineCommand: () => undefined,
    set: (key: string, value: Buffer) => answer('set', () => (stored.set(key, value), 'OK')),
    wikiedgeJoin: () => answer('join', () => 1),
    wikiedgeRegister: () => answer('register', () => 0),
    unlink: (key: string) => answer('unlink', () => Number(stored.delete(key))),
    wikiedgeExtend: () => answer('pexpire', () => 1),
    get: (key: string) => answer('get', () => (key === keys.invalidationSeq && seq !== null ? String(seq) : null)),
  };
  return { cmd: fake as unknown as Redis, stored };
}

const store = (mark?: number): ClusterStore => ({
  entryKey: keys.entry('/w/api.php?action=query\nanon\n-'),
  payload: Buffer.from('entry'),
  px: 60_000,
  member: keys.member('/w/api.php?action=query\nanon\n-'),
  urlKey: '/w/api.php?action=query',
  indexes: [keys.url('/w/api.php?action=query')],
  guards: [],
  mark,
});

describe('a cluster store cut short', () => {
  it('a join refused: the store fails and its entry is unlinked, no gap needed', async () => {
    const { cmd, stored } = client(new Set(['join']));
    let gaps = 0;
    const writes = new ClusterWrites(cmd, keys, 600_000, () => gaps++);
    await expect(writes.store(store(0))).rejects.toThrow('join');
    expect(stored.size).toBe(0);
    expect(gaps).toBe(0);
  });

  it('the URL register refused: the same', async () => {
    const { cmd, stored } = client(new Set(['register']));
    const writes = new ClusterWrites(cmd, keys, 600_000);
    await expect(writes.store(store(undefined))).rejects.toThrow('register');
    expect(stored.size).toBe(0);
  });

  it('a join refused and the UNLINK too: the store fails and a gap is asked for', async () => {
    const { cmd } = client(new Set(['join', 'unlink']));
    let gaps = 0;
    const writes = new ClusterWrites(cmd, keys, 600_000, () => gaps++);
    await expect(writes.store(store(0))).rejects.toThrow('join');
    expect(gaps).toBe(1);
  });

  it('every step answered: the entry stays, no gap', async () => {
    const { cmd, stored } = client(new Set());
    let gaps = 0;
    const writes = new ClusterWrites(cmd, keys, 600_000, () => gaps++);
    expect(await writes.store(store(0))).toBe(true);
    expect(stored.size).toBe(1);
    expect(gaps).toBe(0);
  });

  it('invalidated since the fetch began, and the UNLINK refused: not kept, and a gap is asked for', async () => {
    // vseq 7 and a guard at 7 above the mark 5: an invalidation of one of its tags came after the fetch began.
    const { cmd, stored } = client(new Set(['unlink']), 7);
    (cmd as unknown as { get: (key: string) => Promise<string | null> }).get = (key) =>
      Promise.resolve(key === keys.invalidationSeq || key === 'guard' ? '7' : null);
    let gaps = 0;
    const writes = new ClusterWrites(cmd, keys, 600_000, () => gaps++);
    expect(await writes.store({ ...store(5), guards: ['guard'] })).toBe(false);
    expect(stored.size).toBe(1);
    expect(gaps).toBe(1);
  });

  it('the invalidation sequence below the mark (its master restarted empty): not kept', async () => {
    // Invalidations numbered from 0 again after the restart: their guards (2) are below the mark (1000).
    const { cmd, stored } = client(new Set(), 2);
    const writes = new ClusterWrites(cmd, keys, 600_000);
    expect(await writes.store({ ...store(1000), guards: ['guard'] })).toBe(false);
    expect(stored.size).toBe(0);
  });
});
