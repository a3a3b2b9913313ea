// The canonical query (policy/request.ts canonicalQuery) spells every name and value as
// encodeURIComponent does, whether or not it had anything to encode.
import { describe, expect, it } from 'vitest';
import { canonicalQuery } from '../../src/policy/request.js';

const STRINGS = ['', 'query', 'AZaz09', "-_.!~*'()", 'a b', 'a+b', 'a&b=c', '%41', 'ü', 'é', '\u00ff', '中', '😀', 'a|b', '\x1fa', '/', '?#[]@$,;:', 'a\nb'];

describe('canonicalQuery encoding', () => {
  for (const s of STRINGS) {
    it(`${JSON.stringify(s)} as name and as value`, () => {
      expect(canonicalQuery(new Map([[s, 'v']]))).toBe(`${encodeURIComponent(s)}=v`);
      expect(canonicalQuery(new Map([['n', s]]))).toBe(`n=${encodeURIComponent(s)}`);
    });
  }
});
