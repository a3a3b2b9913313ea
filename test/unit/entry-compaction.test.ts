// Stored entries are compacted (src/cache/compact.ts): same headers and modules, a header named
// __proto__ stays a header, module lists are shared between entries, and the tables stay bounded.
import { describe, expect, it } from 'vitest';
import { compactEntry, compactHeaders, intern } from '../../src/cache/compact.js';
import type { CacheEntry } from '../../src/cache/store.js';

const entry = (headers: Record<string, string | string[]>, modules: string[]): CacheEntry => ({
  status: 200,
  headers,
  body: Buffer.from('{}'),
  storedAt: 1,
  ttlMs: 1000,
  urlKey: '/w/api.php?action=query',
  modules,
  slot: undefined,
});

describe('entry compaction', () => {
  it('keeps every header and value, in order, with multi-values intact', () => {
    const headers = { 'content-type': 'application/json', vary: 'Accept-Encoding, Cookie', link: ['<a>; rel=x', '<b>; rel=y'], expires: 'Thu, 01 Jan 1970 00:00:01 GMT' };
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
    const { headers: _h, modules: _m, ...rest } = compactEntry(original);
    const { headers: _h2, modules: _m2, ...expected } = original;
    expect(rest).toEqual(expected);
  });

  it('stays bounded: a flood of distinct values is returned as given, not kept', () => {
    // Far more distinct strings than the table holds; each comes back equal.
    for (let i = 0; i < 10_000; i++) expect(intern(`value-${i}`)).toBe(`value-${i}`);
    const long = 'x'.repeat(10_000);
    expect(intern(long)).toBe(long);
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
