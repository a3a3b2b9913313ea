// Entries stored compressed (src/http/codings.ts storedForm): the store keeps the gzip and,
// once made, the br in one arena region, counts both in the budget and the answers' own bytes
// apart; a br is added only to the entry it was made for; the Redis codec (version 3) carries
// the stored form exactly and still reads version 2 entries as answers stored as they are.
import { randomBytes } from 'node:crypto';
import { gunzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { decodeEntry, encodeEntry, EntryCodecError } from '../../src/cache/entry-codec.js';
import { type CacheEntry, CacheStore, entrySize, headerSetSize } from '../../src/cache/store.js';
import { MIN_COMPRESS_BYTES, storedForm } from '../../src/http/codings.js';

/** A JSON answer of `n` bytes as api.php writes them: repetitive, so it compresses. */
function answer(n: number, seed = 0): Buffer {
  let s = '{"batchcomplete":"","query":{"pages":[';
  for (let i = 0; s.length < n; i++) s += `{"pageid":${seed + i},"ns":0,"title":"Page ${seed + i}"},`;
  return Buffer.from(s.slice(0, n), 'utf8');
}

async function gzipEntry(identity: Buffer, br?: Buffer): Promise<CacheEntry> {
  const { form } = await storedForm(identity);
  if (form.coding !== 'gzip') throw new Error('expected gzip');
  return {
    status: 200,
    headers: { 'content-type': 'application/json; charset=utf-8', vary: 'Accept-Encoding, Treat-as-Untrusted, Cookie' },
    body: form.body,
    coding: 'gzip',
    identityBytes: identity.length,
    ...(br && { br }),
    storedAt: 1_000,
    ttlMs: 60_000,
    urlKey: '/w/api.php?action=query&format=json',
    modules: ['query'],
    slot: undefined,
    deps: ['*'],
  };
}

const newStore = () =>
  new CacheStore({ sharedMaxBytes: 1 << 24, sessionMaxBytes: 1 << 24, maxEntries: 10_000, graceMs: 0, staleIfErrorMs: 0, now: () => 1_000 });

describe('the stored form', () => {
  it('an answer under MIN_COMPRESS_BYTES stays as it is, a larger one is stored as gzip that decodes to it', async () => {
    expect((await storedForm(answer(MIN_COMPRESS_BYTES - 1))).form).toEqual({ coding: 'identity' });
    const identity = answer(8000);
    const { form, cost } = await storedForm(identity);
    expect(form.coding).toBe('gzip');
    if (form.coding !== 'gzip') return;
    expect(gunzipSync(form.body).equals(identity)).toBe(true);
    expect(form.body.length).toBeLessThan(identity.length / 3);
    expect(cost).toMatchObject({ coding: 'gzip', inBytes: identity.length, outBytes: form.body.length });
  });

  it('an answer gzip saves less than a tenth of stays as it is', async () => {
    const random = randomBytes(4096);
    expect((await storedForm(random)).form).toEqual({ coding: 'identity' });
  });
});

describe('compressed entries in the store', () => {
  it('keeps the gzip, the br and the answer length; counts stored bytes in the budget and the answers apart', async () => {
    const identity = answer(20_000);
    const br = Buffer.from('pretend-br-bytes');
    const given = await gzipEntry(identity, br);
    const store = newStore();
    expect(store.set('shared', 'k', given)).toBe(true);
    const held = store.get('shared', 'k')!;
    expect(held.coding).toBe('gzip');
    expect(held.identityBytes).toBe(identity.length);
    expect(held.body.equals(given.body)).toBe(true);
    expect(held.br!.equals(br)).toBe(true);
    // Copies in the arena, not the caller's buffers.
    expect(held.body.buffer).not.toBe(given.body.buffer);
    const stats = store.stats('shared');
    expect(stats.bodyBytes).toBe(given.body.length + br.length);
    expect(stats.identityBytes).toBe(identity.length);
    // The table's and the kept view's own charges aside (store.ts stats).
    expect(stats.bytes - stats.tableBytes - stats.viewBytes).toBe(entrySize('k', given) + headerSetSize(given.headers));
    store.delete('shared', 'k');
    const after = store.stats('shared');
    expect(after).toMatchObject({ bodyBytes: 0, identityBytes: 0, viewBytes: 0 });
    expect(after.bytes).toBe(after.tableBytes);
  });

  it('an entry as it is (no coding) has no br, and its body is its answer', () => {
    const store = newStore();
    const body = answer(500);
    store.set('shared', 'k', { status: 200, headers: {}, body, storedAt: 1_000, ttlMs: 1000, urlKey: '/w/api.php?a', modules: [], slot: undefined, deps: [] });
    const held = store.get('shared', 'k')!;
    expect(held.coding).toBeUndefined();
    expect(held.br).toBeUndefined();
    expect(held.body.equals(body)).toBe(true);
    expect(store.stats('shared').identityBytes).toBe(500);
  });

  it('addBrotli: the entry gets its br (same everything else, not counted as an eviction); never another entry under the key', async () => {
    const evictions: string[] = [];
    const store = new CacheStore({
      sharedMaxBytes: 1 << 24,
      sessionMaxBytes: 1 << 24,
      maxEntries: 10_000,
      graceMs: 0,
      staleIfErrorMs: 0,
      now: () => 1_000,
      onEvict: (_tier, reason) => evictions.push(reason),
    });
    store.set('shared', 'k', await gzipEntry(answer(9000)));
    const before = store.get('shared', 'k')!;
    const br = Buffer.from('br-form');
    expect(store.addBrotli('shared', 'k', before, br)).toBe(true);
    const after = store.get('shared', 'k')!;
    expect(after).not.toBe(before);
    expect(after.br!.equals(br)).toBe(true);
    expect(after.body.equals(before.body)).toBe(true);
    expect([after.storedAt, after.ttlMs, after.identityBytes, after.urlKey]).toEqual([before.storedAt, before.ttlMs, before.identityBytes, before.urlKey]);
    expect(evictions).toEqual([]);
    // The entry it was made for is gone (replaced by the one with br): nothing is added to the newer one.
    expect(store.addBrotli('shared', 'k', before, Buffer.from('stale'))).toBe(false);
    expect(store.get('shared', 'k')!.br!.equals(br)).toBe(true);
    // Purged: nothing comes back.
    store.purgeUrl(after.urlKey);
    expect(store.addBrotli('shared', 'k', after, br)).toBe(false);
    expect(store.get('shared', 'k')).toBeUndefined();
  });

  it('addBrotli reaches an entry too large to keep its read view (near the whole budget)', async () => {
    const given = { ...(await gzipEntry(answer(20_000), undefined)), deps: [] };
    const budget = entrySize('k', given) + headerSetSize(given.headers) + 300;
    const store = new CacheStore({ sharedMaxBytes: budget + 128, sessionMaxBytes: 1 << 20, maxEntries: 10, graceMs: 0, staleIfErrorMs: 0, now: () => 1_000 });
    expect(store.set('shared', 'k', given)).toBe(true);
    const read = store.get('shared', 'k')!;
    // No view kept: each read is a new object (its 320 bytes did not fit).
    expect(store.stats('shared').viewBytes).toBe(0);
    expect(store.get('shared', 'k')).not.toBe(read);
    // Failed before: refused as 'gone', the br never made.
    expect(store.addBrotli('shared', 'k', read, Buffer.from('b'))).toBe(true);
    expect(store.get('shared', 'k')!.br!.toString()).toBe('b');
    // An entry read before a replacement is not the entry any more.
    expect(store.set('shared', 'k', given)).toBe(true);
    expect(store.addBrotli('shared', 'k', read, Buffer.from('b'))).toBe(false);
  });

  it('bodies survive the arena moving them: gzip and br keep their own bytes', async () => {
    const store = new CacheStore({ sharedMaxBytes: 4 << 20, sessionMaxBytes: 1 << 20, maxEntries: 100_000, graceMs: 0, staleIfErrorMs: 0, now: () => 1_000 });
    const kept: { key: string; gzip: Buffer; br: Buffer }[] = [];
    for (let i = 0; i < 3000; i++) {
      const e = await gzipEntry(answer(1500 + (i % 700), i * 1000), Buffer.from(`br-of-${i}`));
      store.set('shared', `k${i}`, e);
      // Holes everywhere: every entry but one in five is purged.
      if (i % 5 === 0) kept.push({ key: `k${i}`, gzip: e.body, br: e.br! });
      else store.delete('shared', `k${i}`);
    }
    for (const k of kept) {
      const held = store.get('shared', k.key)!;
      expect(held.body.equals(k.gzip)).toBe(true);
      expect(held.br!.equals(k.br)).toBe(true);
    }
  });
});

describe('the Redis codec carries the stored form', () => {
  it('version 3: gzip, the answer length and br round-trip exactly', async () => {
    const e = await gzipEntry(answer(12_000), Buffer.from('br-bytes'));
    const back = decodeEntry(encodeEntry('shared', e)).entry;
    expect(back).toEqual(e);
    expect(gunzipSync(back.body).equals(answer(12_000))).toBe(true);
    const noBr = await gzipEntry(answer(3000));
    expect(decodeEntry(encodeEntry('session', noBr)).entry).toEqual(noBr);
  });

  it('an entry as it is encodes as before, with one byte more (coding 0)', () => {
    const e: CacheEntry = {
      status: 200,
      headers: { a: 'b' },
      body: answer(900),
      storedAt: 5,
      ttlMs: 6,
      urlKey: '/w/api.php?x',
      modules: ['m'],
      slot: 's',
      deps: ['d'],
    };
    const v3 = encodeEntry('session', e);
    expect(v3[2]).toBe(3);
    expect(decodeEntry(v3).entry).toEqual(e);
    // The same entry as version 2 wrote it (no coding byte) is read as an answer stored as it is.
    const v2 = Buffer.concat([v3.subarray(0, 2), Buffer.from([2]), v3.subarray(3, 18), v3.subarray(19)]);
    const old = decodeEntry(v2).entry;
    expect(old).toEqual(e);
    expect(old.coding).toBeUndefined();
  });

  it('refuses a br length longer than what follows, and an unknown coding', async () => {
    const e = await gzipEntry(answer(3000), Buffer.from('br'));
    const good = encodeEntry('shared', e);
    const badCoding = Buffer.from(good);
    badCoding[18] = 7;
    expect(() => decodeEntry(badCoding)).toThrow(/coding/);
    // Without its gzip, what follows the headers is only the br: no body is left for the gzip.
    expect(() => decodeEntry(good.subarray(0, good.length - e.body.length - 2))).toThrow(EntryCodecError);
    const noGzip = Buffer.concat([good.subarray(0, good.length - e.body.length - 2), Buffer.from('br')]);
    expect(() => decodeEntry(noGzip)).toThrow(/br form/);
    expect(() => encodeEntry('shared', { ...e, identityBytes: undefined })).toThrow(/identityBytes/);
  });
});
