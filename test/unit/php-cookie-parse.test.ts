/**
 * parsePhpCookies against literal answers of real PHP 8.2 (`$_COOKIE` under `php -S`, recorded
 * with test/support/php-echo). test/integration/php-input-oracle.test.ts compares against a live
 * PHP with generated input, and documents what php -S does with two Cookie header lines.
 */
import { describe, expect, it } from 'vitest';
import { type PhpArray, parsePhpCookies, phpStringParam } from '../../src/mediawiki/php-input.js';

type Pairs = Array<[string, string | Pairs]>;

function toPairs(arr: PhpArray): Pairs {
  return [...arr].map(([k, v]): [string, string | Pairs] => [k, typeof v === 'string' ? v : toPairs(v)]);
}

// [what it shows, Cookie header value as PHP received it, PHP's $_COOKIE as ordered pairs].
// Strings are byte strings: '\xe9' is the byte 0xE9.
const PHP_COOKIE: Array<[string, string, Pairs]> = [
  [
    'typical MediaWiki session cookies',
    'enwiki_session=abc123; enwikiUserID=42; enwikiUserName=Example; centralauth_Token=t',
    [
      ['enwiki_session', 'abc123'],
      ['enwikiUserID', '42'],
      ['enwikiUserName', 'Example'],
      ['centralauth_Token', 't'],
    ],
  ],
  [
    'duplicates: the FIRST wins',
    'a=1; b=2; a=3',
    [
      ['a', '1'],
      ['b', '2'],
    ],
  ],
  [
    "values use raw url-decoding: '+' stays '+', %20 is a space",
    'a=x+y%20z; b=%2B',
    [
      ['a', 'x+y z'],
      ['b', '+'],
    ],
  ],
  [
    'names are NOT url-decoded',
    '%61=1; a%20b=2; %41=3',
    [
      ['%61', '1'],
      ['a%20b', '2'],
      ['%41', '3'],
    ],
  ],
  [
    "'.' and ' ' in names become '_' (so 'a.b' and 'a b' collide: first wins)",
    'a.b=1; a b=2; a_b=3; c..d=4',
    [
      ['a_b', '1'],
      ['c__d', '4'],
    ],
  ],
  [
    "leading whitespace (isspace: space, tab, \\v, \\f) is dropped, trailing becomes '_'",
    'a=1;\x09b=2;  c=3;\x0b\x0cd=4; e =5',
    [
      ['a', '1'],
      ['b', '2'],
      ['c', '3'],
      ['d', '4'],
      ['e_', '5'],
    ],
  ],
  [
    "',' does not separate",
    'a=1, b=2; c=3,d=4',
    [
      ['a', '1, b=2'],
      ['c', '3,d=4'],
    ],
  ],
  [
    "empty and whitespace-only tokens, empty names, no '='",
    'a=1;;  ; =x; ==; ;b; c=; d==',
    [
      ['a', '1'],
      ['b', ''],
      ['c', ''],
      ['d', '='],
    ],
  ],
  [
    'trailing spaces of values are kept',
    'a=1 ; b= 2  ',
    [
      ['a', '1 '],
      ['b', ' 2  '],
    ],
  ],
  [
    'invalid escapes stay literal; %00 in a value is a NUL byte',
    'a=%zz; b=%4; c=%%41; d=x%00y; e=%',
    [
      ['a', '%zz'],
      ['b', '%4'],
      ['c', '%A'],
      ['d', 'x\x00y'],
      ['e', '%'],
    ],
  ],
  ['%00 in a name is not decoded, so it is three characters', 'a%00b=1', [['a%00b', '1']]],
  [
    'raw high bytes',
    '\xe9=\xff; b=\xa0',
    [
      ['\xe9', '\xff'],
      ['b', '\xa0'],
    ],
  ],
  [
    'array syntax; nested keys overwrite, top-level first-wins still applies',
    'a[x]=1; a[x]=2; b=1; b[x]=2; c[x]=1; c=2; d[]=1; d[]=2',
    [
      ['a', [['x', '2']]],
      ['b', [['x', '2']]],
      ['c', [['x', '1']]],
      [
        'd',
        [
          ['0', '1'],
          ['1', '2'],
        ],
      ],
    ],
  ],
  [
    "an unmatched '[' becomes '_' (and then first-wins applies to the mangled name)",
    'x[=1; x_=2; y_=3; y[=4; z[a.b=5',
    [
      ['x_', '1'],
      ['y_', '3'],
      ['z_a_b', '5'],
    ],
  ],
  [
    '__Host-/__Secure- created by mangling are dropped; real ones kept',
    '..Host-x=1; __Host-y=2; __Host.z=3; _[Host-w=4; __Secure-v=5; a[__Host-u]=6',
    [
      ['__Host-y', '2'],
      ['__Host_z', '3'],
      ['__Secure-v', '5'],
      ['a', []],
    ],
  ],
  [
    "'=' inside a value, and a value that is only '='",
    'a=b=c; d==',
    [
      ['a', 'b=c'],
      ['d', '='],
    ],
  ],
  [
    'integer-like names and keys',
    '5=a; 05=b; e[1]=x; e[]=y',
    [
      ['5', 'a'],
      ['05', 'b'],
      [
        'e',
        [
          ['1', 'x'],
          ['2', 'y'],
        ],
      ],
    ],
  ],
];

