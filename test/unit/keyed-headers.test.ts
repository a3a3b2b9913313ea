// The request headers a key accounts for (recv.ts keyedHeadersOf, request.ts cacheKey,
// sameKeyedHeaders): the same list drives the key and the fresh-hit path's memo.
import { describe, expect, it } from 'vitest';
import { lookupDecision } from '../../src/steps/flow.js';
import { keyedHeadersOf } from '../../src/steps/recv.js';
import { cacheKey, KEYED_FIELDS, type KeyedHeaders, sameKeyedHeaders } from '../../src/policy/request.js';
import type { Identity } from '../../src/mediawiki/identity.js';
import { parsePhpQuery } from '../../src/mediawiki/php-input.js';

const ANON: Identity = { kind: 'anonymous', loginSuppressed: false, carriesCredentials: false };
const PLAIN: KeyedHeaders = { treatAsUntrusted: undefined, forwardedProto: 'http', origin: undefined, acceptVariants: undefined };

describe('keyedHeadersOf', () => {
  it('X-Forwarded-Proto counts only from a trusted peer, and only http or https', () => {
    const q = parsePhpQuery('action=query');
    expect(keyedHeadersOf({ 'x-forwarded-proto': 'https' }, '127.0.0.1', true, q).forwardedProto).toBe('https');
    expect(keyedHeadersOf({ 'x-forwarded-proto': 'https' }, '203.0.113.9', false, q).forwardedProto).toBe('http');
    expect(keyedHeadersOf({ 'x-forwarded-proto': 'gopher' }, '127.0.0.1', true, q).forwardedProto).toBe('http');
  });
  it('Origin counts only with an origin parameter (ApiMain::handleCORS reads it then)', () => {
    expect(keyedHeadersOf({ origin: 'https://a' }, '', false, parsePhpQuery('action=query')).origin).toBeUndefined();
    expect(keyedHeadersOf({ origin: 'https://a' }, '', false, parsePhpQuery('action=query&origin=https://a')).origin).toBe('https://a');
  });
  it('Accept-Language counts for the languages with variants only (LanguageConverter::getHeaderVariant)', () => {
    const q = parsePhpQuery('action=parse&page=X');
    expect(keyedHeadersOf({ 'accept-language': 'en-US,en;q=0.9' }, '', false, q).acceptVariants).toBeUndefined();
    expect(keyedHeadersOf({ 'accept-language': 'zh-TW,zh;q=0.9,en;q=0.8' }, '', false, q).acceptVariants).toBe('zh-tw;,zh;0.9');
  });
  it('Treat-as-Untrusted: present (even empty) differs from absent', () => {
    expect(keyedHeadersOf({ 'treat-as-untrusted': '' }, '', false, parsePhpQuery('')).treatAsUntrusted).toBe('');
    expect(keyedHeadersOf({}, '', false, parsePhpQuery('')).treatAsUntrusted).toBeUndefined();
  });
});

describe('every keyed field changes the key and the memo`s comparison alike', () => {
  const variants: Record<(typeof KEYED_FIELDS)[number], Partial<KeyedHeaders>[]> = {
    forwardedProto: [{ forwardedProto: 'https' }],
    treatAsUntrusted: [{ treatAsUntrusted: '' }, { treatAsUntrusted: '1' }],
    origin: [{ origin: '' }, { origin: 'https://a' }],
    acceptVariants: [{ acceptVariants: 'zh-tw;' }, { acceptVariants: 'zh-cn;' }],
  };
  for (const field of KEYED_FIELDS) {
    it.each(variants[field])(`${field}: %j`, (change) => {
      const other = { ...PLAIN, ...change };
      expect(sameKeyedHeaders(PLAIN, other)).toBe(false);
      expect(cacheKey('/w/api.php?a=1', ANON, other)).not.toBe(cacheKey('/w/api.php?a=1', ANON, PLAIN));
    });
  }
  it('equal headers: the same key, and the memo agrees', () => {
    expect(sameKeyedHeaders(PLAIN, { ...PLAIN })).toBe(true);
    expect(cacheKey('/w/api.php?a=1', ANON, { ...PLAIN })).toBe(cacheKey('/w/api.php?a=1', ANON, PLAIN));
  });
});

describe('lookupDecision: what an entry`s age means', () => {
  it.each([
    ['fresh', 'hit'],
    ['grace', 'stale-and-refresh'],
    ['stale-if-error', 'keep-as-fallback'],
    ['dead', 'remove'],
    [undefined, 'miss'],
  ] as const)('%s → %s', (freshness, decision) => {
    expect(lookupDecision(freshness)).toBe(decision);
  });
});
