// Accept-Encoding, as RFC 9110 §12.5.3 reads (src/http/codings.ts preferenceOf, chooseCoding): a table of
// literal field values and what they accept, best first; then which representation an entry
// stored as gzip (with or without br) or as it is gives each of them.
import { describe, expect, it } from 'vitest';
import { chooseCoding, type Coding, parseAcceptEncoding, type Preference, preferenceOf } from '../../src/http/codings.js';

const cases: [field: string | undefined, preference: Preference, why: string][] = [
  [undefined, ['identity'], 'absent: any coding would do (rule 1), identity is what every client reads'],
  ['', ['identity'], '"a field value that is empty implies that the user agent does not want any content coding"'],
  [' , ,', ['identity'], 'only empty list elements (§5.6.1.2: they do not count): empty'],
  ['gzip', ['gzip', 'identity'], 'listed: acceptable (rule 3); identity unlisted: acceptable after it (rule 2)'],
  ['gzip, deflate', ['gzip', 'identity'], 'deflate is not produced: ignored'],
  ['gzip, deflate, br', ['br', 'gzip', 'identity'], 'equal weights: the smaller answer first'],
  ['gzip, deflate, br, zstd', ['br', 'gzip', 'identity'], 'a browser'],
  ['br;q=1.0, gzip;q=0.8, *;q=0.1', ['br', 'gzip', 'identity'], '* gives identity its weight (0.1)'],
  ['gzip;q=1.0, identity; q=0.5, *;q=0', ['gzip', 'identity'], 'RFC 9110 §12.5.3 example: br matched by *;q=0'],
  ['compress, gzip', ['gzip', 'identity'], 'RFC 9110 §12.5.3 example'],
  ['compress;q=0.5, gzip;q=1.0', ['gzip', 'identity'], 'RFC 9110 §12.5.3 example'],
  ['*', ['br', 'gzip', 'identity'], '"*" matches any available coding not listed; identity too'],
  ['*;q=0.5, gzip', ['gzip', 'br', 'identity'], 'gzip (1) before * (0.5); br before identity at 0.5'],
  ['identity', ['identity'], 'identity only'],
  ['identity, gzip;q=0.5', ['identity', 'gzip'], 'identity weighted higher wins'],
  ['gzip;q=0.5, identity', ['identity', 'gzip'], 'order of listing does not matter, weights do'],
  ['gzip, identity;q=0', ['gzip'], 'identity refused: gzip only'],
  ['br, identity;q=0', ['br'], 'identity refused: br only'],
  ['identity;q=0', 'not-acceptable', 'identity refused, no coding listed and no *: nothing (406)'],
  ['*;q=0', 'not-acceptable', '"*;q=0" without a more specific entry for "identity" refuses it (rule 2), and every coding'],
  ['deflate, identity;q=0', 'not-acceptable', 'the only coding accepted is not produced'],
  ['gzip;q=0, br;q=0, identity;q=0', 'not-acceptable', 'everything refused'],
  ['*;q=0, identity', ['identity'], 'a more specific entry for identity overrides *;q=0'],
  ['gzip;q=0', ['identity'], 'gzip refused, identity acceptable by default'],
  ['GZIP, Br', ['br', 'gzip', 'identity'], 'coding names are case-insensitive'],
  ['x-gzip', ['gzip', 'identity'], '§8.4.1.3: x-gzip is gzip'],
  ['gzip;q=0.001', ['gzip', 'identity'], 'the least positive weight still comes before an unlisted identity'],
  ['gzip; Q=0.5 , br ;q=0.4', ['gzip', 'br', 'identity'], 'OWS around ";", the parameter name is case-insensitive'],
  ['gzip;q=2, br', ['br', 'identity'], '2 is not a qvalue (§12.4.2): that element is ignored'],
  ['gzip;q=0.5000, br', ['br', 'identity'], 'four decimals are not a qvalue either'],
  ['gzip;q=, br;q=0.3', ['br', 'identity'], 'an empty weight is not a qvalue'],
  ['gzip;q=0, gzip', ['identity'], 'a coding listed twice keeps its lowest weight: the refusal stands'],
  ['gzip;level=9, br;q=0', ['gzip', 'identity'], 'other parameters are no weight: q=1'],
];

describe('Accept-Encoding → the codings a request accepts, best first', () => {
  it.each(cases)('%j → %j (%s)', (field, preference) => {
    expect(parseAcceptEncoding(field)).toEqual(preference);
    // The remembered answer is the same (twice: the second comes from the memo).
    expect(preferenceOf(field)).toEqual(preference);
    expect(preferenceOf(field)).toEqual(preference);
  });
});

describe('which representation a request gets', () => {
  // What an entry has at hand: identity always (decoded if need be), gzip when stored so, br once made.
  const has =
    (...stored: Coding[]) =>
    (c: Coding) =>
      c === 'identity' || stored.includes(c);
  const choose = (field: string | undefined, ...stored: Coding[]) => {
    const preference = parseAcceptEncoding(field);
    if (preference === 'not-acceptable') return preference;
    return chooseCoding(preference, has(...stored));
  };
  const table: [field: string | undefined, stored: Coding[], expected: Coding | 'not-acceptable'][] = [
    [undefined, ['gzip'], 'identity'],
    ['gzip', ['gzip'], 'gzip'],
    ['gzip, deflate, br', ['gzip'], 'gzip'],
    ['gzip, deflate, br', ['gzip', 'br'], 'br'],
    ['gzip', ['gzip', 'br'], 'gzip'],
    ['br', ['gzip'], 'identity'],
    ['br', ['gzip', 'br'], 'br'],
    ['gzip', [], 'identity'],
    // Identity refused and nothing stored that is accepted: the client's first choice, made for it.
    ['gzip, identity;q=0', [], 'gzip'],
    ['br, identity;q=0', ['gzip'], 'br'],
    ['br;q=0.5, gzip, identity;q=0', ['gzip', 'br'], 'gzip'],
    ['*;q=0', ['gzip'], 'not-acceptable'],
  ];
  it.each(table)('%j with %j stored → %s', (field, stored, expected) => {
    expect(choose(field, ...stored)).toBe(expected);
  });
});
