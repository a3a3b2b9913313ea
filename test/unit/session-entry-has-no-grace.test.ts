// A session's entry is not served past its TTL while it refreshes (grace): the per-session TTL is
// what bounds a logout or password change made where the gateway could not see it (straight at
// the wiki), and the grace window served the old cookie one more of the session's private
// answers after it. A shared entry keeps its grace; both keep stale-if-error (the wiki failing).
import { describe, expect, it } from 'vitest';
import { freshnessAt } from '../../src/cache/freshness.js';
import { CacheStore, type CacheEntry } from '../../src/cache/store.js';

const w = { graceMs: 10_000, staleIfErrorMs: 300_000 };

describe('a session entry past its TTL', () => {
  it('is never in grace, only a fallback when the wiki fails; a shared one is in grace', () => {
    const session = { storedAt: 0, ttlMs: 10_000, slot: 'slot-1' };
    const shared = { storedAt: 0, ttlMs: 10_000, slot: undefined };
    expect(freshnessAt(session, 9_999, w)).toBe('fresh');
    expect(freshnessAt(session, 10_000, w)).toBe('stale-if-error');
    expect(freshnessAt(shared, 10_000, w)).toBe('grace');
    expect(freshnessAt(session, 310_000, w)).toBe('dead');
  });

  it('the same in the store: a stored session entry past its TTL is not served while it refreshes', () => {
    let now = 1_000_000;
    const store = new CacheStore({ sharedMaxBytes: 1 << 20, sessionMaxBytes: 1 << 20, maxEntries: 100, ...w, now: () => now });
    const entry = (slot: string | undefined): CacheEntry => ({
      status: 200,
      headers: { 'content-type': 'application/json' },
      body: Buffer.from('{"query":{"userinfo":{"id":1,"name":"Admin"}}}'),
      storedAt: now,
      ttlMs: 10_000,
      urlKey: 'action=query&meta=userinfo',
      modules: ['query+userinfo'],
      slot,
      deps: [],
    });
    store.set('session', 'k-session', entry('slot-1'));
    store.set('shared', 'k-shared', entry(undefined));
    now += 10_000;
    expect(store.freshness(store.get('session', 'k-session')!)).toBe('stale-if-error');
    expect(store.freshness(store.get('shared', 'k-shared')!)).toBe('grace');
  });
});
