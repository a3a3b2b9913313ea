// A reload's hand-over of the local tier (cache/hand-over.ts, store.ts oldestFirst and adopt):
// the replaced worker's shared entries reach its replacement exactly, in LRU order, in bounded
// chunks; the replacement keeps what it fetched itself and refuses what a purge reached since
// it started. The whole reload, with real workers: test/in-process/reload-hands-over-the-local-tier.test.ts.
import { describe, expect, it } from 'vitest';
import { HandOverChunks, handedOverEntries } from '../../src/cache/hand-over.js';
import type { CacheEntry } from '../../src/cache/entry.js';
import { CacheStore } from '../../src/cache/store.js';

let clock = 1_000_000;
const newStore = (sharedMaxBytes = 1 << 22) =>
  new CacheStore({ sharedMaxBytes, sessionMaxBytes: 1 << 20, maxEntries: 10_000, graceMs: 0, staleIfErrorMs: 0, now: () => clock });
const entry = (i: number, extra: Partial<CacheEntry> = {}): CacheEntry => ({
  status: 200,
  headers: { 'content-type': 'application/json; charset=utf-8', 'cache-control': 's-maxage=600, public' },
  body: Buffer.from(JSON.stringify({ i, pad: 'x'.repeat(200) })),
  storedAt: clock,
  ttlMs: 600_000,
  urlKey: `/w/api.php?action=query&i=${i}`,
  modules: ['query', 'siteinfo'],
  slot: undefined,
  deps: ['*', `p:Page_${i}`],
  ...extra,
});
const keyOf = (i: number) => `/w/api.php?action=query&i=${i}\nanon\n=http\n-\n-`;

/** Every chunk a sender makes, all the way. */
function allChunks(from: CacheStore, maxBytes?: number): Buffer[] {
  const sender = new HandOverChunks(from.oldestFirst('shared'));
  const out: Buffer[] = [];
  for (let c = sender.next(maxBytes); c; c = sender.next(maxBytes)) out.push(c);
  return out;
}

