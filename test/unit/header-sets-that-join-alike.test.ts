/**
 * Shared header sets and module lists (cache/compact.ts sharedHeaders, compactModules) are found
 * by an id built from the names and values: those that would read alike once run together stay
 * apart.
 */
import { describe, expect, it } from 'vitest';
import { compactModules, sharedHeaders } from '../../src/cache/compact.js';

type Headers = Record<string, string | string[]>;

/** Pairs of different sets that a naive concatenation of names and values would confuse. */
const ALIKE: [Headers, Headers][] = [
  [{ ab: 'c' }, { a: 'bc' }],
  [
    { a: 'b', c: 'd' },
    { a: 'bc', '': 'd' },
  ],
  [{ a: '1:b' }, { 'a1:': 'b' }],
  [{ a: '2:bc' }, { a: '2', bc: '' }],
  [{ link: 'a' }, { link: ['a'] }],
  [{ link: ['a', 'b'] }, { link: ['a,b'] }],
  [{ link: ['a'], b: 'c' }, { link: ['a"],"b":"c'] }],
  [{ link: [] }, { link: '' }],
  [{ a: '' }, { 'a0:': '' }],
];

describe('shared header sets that join alike', () => {
  for (const [one, other] of ALIKE) {
    it(`${JSON.stringify(one)} and ${JSON.stringify(other)} stay apart`, () => {
      const a = sharedHeaders(one);
      const b = sharedHeaders(other);
      expect(a).toEqual(one);
      expect(b).toEqual(other);
      expect(sharedHeaders({ ...one })).toBe(a);
      expect(sharedHeaders({ ...other })).toBe(b);
    });
  }
});

const ALIKE_LISTS: [string[], string[]][] = [
  [[], ['']],
  [['ab'], ['a', 'b']],
  [['1:a'], ['', 'a']],
  [['a', ''], ['a']],
  [['2:ab'], ['2', 'ab']],
];

describe('shared module lists that join alike', () => {
  for (const [one, other] of ALIKE_LISTS) {
    it(`${JSON.stringify(one)} and ${JSON.stringify(other)} stay apart`, () => {
      const a = compactModules(one);
      const b = compactModules(other);
      expect(a).toEqual(one);
      expect(b).toEqual(other);
      expect(compactModules([...one])).toBe(a);
      expect(compactModules([...other])).toBe(b);
    });
  }
});
