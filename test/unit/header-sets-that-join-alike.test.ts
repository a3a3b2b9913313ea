/**
 * Shared header sets and module lists (cache/compact.ts sharedHeaders, compactModules) are found
 * by an id built from the names and values: those that would read alike once run together stay
 * apart.
 */
import fc from 'fast-check';
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
  // Sets the last few stores returned are compared value by value before any id is built.
  [
    { a: '1', b: '2' },
    { b: '2', a: '1' },
  ],
  [{ link: ['a'] }, { link: ['a', ''] }],
  [{ link: ['x', 'y'] }, { link: ['x', 'z'] }],
  [{ a: 'x' }, { a: 'x', b: 'y' }],
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

describe('shared header sets', () => {
  it('are one object only for sets with the same names in the same order and equal values', () => {
    const name = fc.constantFrom('a', 'b', 'vary', 'link', '__proto__');
    const value = fc.oneof(fc.constantFrom('x', 'y', ''), fc.array(fc.constantFrom('x', 'y', ''), { maxLength: 2 }));
    const set = fc.array(fc.tuple(name, value), { maxLength: 4 }).map((pairs) => {
      const out: Headers = {};
      for (const [n, v] of pairs) Object.defineProperty(out, n, { value: v, enumerable: true, writable: true, configurable: true });
      return out;
    });
    const same = (a: Headers, b: Headers) => JSON.stringify(Object.entries(a)) === JSON.stringify(Object.entries(b));
    fc.assert(
      fc.property(fc.array(set, { minLength: 2, maxLength: 12 }), (sets) => {
        const shared = sets.map((h) => sharedHeaders(h));
        sets.forEach((h, i) => expect(same(shared[i]!, h)).toBe(true));
        // Different sets are never one object; equal ones one after another always are (equal
        // ones further apart may not be: the table forgets its oldest).
        for (let i = 0; i < sets.length; i++)
          for (let j = 0; j < sets.length; j++) {
            const why = `${JSON.stringify(Object.entries(sets[i]!))} ${JSON.stringify(Object.entries(sets[j]!))}`;
            if (!same(sets[i]!, sets[j]!)) expect(shared[i] === shared[j], why).toBe(false);
            else if (j === i + 1) expect(shared[i] === shared[j], why).toBe(true);
          }
      }),
      { numRuns: 300 },
    );
  });
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
