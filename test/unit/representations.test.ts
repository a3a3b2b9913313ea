// What clients that do not take the stored gzip get (src/compression/representations.ts): the
// answer decoded (and kept for the next one, without keeping evicted entries alive), a br made in
// the background once br clients asked for an entry `brotliAfterHits` times, added only if it is
// still the entry stored for its key; and the headers of each representation (policy.ts).
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import pino from 'pino';
import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { type CacheEntry, CacheStore } from '../../src/cache/store.js';
import { CompressionMetrics } from '../../src/compression/metrics.js';
import { type BrotliCharge, Representations } from '../../src/compression/representations.js';
import { representationHeaders, varyOnAcceptEncoding } from '../../src/policy/policy.js';

function answer(n: number, seed = 0): Buffer {
  let s = '{"batchcomplete":"","query":{"allmessages":[';
  for (let i = 0; s.length < n; i++) s += `{"name":"message-${seed}-${i}","*":"Text of message number ${i}"},`;
  return Buffer.from(s.slice(0, n), 'utf8');
}

async function setUp(brotliAfterHits = 3) {
  const store = new CacheStore({ sharedMaxBytes: 1 << 24, sessionMaxBytes: 1 << 24, maxEntries: 10_000, graceMs: 0, staleIfErrorMs: 0, now: () => 1_000 });
  const registry = new Registry();
  const metrics = new CompressionMetrics(registry, { tierStats: (t) => store.stats(t) });
  const reps = new Representations({ store, metrics, decodedMaxBytes: 1 << 20, brotliAfterHits, log: pino({ level: 'silent' }) });
  const put = async (key: string, identity: Buffer): Promise<CacheEntry> => {
    const form = await reps.storedForm(identity);
    if (form.coding !== 'gzip') throw new Error('expected gzip');
    store.set('shared', key, {
      status: 200,
      headers: { 'content-type': 'application/json' },
      body: form.body,
      coding: 'gzip',
      identityBytes: identity.length,
      storedAt: 1_000,
      ttlMs: 60_000,
      urlKey: `/w/api.php?k=${key}`,
      modules: ['query'],
      slot: undefined,
      deps: [],
    });
    return store.get('shared', key)!;
  };
  /** Until the upgrade queue is empty. */
  const settle = async () => {
    for (let i = 0; i < 200 && (reps as unknown as { upgrading: boolean }).upgrading; i++) await new Promise((r) => setTimeout(r, 10));
  };
  const metric = async (name: string) => (await registry.getSingleMetric(name)!.get()).values;
  return { store, reps, put, settle, metric };
}

describe('identity for clients that take no compression', () => {
  it('is the stored gzip decoded, kept: the second client costs no gunzip', async () => {
    const { reps, put, metric } = await setUp();
    const identity = answer(6000);
    const entry = await put('a', identity);
    const first = reps.ready(entry, 'identity')!;
    expect(first.equals(identity)).toBe(true);
    const decodedOnce = (await metric('wikiedge_decompression_seconds_total'))[0]!.value;
    expect(reps.ready(entry, 'identity')).toBe(first);
    expect((await metric('wikiedge_decompression_seconds_total'))[0]!.value).toBe(decodedOnce);
    expect(reps.decodedBytes()).toBe(identity.length);
    expect((await reps.bytesOf(entry, 'identity')).equals(identity)).toBe(true);
  });

  it('gzip and a made coding: the stored gzip as it is; a coding not stored is made for one answer', async () => {
    const { reps, put } = await setUp();
    const identity = answer(5000);
    const entry = await put('b', identity);
    expect(reps.ready(entry, 'gzip')).toEqual(entry.body);
    expect(reps.ready(entry, 'br')).toBeUndefined();
    const br = await reps.bytesOf(entry, 'br');
    expect(brotliDecompressSync(br).equals(identity)).toBe(true);
    expect(gunzipSync(reps.ready(entry, 'gzip')!).equals(identity)).toBe(true);
  });
});

/** A br-preferring hit of `entry` under `key`: the one that completes the count has its br made, charged to `charge`. */
function ask(reps: Representations, key: string, entry: CacheEntry, charge: BrotliCharge = { affords: () => true, take: () => true }): void {
  if (reps.wantBrotli(entry)) reps.makeBrotli('shared', key, entry, charge);
}

