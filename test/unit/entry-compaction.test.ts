// Stored entries are compacted (src/cache/compact.ts, by the store's StoredEntry): same headers
// and modules, a header named __proto__ stays a header, module lists and equal header sets are
// shared between entries, frozen, and the tables stay bounded.
import { describe, expect, it } from 'vitest';
import { compactHeaders, intern, sharedHeaders } from '../../src/cache/compact.js';
import { type CacheEntry, CacheStore } from '../../src/cache/store.js';

const entry = (headers: Record<string, string | string[]>, modules: string[]): CacheEntry => ({
  status: 200,
  headers,
  body: Buffer.from('{}'),
  storedAt: 1,
  ttlMs: 1000,
  urlKey: '/w/api.php?action=query',
  modules,
  slot: undefined,
  deps: ['p:Main Page', '*'],
});
const store = new CacheStore({ sharedMaxBytes: 1 << 24, sessionMaxBytes: 1 << 24, maxEntries: 10_000, graceMs: 0, staleIfErrorMs: 0, now: () => 1 });
let keys = 0;
/** The entry as the store keeps it. */
function compactEntry(given: CacheEntry): CacheEntry {
  const key = `k${keys++}`;
  expect(store.set('shared', key, given)).toBe(true);
  return store.get('shared', key)!;
}

describe('entry compaction', () => {
  it('keeps every header and value, in order, with multi-values intact', () => {
    const headers = {
      'content-type': 'application/json',
      vary: 'Accept-Encoding, Cookie',
      link: ['<a>; rel=x', '<b>; rel=y'],
      expires: 'Thu, 01 Jan 1970 00:00:01 GMT',
    };
    const compact = compactHeaders(headers);
    expect(compact).toEqual(headers);
    expect(Object.keys(compact)).toEqual(Object.keys(headers));
  });

  it('keeps a header named __proto__ as a header, never as the prototype', () => {
    const headers: Record<string, string> = {};
    Object.defineProperty(headers, '__proto__', { value: 'x', enumerable: true, writable: true, configurable: true });
    const compact = compactHeaders(headers);
    expect(Object.keys(compact)).toEqual(['__proto__']);
    expect(Object.getPrototypeOf(compact)).toBe(Object.prototype);
  });

  it('shares one module list between entries of the same modules', () => {
    const a = compactEntry(entry({}, ['query', 'siteinfo']));
    const b = compactEntry(entry({}, ['query', 'siteinfo']));
    const c = compactEntry(entry({}, ['query', 'allpages']));
    expect(a.modules).toBe(b.modules);
    expect(a.modules).not.toBe(c.modules);
    expect(a.modules).toEqual(['query', 'siteinfo']);
    expect(Object.isFrozen(a.modules)).toBe(true);
  });

  it('leaves the rest of the entry as it was', () => {
    const original = entry({ 'cache-control': 'public' }, ['query']);
    const stored = compactEntry(original);
    const fields = (e: CacheEntry) => [e.status, e.storedAt, e.ttlMs, e.urlKey, e.slot, e.body.toString('latin1')];
    expect(fields(stored)).toEqual(fields(original));
  });

  it('stays bounded: a flood of distinct values is returned as given, not kept', () => {
    // Far more distinct strings than the table holds; each comes back equal.
    for (let i = 0; i < 10_000; i++) expect(intern(`value-${i}`)).toBe(`value-${i}`);
    const long = 'x'.repeat(10_000);
    expect(intern(long)).toBe(long);
  });
});

