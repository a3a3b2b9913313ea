// Attack: keys made to collide in the store's hash (cache/entry-table.ts). The hash is seeded per
// process, but cheap hashes have seed-independent collisions: a bucket holds at most
// MAX_KEY_CHAIN keys, so lookups never walk a long chain, a colliding key beyond that is simply
// not stored, and a collision never returns another key's entry.
import { describe, expect, it } from 'vitest';
import { MAX_KEY_CHAIN } from '../../src/cache/entry-table.js';
import { type CacheEntry, CacheStore } from '../../src/cache/store.js';

const entry = (i: number): CacheEntry => ({
  status: 200,
  headers: { 'content-type': 'application/json' },
  body: Buffer.from(`{"i":${i}}`),
  storedAt: 1_000,
  ttlMs: 60_000,
  urlKey: `/w/api.php?i=${i}`,
  modules: ['query'],
  slot: undefined,
  deps: [],
});

describe('hash collisions', () => {
  it('every key of a full bucket finds its own entry; one more is refused, never served another', () => {
    // Every key in one bucket.
    const s = new CacheStore({
      sharedMaxBytes: 1 << 20,
      sessionMaxBytes: 1 << 20,
      maxEntries: 1_000,
      graceMs: 0,
      staleIfErrorMs: 0,
      now: () => 2_000,
      hashKey: () => 7,
    });
    for (let i = 0; i < MAX_KEY_CHAIN; i++) expect(s.set('shared', `/w/api.php?i=${i}\nanon`, entry(i))).toBe(true);
    expect(s.set('shared', `/w/api.php?i=99\nanon`, entry(99))).toBe(false);
    expect(s.get('shared', `/w/api.php?i=99\nanon`)).toBeUndefined();
    for (let i = 0; i < MAX_KEY_CHAIN; i++) expect(s.get('shared', `/w/api.php?i=${i}\nanon`)!.body.toString()).toBe(`{"i":${i}}`);
    // A key already in the bucket can be replaced; one leaving makes room.
    expect(s.set('shared', `/w/api.php?i=3\nanon`, entry(3))).toBe(true);
    s.delete('shared', `/w/api.php?i=0\nanon`);
    expect(s.set('shared', `/w/api.php?i=99\nanon`, entry(99))).toBe(true);
    expect(s.get('shared', `/w/api.php?i=99\nanon`)!.body.toString()).toBe('{"i":99}');
    expect(s.get('shared', `/w/api.php?i=0\nanon`)).toBeUndefined();
  });

  it('keys of equal hash and length are told apart by their bytes', () => {
    const s = new CacheStore({
      sharedMaxBytes: 1 << 20,
      sessionMaxBytes: 1 << 20,
      maxEntries: 1_000,
      graceMs: 0,
      staleIfErrorMs: 0,
      now: () => 2_000,
      hashKey: () => 1,
    });
    s.set('shared', 'key-a', entry(1));
    s.set('shared', 'key-b', entry(2));
    expect(s.get('shared', 'key-a')!.body.toString()).toBe('{"i":1}');
    expect(s.get('shared', 'key-b')!.body.toString()).toBe('{"i":2}');
    expect(s.get('shared', 'key-c')).toBeUndefined();
  });
});
