// Which URL keys an admin pattern or prefix names (src/cache/url-match.ts): `*` only, everything
// else literal, linear in the key; a prefix's parameters in any order, encoded as the key is.
import { describe, expect, it } from 'vitest';
import { matchesUrlPattern, redisGlobOf, urlPatternProblem, urlPrefixMatcher } from '../../src/cache/url-match.js';

const KEY = '/w/api.php?action=query&format=json&prop=info%7Crevisions&titles=Main_Page';

describe('matchesUrlPattern', () => {
  it.each([
    ['/w/api.php?action=query*', true],
    ['*titles=Main_Page', true],
    ['*prop=info*Main*', true],
    [KEY, true],
    ['*titles=Main', false],
    ['/w/api.php?action=parse*', false],
    ['*Main_Page*revisions*', false],
    ['/w/api.php?action=query&format=json&prop=info|revisions*', false],
    ['/w/api.php?[a]ction=query*', false],
    ['/w/api.php?action=query&format=json&prop=info%7Crevisions&titles=Main_Page*', true],
  ])('%s: %s', (pattern, matched) => {
    expect(matchesUrlPattern(pattern, KEY)).toBe(matched);
  });

  it('a piece must fit between the others, not overlap the last one', () => {
    expect(matchesUrlPattern('ab*b', 'ab')).toBe(false);
    expect(matchesUrlPattern('a*a', 'a')).toBe(false);
    expect(matchesUrlPattern('a*a', 'aa')).toBe(true);
  });

  it('the worst case a backtracking matcher meets is one pass per piece here', () => {
    const key = 'a'.repeat(100_000);
    expect(matchesUrlPattern(`${'*a'.repeat(8)}b`, key)).toBe(false);
  });

  it('bounds and refusals', () => {
    expect(urlPatternProblem('*')).toMatch(/every key/);
    expect(urlPatternProblem('/w/api.php?*')).toBeUndefined();
    expect(urlPatternProblem(`${'a*'.repeat(9)}`)).toMatch(/9 stars/);
  });

  it('as a Redis glob: stars kept, Redis’ other metacharacters escaped', () => {
    expect(redisGlobOf('/w/api.php?a=[x]*\\')).toBe('/w/api.php\\?a=\\[x\\]*\\\\');
  });
});

describe('urlPrefixMatcher', () => {
  it.each([
    ['/w/api.php?titles=Main_Page&action=query', true],
    ['/w/api.php?prop=info|revisions&action=query', true],
    ['/w/api.php?prop=info%7Crev', true],
    ['/w/api.php?format=json&tit', true],
    ['/w/api.php?action=query&format=json&prop=in', true],
    ['/w/api.php?titles=Main_Page&action=parse', false],
    ['/w/api.php?titles=Main&action=query', false],
    ['/w/api.php?titles=Main', true],
    ['/w/api.php?titles=Main_Page&action=que', true],
    ['/w/', true],
    ['/w/api.php?', true],
    ['/x/api.php?action=query', false],
  ])('%s: %s', (prefix, matched) => {
    expect(urlPrefixMatcher(prefix)(KEY)).toBe(matched);
  });
});

describe('urlPrefixMatcher reads names as PHP does', () => {
  // PHP turns `.`, a space and an unmatched `[` in a name into `_` (mediawiki/php-input.ts): the
  // key holds `a_b=1`, whichever of them the operator typed.
  const key = '/w/api.php?a_b=1&action=query&format=json';
  it.each(['/w/api.php?a.b=1&action=query', '/w/api.php?a b=1&action=query', '/w/api.php?a[b=1&action=query'])('%s names a_b=1', (prefix) => {
    expect(urlPrefixMatcher(prefix)(key)).toBe(true);
  });
  it('an array shape names nothing (no key holds one)', () => {
    expect(urlPrefixMatcher('/w/api.php?a[b]=1&action=query')(key)).toBe(false);
  });
});