describe('entry compaction, shared header sets', () => {
  const answer = (expires: string) => ({ 'content-type': 'application/json', 'cache-control': 's-maxage=60, max-age=60, public', expires });

  it('answers with equal headers (one module, the same second) share one frozen headers object', () => {
    const a = compactEntry(entry(answer('Fri, 20 Nov 2026 21:56:19 GMT'), ['query']));
    const b = compactEntry(entry(answer('Fri, 20 Nov 2026 21:56:19 GMT'), ['query']));
    expect(a.headers).toBe(b.headers);
    expect(Object.isFrozen(a.headers)).toBe(true);
    expect(() => {
      (a.headers as Record<string, string>)['x-poison'] = 'y';
    }).toThrow(TypeError);
    expect(b.headers).toEqual(answer('Fri, 20 Nov 2026 21:56:19 GMT'));
  });

  it('lists in a shared set are frozen copies: the caller changing its own list changes no stored entry', () => {
    const link = ['<a>; rel=x', '<b>; rel=y'];
    const etag = ['"1"'];
    const stored = compactEntry(entry({ link, etag }, ['query']));
    link.push('<poison>; rel=z');
    etag[0] = '"poison"';
    expect(stored.headers).toEqual({ link: ['<a>; rel=x', '<b>; rel=y'], etag: ['"1"'] });
    expect(Object.isFrozen(stored.headers.link)).toBe(true);
    expect(Object.isFrozen(stored.headers.etag)).toBe(true);
    expect(compactEntry(entry({ link: ['<a>; rel=x', '<b>; rel=y'], etag: ['"1"'] }, ['query'])).headers).toBe(stored.headers);
  });

  it('the caller changing the headers object it gave changes no stored entry', () => {
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    const stored = compactEntry(entry(headers, ['query']));
    headers['content-type'] = 'text/html';
    headers['x-poison'] = '1';
    expect(stored.headers).toEqual({ 'content-type': 'application/json' });
  });

  it('a very large header set is compacted and frozen but not kept for sharing', () => {
    const big = { 'x-big': 'y'.repeat(5000) };
    const a = sharedHeaders(big);
    expect(a).toEqual(big);
    expect(Object.isFrozen(a)).toBe(true);
    expect(sharedHeaders(big)).not.toBe(a);
  });

  it('any difference in a name, a value, a multi-value or the order keeps sets apart', () => {
    const base = sharedHeaders(answer('Fri, 20 Nov 2026 21:56:19 GMT'));
    expect(sharedHeaders(answer('Fri, 20 Nov 2026 21:56:20 GMT'))).not.toBe(base);
    expect(sharedHeaders({ ...answer('Fri, 20 Nov 2026 21:56:19 GMT'), vary: 'Cookie' })).not.toBe(base);
    const { expires, ...rest } = answer('Fri, 20 Nov 2026 21:56:19 GMT');
    expect(sharedHeaders({ expires, ...rest })).not.toBe(base);
    expect(sharedHeaders({ link: ['a', 'b'] })).not.toBe(sharedHeaders({ link: ['a,b'] }));
    expect(sharedHeaders({ link: ['a', 'b'] })).toEqual({ link: ['a', 'b'] });
  });

  it('stays bounded: a flood of distinct sets is compacted but not all kept for sharing', () => {
    const first = sharedHeaders({ 'x-n': 'first' });
    for (let i = 0; i < 5_000; i++) expect(sharedHeaders({ 'x-n': `v${i}` })).toEqual({ 'x-n': `v${i}` });
    // Forgotten (the oldest goes first): an equal set is now a new object, equal in content.
    const again = sharedHeaders({ 'x-n': 'first' });
    expect(again).not.toBe(first);
    expect(again).toEqual(first);
  });
});

describe('entry compaction, module lists that join alike', () => {
  it('keeps [] and [""] apart', () => {
    expect(compactEntry(entry({}, [])).modules).toEqual([]);
    expect(compactEntry(entry({}, [''])).modules).toEqual(['']);
    expect(compactEntry(entry({}, ['a\u0000b'])).modules).toEqual(['a\u0000b']);
    expect(compactEntry(entry({}, ['a', 'b'])).modules).toEqual(['a', 'b']);
    expect(compactEntry(entry({}, ['a\u0000b', 'c'])).modules).toEqual(['a\u0000b', 'c']);
    expect(compactEntry(entry({}, ['a', 'b\u0000c'])).modules).toEqual(['a', 'b\u0000c']);
  });
});