describe('br for hot entries', () => {
  it('is made after brotliAfterHits br-preferring hits, added to the entry, ~smaller than the gzip', async () => {
    const { store, reps, put, settle, metric } = await setUp(3);
    const identity = answer(30_000);
    const entry = await put('hot', identity);
    ask(reps, 'hot', entry);
    ask(reps, 'hot', entry);
    await settle();
    expect(store.get('shared', 'hot')).toBe(entry);
    ask(reps, 'hot', entry);
    await settle();
    const upgraded = store.get('shared', 'hot')!;
    expect(upgraded).not.toBe(entry);
    expect(brotliDecompressSync(upgraded.br!).equals(identity)).toBe(true);
    expect(upgraded.br!.length).toBeLessThan(upgraded.body.length * 0.95);
    expect(await metric('wikiedge_brotli_upgrades_total')).toEqual([expect.objectContaining({ labels: { outcome: 'made' }, value: 1 })]);
    // The entry with br asks for nothing more.
    for (let i = 0; i < 5; i++) ask(reps, 'hot', upgraded);
    await settle();
    expect(store.get('shared', 'hot')).toBe(upgraded);
  });

  it('is not added to an entry replaced or purged meanwhile', async () => {
    const { store, reps, put, settle, metric } = await setUp(1);
    const old = await put('k', answer(20_000, 1));
    ask(reps, 'k', old);
    // Replaced before the background work ran.
    const fresh = await put('k', answer(20_000, 2));
    await settle();
    expect(store.get('shared', 'k')).toBe(fresh);
    expect(store.get('shared', 'k')!.br).toBeUndefined();
    expect((await metric('wikiedge_brotli_upgrades_total'))[0]).toMatchObject({ labels: { outcome: 'gone' }, value: 1 });
  });

  it('brotliAfterHits 0: never', async () => {
    const { store, reps, put, settle } = await setUp(0);
    const entry = await put('n', answer(20_000));
    for (let i = 0; i < 10; i++) ask(reps, 'n', entry);
    await settle();
    expect(store.get('shared', 'n')).toBe(entry);
  });
});

describe('br charged to the client that asked for it', () => {
  it('asks that client`s store budget, before any work, for what the br form may add at most; charges what it adds', async () => {
    const { store, reps, put, settle } = await setUp(1);
    const entry = await put('paid', answer(30_000));
    const asked: number[] = [];
    const taken: number[] = [];
    ask(reps, 'paid', entry, { affords: (bytes) => (asked.push(bytes), true), take: (bytes) => (taken.push(bytes), true) });
    await settle();
    const upgraded = store.get('shared', 'paid')!;
    expect(upgraded.br).toBeDefined();
    // A br form is kept only when 5 % smaller than the gzip: at most that much is added.
    // Asked again, for its own bytes, once made; charged those once kept.
    expect(asked).toEqual([Math.ceil(entry.body.length * 0.95), upgraded.br!.length]);
    expect(taken).toEqual([upgraded.br!.length]);
  });

  it('charges nothing for a br form not made (the entry gone meanwhile)', async () => {
    const { store, reps, put, settle } = await setUp(1);
    const entry = await put('gone', answer(30_000));
    const taken: number[] = [];
    ask(reps, 'gone', entry, { affords: () => true, take: (bytes) => (taken.push(bytes), true) });
    await put('gone', answer(30_000, 2));
    await settle();
    expect(store.get('shared', 'gone')!.br).toBeUndefined();
    expect(taken).toEqual([]);
  });

  it('is not made when that client`s budget is spent: client-budget, nothing made; asked for again after as many hits more', async () => {
    const { store, reps, put, settle, metric } = await setUp(2);
    const entry = await put('unpaid', answer(30_000));
    for (let i = 0; i < 2; i++) ask(reps, 'unpaid', entry, { affords: () => false, take: () => false });
    await settle();
    expect(store.get('shared', 'unpaid')).toBe(entry);
    expect(await metric('wikiedge_brotli_upgrades_total')).toEqual([expect.objectContaining({ labels: { outcome: 'client-budget' }, value: 1 })]);
    // Another client's hits: counted from zero again, and made for the one that pays.
    ask(reps, 'unpaid', entry);
    await settle();
    expect(store.get('shared', 'unpaid')!.br).toBeUndefined();
    ask(reps, 'unpaid', entry);
    await settle();
    expect(store.get('shared', 'unpaid')!.br).toBeDefined();
  });

  it('the client whose hit completes the count is the one charged', async () => {
    const { reps, put, settle } = await setUp(3);
    const entry = await put('third', answer(30_000));
    const charged: string[] = [];
    for (const client of ['a', 'b', 'c']) ask(reps, 'third', entry, { affords: () => true, take: () => (charged.push(client), true) });
    await settle();
    expect(charged).toEqual(['c']);
  });
});

describe('the headers of a representation', () => {
  it('Vary gains Accept-Encoding unless it is there (any case) or is *', () => {
    expect(varyOnAcceptEncoding({ vary: 'Treat-as-Untrusted, Cookie' }).vary).toBe('Treat-as-Untrusted, Cookie, Accept-Encoding');
    expect(varyOnAcceptEncoding({}).vary).toBe('Accept-Encoding');
    expect(varyOnAcceptEncoding({ vary: 'accept-encoding, Cookie' }).vary).toBe('accept-encoding, Cookie');
    expect(varyOnAcceptEncoding({ vary: '*' }).vary).toBe('*');
  });

  it('an encoded representation says its coding and weakens a strong ETag; identity is unchanged', () => {
    const h = { etag: '"abc"', 'content-type': 'application/json' };
    expect(representationHeaders(h, 'identity')).toEqual(h);
    expect(representationHeaders(h, 'gzip')).toEqual({ etag: 'W/"abc"', 'content-type': 'application/json', 'content-encoding': 'gzip' });
    expect(representationHeaders({ etag: 'W/"abc"' }, 'br')).toEqual({ etag: 'W/"abc"', 'content-encoding': 'br' });
  });
});