describe("a reload's hand-over of the local tier", () => {
  it('carries every shared entry exactly (gzip and br forms, headers, deps, storedAt), oldest first', () => {
    const from = newStore();
    for (let i = 0; i < 5; i++) from.set('shared', keyOf(i), entry(i));
    from.set('shared', keyOf(5), entry(5, { coding: 'gzip', identityBytes: 999, br: Buffer.from('br-form') }));
    from.get('shared', keyOf(0)); // now the most recently used
    from.set('session', `${keyOf(9)}\nslot`, entry(9, { slot: 'slot-a' }));
    const records = allChunks(from).flatMap((c) => handedOverEntries(c));
    expect(records.map((r) => r.key)).toEqual([1, 2, 3, 4, 5, 0].map(keyOf));
    const gz = records.find((r) => r.key === keyOf(5))!.entry;
    expect([gz.coding, gz.identityBytes, gz.br?.toString()]).toEqual(['gzip', 999, 'br-form']);
    const plain = records.find((r) => r.key === keyOf(1))!.entry;
    expect(plain.body.toString()).toBe(entry(1).body.toString());
    expect([plain.storedAt, plain.ttlMs, plain.deps, plain.modules, plain.headers]).toEqual([
      clock,
      600_000,
      ['*', 'p:Page_1'],
      ['query', 'siteinfo'],
      entry(1).headers,
    ]);
    // Per-session entries stay behind.
    expect(records.some((r) => r.entry.slot !== undefined)).toBe(false);
  });

  it('reads the tier without touching its recency, and in chunks of about the size asked for', () => {
    const from = newStore();
    for (let i = 0; i < 50; i++) from.set('shared', keyOf(i), entry(i));
    const chunks = allChunks(from, 2_000);
    expect(chunks.length).toBeGreaterThan(5);
    for (const c of chunks.slice(0, -1)) expect(c.length).toBeLessThan(2_000 + 1_000);
    expect([...from.oldestFirst('shared')].map(([k]) => k)).toEqual(Array.from({ length: 50 }, (_, i) => keyOf(i)));
  });

  it('hands over only what the sender still vouches for: not an entry made not fresh by a gap (or a lost purge channel)', () => {
    const from = newStore();
    from.set('shared', keyOf(0), entry(0));
    clock += 10;
    from.expireBefore(clock);
    from.set('shared', keyOf(1), entry(1, { storedAt: clock }));
    expect(
      allChunks(from)
        .flatMap((c) => handedOverEntries(c))
        .map((r) => r.key),
    ).toEqual([keyOf(1)]);
  });

  it('skips an entry purged while the hand-over is under way', () => {
    const from = newStore();
    for (let i = 0; i < 3; i++) from.set('shared', keyOf(i), entry(i));
    const sender = new HandOverChunks(from.oldestFirst('shared'));
    const first = handedOverEntries(sender.next(1)!);
    from.purgeUrl(entry(1).urlKey);
    const rest = handedOverEntries(sender.next()!);
    expect([...first, ...rest].map((r) => r.key)).toEqual([keyOf(0), keyOf(2)]);
  });

  it('a chunk cut short keeps the records before the cut', () => {
    const from = newStore();
    for (let i = 0; i < 3; i++) from.set('shared', keyOf(i), entry(i));
    const chunk = allChunks(from)[0]!;
    expect(handedOverEntries(chunk.subarray(0, chunk.length - 10)).map((r) => r.key)).toEqual([keyOf(0), keyOf(1)]);
    expect(handedOverEntries(Buffer.from('garbage that is not a record'))).toEqual([]);
  });

  it('the replacement adopts in the same LRU order: a smaller budget keeps the most recently used', () => {
    const from = newStore();
    for (let i = 0; i < 40; i++) from.set('shared', keyOf(i), entry(i));
    const { bytes, tableBytes } = from.stats('shared');
    const size = (bytes - tableBytes) / 40;
    // Room for ten and their header set, the table's first buckets, and the one record an
    // eviction leaves free (charged until reused: tier.ts tableBytes); not for eleven.
    const to = newStore(Math.floor(size * 11.1) + newStore().stats('shared').tableBytes);
    for (const c of allChunks(from)) for (const r of handedOverEntries(c)) to.adopt('shared', r.key, r.entry);
    expect([...to.oldestFirst('shared')].map(([k]) => k)).toEqual(Array.from({ length: 10 }, (_, i) => keyOf(30 + i)));
    expect(to.freshness(to.get('shared', keyOf(39))!)).toBe('fresh');
  });

  it('the replacement keeps what it fetched itself, and refuses what a purge reached since it started', () => {
    const from = newStore();
    for (let i = 0; i < 4; i++) from.set('shared', keyOf(i), entry(i));
    const chunks = allChunks(from);
    const to = newStore();
    to.set('shared', keyOf(0), entry(0, { body: Buffer.from('{"newer":true}') }));
    to.purgeUrl(entry(1).urlKey);
    to.invalidate(['p:Page_2']);
    const taken = chunks.flatMap((c) => handedOverEntries(c)).filter((r) => to.adopt('shared', r.key, r.entry));
    expect(taken.map((r) => r.key)).toEqual([keyOf(3)]);
    expect(to.get('shared', keyOf(0))!.body.toString()).toBe('{"newer":true}');
  });

  it('after a purge of everything it takes nothing; after a gap it takes them, not fresh (refreshed at first use)', () => {
    const from = newStore();
    from.set('shared', keyOf(0), entry(0));
    const [chunk] = allChunks(from);
    const purged = newStore();
    purged.flushAll();
    expect(handedOverEntries(chunk!).filter((r) => purged.adopt('shared', r.key, r.entry))).toEqual([]);
    const gap = newStore();
    clock += 10;
    gap.expireBefore(clock);
    const [r] = handedOverEntries(chunk!);
    expect(gap.adopt('shared', r!.key, r!.entry)).toBe(true);
    expect(gap.freshness(gap.get('shared', r!.key)!)).not.toBe('fresh');
  });
});
