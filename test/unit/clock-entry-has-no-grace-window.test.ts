// An answer that carries the wiki's clock (curtimestamp=1, siteinfo's general.time) is capped at
// WIKIEDGE_TTL_CLOCK_SECONDS (policy.ts dependencyVerdict), and grace then served it up to the
// cap plus the grace window old (6.4 s, 10-11 s with the defaults). Its entry remembers that it
// carries the clock, in every tier and across replicas, and has no grace window: past its TTL it
// is only a stale-if-error fallback (freshness.ts).
import { describe, expect, it } from 'vitest';
import { freshnessAt, keepMs } from '../../src/policy/freshness.js';
import { lookupDecision } from '../../src/steps/flow.js';
import { CacheStore, type CacheEntry } from '../../src/cache/store.js';
import { decodeEntry, encodeEntry } from '../../src/cache/entry-codec.js';

const w = { graceMs: 10_000, staleIfErrorMs: 300_000 };

function entry(now: number, clock: boolean, coded = false): CacheEntry {
  return {
    status: 200,
    headers: { 'content-type': 'application/json' },
    body: Buffer.from('{"curtimestamp":"2026-01-01T00:00:00Z"}'),
    ...(coded && { coding: 'gzip' as const, identityBytes: 40 }),
    storedAt: now,
    ttlMs: 2_000,
    urlKey: '/w/api.php?action=query&curtimestamp=1&format=json',
    modules: ['query'],
    slot: undefined,
    deps: [],
    ...(clock && { clock: true as const }),
  };
}

describe('a clock entry past its TTL', () => {
  it('is never in grace: stale-if-error (a fallback only), then dead; kept as long as any shared entry', () => {
    const clock = entry(0, true);
    const other = entry(0, false);
    expect(freshnessAt(clock, 1_999, w)).toBe('fresh');
    expect(freshnessAt(clock, 2_000, w)).toBe('stale-if-error');
    expect(lookupDecision(freshnessAt(clock, 2_000, w))).toBe('keep-as-fallback');
    expect(freshnessAt(clock, 302_000, w)).toBe('dead');
    expect(keepMs(clock, w)).toBe(302_000);
    // Any other shared entry keeps its grace window.
    expect(freshnessAt(other, 2_000, w)).toBe('grace');
    expect(lookupDecision(freshnessAt(other, 2_000, w))).toBe('stale-and-refresh');
  });

  it('the local store keeps the flag (a br form added included), and decides the same', () => {
    let now = 1_000_000;
    const store = new CacheStore({ sharedMaxBytes: 1 << 20, sessionMaxBytes: 1 << 20, maxEntries: 100, ...w, now: () => now });
    store.set('shared', 'k-clock', entry(now, true, true));
    store.set('shared', 'k-other', entry(now, false, true));
    expect(store.get('shared', 'k-clock')!.clock).toBe(true);
    expect(store.get('shared', 'k-other')!.clock).toBeUndefined();
    expect(store.addBrotli('shared', 'k-clock', store.get('shared', 'k-clock')!, Buffer.from('br'))).toBe(true);
    expect(store.get('shared', 'k-clock')!.clock).toBe(true);
    now += 2_000;
    expect(store.freshness(store.get('shared', 'k-clock')!)).toBe('stale-if-error');
    expect(store.freshness(store.get('shared', 'k-other')!)).toBe('grace');
  });

  it('the Redis codec keeps the flag, coded or not; an entry without it decodes without it', () => {
    for (const coded of [false, true]) {
      const clock = entry(1_000, true, coded);
      expect(decodeEntry(encodeEntry('shared', clock)).entry).toEqual(clock);
      expect(decodeEntry(encodeEntry('shared', clock)).entry.clock).toBe(true);
      expect(decodeEntry(encodeEntry('shared', entry(1_000, false, coded))).entry.clock).toBeUndefined();
    }
  });
});
