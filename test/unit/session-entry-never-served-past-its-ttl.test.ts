// A session's entry is fresh or dead: its TTL is what bounds a logout or password change made
// where the gateway could not see it (straight at the wiki). Grace served the old cookie one more
// of the session's private answers after it (fixed in commit 40fd181), and
// stale-if-error up to 300 s more whenever the gateway refused the request a turn (attack-stale-session-by-own-refusal.test.ts).
// A shared entry keeps both windows.
import { describe, expect, it } from 'vitest';
import { freshnessAt, keepMs } from '../../src/policy/freshness.js';
import { CacheStore, type CacheEntry } from '../../src/cache/store.js';

const w = { graceMs: 10_000, staleIfErrorMs: 300_000 };

describe('a session entry past its TTL', () => {
  it('is dead, and kept no longer than its TTL; a shared one is in grace, then stale-if-error', () => {
    const session = { storedAt: 0, ttlMs: 10_000, slot: 'slot-1' };
    const shared = { storedAt: 0, ttlMs: 10_000, slot: undefined };
    expect(freshnessAt(session, 9_999, w)).toBe('fresh');
    expect(freshnessAt(session, 10_000, w)).toBe('dead');
    expect(freshnessAt(shared, 10_000, w)).toBe('grace');
    expect(freshnessAt(shared, 20_000, w)).toBe('stale-if-error');
    expect(keepMs(session, w)).toBe(10_000);
    expect(keepMs(shared, w)).toBe(310_000);
    // Stored before a gap in the change signals: not vouched for, and for a session not a fallback either.
    expect(freshnessAt(session, 1_000, w, 500)).toBe('dead');
  });

  it('the same in the store', () => {
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
    expect(store.freshness(store.get('session', 'k-session')!)).toBe('dead');
    expect(store.freshness(store.get('shared', 'k-shared')!)).toBe('grace');
  });
});