describe('parsePhpCookies equals PHP 8.2 $_COOKIE', () => {
  for (const [what, header, expected] of PHP_COOKIE) {
    it(what, () => {
      expect(toPairs(parsePhpCookies(header))).toEqual(expected);
    });
  }

  it('two Cookie lines: what php -S passes (", "-joined) versus what Node forwards ("; "-joined)', () => {
    // php -S joins `Cookie: a=1` and `Cookie: b=2` into "a=1, b=2": one cookie, b is lost.
    expect(toPairs(parsePhpCookies('a=1, b=2'))).toEqual([['a', '1, b=2']]);
    // Node joins them into "a=1; b=2", which the gateway forwards as one line.
    expect(toPairs(parsePhpCookies('a=1; b=2'))).toEqual([
      ['a', '1'],
      ['b', '2'],
    ]);
  });

  it('max_input_vars (1000): empty and whitespace-only names are skipped before counting', () => {
    // PHP 8.2 (checked on php -S): c0..c999 exist, c1000 does not.
    const header = ['=x', ' ', ' =y', ...Array.from({ length: 1001 }, (_, i) => `c${i}=${i}`)].join('; ');
    const got = parsePhpCookies(header);
    expect(got.size).toBe(1000);
    expect(got.get('c999')).toBe('999');
    expect(got.has('c1000')).toBe(false);
    expect(parsePhpCookies('a=1; b=2; c=3', { maxInputVars: 2 }).has('c')).toBe(false);
  });

  it('a session cookie hidden behind a mangled duplicate stays the first one', () => {
    // The first of `enwiki.session` / `enwiki_session` wins, whichever spelling it had.
    const jar = parsePhpCookies('enwiki.session=attacker; enwiki_session=victim');
    expect(phpStringParam(jar, 'enwiki_session')).toBe('attacker');
  });

  it('does bounded, linear work on hostile input', () => {
    // CPU time of this process, not the wall clock (php-query-parse.test.ts says why).
    const start = process.cpuUsage();
    parsePhpCookies(' ;'.repeat(500_000));
    parsePhpCookies(`a${'['.repeat(1_000_000)}=1`);
    parsePhpCookies(`${'a=1; '.repeat(200_000)}`);
    parsePhpCookies(' '.repeat(1_000_000));
    const used = process.cpuUsage(start);
    expect((used.user + used.system) / 1000).toBeLessThan(3_000);
  });
});
