/**
 * parsePhpQuery against literal answers of real PHP 8.2 (`$_GET` under `php -S`, recorded with
 * test/support/php-echo; two rows via parse_str(), which runs the same php_default_treat_data).
 * test/integration/php-input-oracle.test.ts compares against a live PHP with generated input.
 */
import { describe, expect, it } from 'vitest';
import { hasArrayShapes, type PhpArray, parsePhpCookies, parsePhpQuery, phpStringParam, reachedMaxInputVars } from '../../src/mediawiki/php-input.js';
import { postedForm } from '../../src/mediawiki/php-post.js';

type Pairs = Array<[string, string | Pairs]>;

function toPairs(arr: PhpArray): Pairs {
  return [...arr].map(([k, v]): [string, string | Pairs] => [k, typeof v === 'string' ? v : toPairs(v)]);
}

// [what it shows, raw query string (after '?'), PHP's $_GET as ordered pairs; integer keys as
// their decimal string]. Strings are byte strings: '\xe9' is the byte 0xE9.
const PHP_GET: Array<[string, string, Pairs]> = [
  [
    'a typical api.php query',
    'action=query&format=json&prop=info&titles=Main%20Page&formatversion=2&meta=siteinfo',
    [
      ['action', 'query'],
      ['format', 'json'],
      ['prop', 'info'],
      ['titles', 'Main Page'],
      ['formatversion', '2'],
      ['meta', 'siteinfo'],
    ],
  ],
  [
    "'.' and ' ' (as '+', %20 or %2E) in names become '_'",
    'a.b=1&a+b=2&c%20d=3&e%2Ef=4&g..h=5',
    [
      ['a_b', '2'],
      ['c_d', '3'],
      ['e_f', '4'],
      ['g__h', '5'],
    ],
  ],
  [
    "leading spaces of names are dropped (only ' '), trailing ones become '_'",
    '+a=1&%20%20b=2&c+=3&%09d=4',
    [
      ['a', '1'],
      ['b', '2'],
      ['c_', '3'],
      ['\x09d', '4'],
    ],
  ],
  [
    "'+' and %20 are both a space, in names and values",
    'q=a+b%20c&x+y=1',
    [
      ['q', 'a b c'],
      ['x_y', '1'],
    ],
  ],
  ['names are url-decoded: %61ction is action, and the later duplicate wins', 'action=query&%61ction=edit', [['action', 'edit']]],
  [
    'GET duplicates: the LAST wins and keeps the FIRST position',
    'a=1&b=2&a=3',
    [
      ['a', '3'],
      ['b', '2'],
    ],
  ],
  [
    "only '&' separates (arg_separator.input); ';' and ',' are data",
    'a=1;b=2&c=3,d=4&e=5%26f=6',
    [
      ['a', '1;b=2'],
      ['c', '3,d=4'],
      ['e', '5&f=6'],
    ],
  ],
  [
    "empty names are dropped; empty tokens ignored; no '=' means ''",
    '=x&==&&&=&g&h=&i==',
    [
      ['g', ''],
      ['h', ''],
      ['i', '='],
    ],
  ],
  [
    'a NUL cuts a name (C string) but not a value',
    'a%00b=1&%00c=2&d=e%00f',
    [
      ['a', '1'],
      ['d', 'e\x00f'],
    ],
  ],
  [
    'invalid escapes stay literal',
    '%zz=%4&%4=%zz%4g&a=%%41&b=%&c=%2',
    [
      ['%zz', '%4'],
      ['%4', '%zz%4g'],
      ['a', '%A'],
      ['b', '%'],
      ['c', '%2'],
    ],
  ],
  [
    'escapes with hex digits in both cases, high bytes stay bytes',
    'x=%ff%FE&%c3%a9=%C3%A9&y=%e9',
    [
      ['x', '\xff\xfe'],
      ['\xc3\xa9', '\xc3\xa9'],
      ['y', '\xe9'],
    ],
  ],
  [
    "'=' inside a value",
    'a=b=c&d==e',
    [
      ['a', 'b=c'],
      ['d', '=e'],
    ],
  ],
  [
    'array syntax: appends, string keys, nested',
    'a[]=1&a[]=2&a[x]=3&b[x][y]=4&b[x][z]=5',
    [
      [
        'a',
        [
          ['0', '1'],
          ['1', '2'],
          ['x', '3'],
        ],
      ],
      [
        'b',
        [
          [
            'x',
            [
              ['y', '4'],
              ['z', '5'],
            ],
          ],
        ],
      ],
    ],
  ],
  [
    "mangling stops at the first '['; keys keep '.' and ' '",
    'a.b[c.d]=1&e+f[g+h]=2',
    [
      ['a_b', [['c.d', '1']]],
      ['e_f', [['g h', '2']]],
    ],
  ],
  [
    "an unmatched '[' becomes '_' and so do later ' ', '.', '['",
    'a[=1&b[x=2&c[d.e=3&f[g[h=4&i[%20j=5',
    [
      ['a_', '1'],
      ['b_x', '2'],
      ['c_d_e', '3'],
      ['f_g_h', '4'],
      ['i__j', '5'],
    ],
  ],
  [
    "a deeper unmatched '[' is dropped with the rest",
    'a[b][c=1&d[][e=2',
    [
      ['a', [['b', '1']]],
      ['d', [['0', '2']]],
    ],
  ],
  [
    "only '][' continues a name; other text after ']' is ignored",
    'a[x]y[z]=1&b[x]]=2&c[x][y]z=3&h]=4',
    [
      ['a', [['x', '1']]],
      ['b', [['x', '2']]],
      ['c', [['x', [['y', '3']]]]],
      ['h]', '4'],
    ],
  ],
  [
    "a ']' inside a key, and '[' inside a key",
    'a[b[c]=1&a[b]c]=2',
    [
      [
        'a',
        [
          ['b[c', '1'],
          ['b', '2'],
        ],
      ],
    ],
  ],
  [
    "one whitespace char before ']' still means append; otherwise whitespace is kept in the key",
    'a[%20]=1&a[%09]=2&a[%0b]=3&a[%20%20]=4&a[%20x]=5&a[%a0]=6&a[%85]=7',
    [
      [
        'a',
        [
          ['0', '1'],
          ['1', '2'],
          ['2', '3'],
          ['  ', '4'],
          [' x', '5'],
          ['\xa0', '6'],
          ['\x85', '7'],
        ],
      ],
    ],
  ],
  [
    'percent-encoded brackets are brackets (decoded first)',
    'a%5Bx%5D=1&b%5B%5D=2',
    [
      ['a', [['x', '1']]],
      ['b', [['0', '2']]],
    ],
  ],
  [
    'integer-like keys and where [] appends',
    'a[5]=x&a[]=y&b[-3]=x&b[]=y&c[05]=x&c[]=y&d[-0]=x&d[]=y&e[+1]=x&e[1.5]=y',
    [
      [
        'a',
        [
          ['5', 'x'],
          ['6', 'y'],
        ],
      ],
      [
        'b',
        [
          ['-3', 'x'],
          ['-2', 'y'],
        ],
      ],
      [
        'c',
        [
          ['05', 'x'],
          ['0', 'y'],
        ],
      ],
      [
        'd',
        [
          ['-0', 'x'],
          ['0', 'y'],
        ],
      ],
      [
        'e',
        [
          [' 1', 'x'],
          ['1.5', 'y'],
        ],
      ],
    ],
  ],
  [
    '64-bit integer keys: overflow stays a string; [] after PHP_INT_MAX is dropped',
    'a[9223372036854775807]=1&a[]=2&a[x]=3&b[-9223372036854775808]=1&b[]=2&c[9223372036854775808]=1&c[]=2',
    [
      [
        'a',
        [
          ['9223372036854775807', '1'],
          ['x', '3'],
        ],
      ],
      [
        'b',
        [
          ['-9223372036854775808', '1'],
          ['-9223372036854775807', '2'],
        ],
      ],
      [
        'c',
        [
          ['9223372036854775808', '1'],
          ['0', '2'],
        ],
      ],
    ],
  ],
  [
    'a string becomes an array in place; a plain name replaces an array',
    'a=1&a[x]=2&b[x]=1&b=2&c[x]=1&c[x][y]=2',
    [
      ['a', [['x', '2']]],
      ['b', '2'],
      ['c', [['x', [['y', '2']]]]],
    ],
  ],
  [
    '[] on an existing array key',
    'a[x]=1&a[x][]=2&a[x][]=3',
    [
      [
        'a',
        [
          [
            'x',
            [
              ['0', '2'],
              ['1', '3'],
            ],
          ],
        ],
      ],
    ],
  ],
  [
    'integer-like top-level names',
    '5=a&-3=b&05=c&0=d',
    [
      ['5', 'a'],
      ['-3', 'b'],
      ['05', 'c'],
      ['0', 'd'],
    ],
  ],
  [
    '__Host-/__Secure-: dropped when only mangling created the prefix',
    '__Host-a=1&..Host-b=2&_.Host-c=3&%5F_Host-d=4&__Secure-x=1&..Secure-y=2&+__Host-z=1&_[Host-q=1',
    [
      ['__Host-a', '1'],
      ['__Host-d', '4'],
      ['__Secure-x', '1'],
      ['__Host-z', '1'],
    ],
  ],
  [
    '__Host-/__Secure- keys are checked at every depth against the whole name',
    'a[__Host-x]=1&b[x][__Secure-y][z]=2&__Host-c[__Host-d]=3&__Host-e[__Secure-f]=4&g[+__Host-x]=5',
    [
      ['a', []],
      ['b', [['x', []]]],
      ['__Host-c', [['__Host-d', '3']]],
      ['__Host-e', []],
      ['g', [[' __Host-x', '5']]],
    ],
  ],
  [
    "'this', 'GLOBALS' and '_GET' are ordinary names here",
    'this=1&GLOBALS=2&_GET=3',
    [
      ['this', '1'],
      ['GLOBALS', '2'],
      ['_GET', '3'],
    ],
  ],
  ["brackets after an empty name are dropped; '_[' and '.[' both give '__'", '[x]=1&[]=2&_[=3&.[=4', [['__', '4']]],
  [
    "a query that starts with '?' (PHP's answer via parse_str(), the same php_default_treat_data; php -S itself would strip those '?'s)",
    '??a=1&?b=2',
    [
      ['??a', '1'],
      ['?b', '2'],
    ],
  ],
  ["a raw NUL ends the input, as for PHP's C strings (via parse_str())", 'a=1\x00b=2&c=3', [['a', '1']]],
];

/** `{k1: {k2: ... value}}` as pairs, for deep nesting. */
function nested(keys: string[], value: string): string | Pairs {
  return keys.reduceRight<string | Pairs>((inner, k) => [[k, inner]], value);
}

describe('parsePhpQuery equals PHP 8.2 $_GET', () => {
  for (const [what, query, expected] of PHP_GET) {
    it(what, () => {
      expect(toPairs(parsePhpQuery(query))).toEqual(expected);
    });
  }

  it('max_input_nesting_level (64): 64 levels are kept, 65 remove the whole variable', () => {
    // PHP 8.2: `a[x]...` with 64 brackets is stored; with 65, zend_symtable_str_del removes `b`,
    // including the earlier `b=1`, while a later `b=3` is stored again (at the end).
    const deep64 = `a${'[x]'.repeat(64)}=1`;
    const deep65 = `b${'[x]'.repeat(65)}=2`;
    const got = toPairs(parsePhpQuery(`b=1&c=0&${deep64}&${deep65}&d=4`));
    expect(got).toEqual([
      ['c', '0'],
      ['a', nested(Array(64).fill('x'), '1')],
      ['d', '4'],
    ]);
    expect(toPairs(parsePhpQuery(`${deep65}&b=3`))).toEqual([['b', '3']]);
    // An unmatched 65th '[' counts too (the level check comes first).
    expect(toPairs(parsePhpQuery(`d[y]=1&d${'[x]'.repeat(64)}[=4`))).toEqual([]);
  });

  it('max_input_vars (1000): later variables are ignored; empty-name tokens count, empty tokens do not', () => {
    // PHP 8.2 (checked on php -S): of v0..v1002 only v0..v999 exist.
    const many = Array.from({ length: 1003 }, (_, i) => `v${i}=${i}`).join('&');
    const got = parsePhpQuery(many);
    expect(got.size).toBe(1000);
    expect(got.get('v999')).toBe('999');
    expect(got.has('v1000')).toBe(false);
    // 999 "=x" tokens use 999 of the 1000 slots although they store nothing; "&&&" is free.
    const q = [...Array(999).fill('=x'), 'a=1', 'b=2'].join('&&&');
    expect(toPairs(parsePhpQuery(q))).toEqual([['a', '1']]);
  });

  it('takes other php.ini limits', () => {
    expect(toPairs(parsePhpQuery('a=1&b=2&c=3', { maxInputVars: 2 }))).toEqual([
      ['a', '1'],
      ['b', '2'],
    ]);
    expect(toPairs(parsePhpQuery('a[x][y]=1&b[x]=2', { maxInputNestingLevel: 1 }))).toEqual([['b', [['x', '2']]]]);
  });

  it('does bounded, linear work on hostile input', () => {
    const inputs = [
      '&'.repeat(1_000_000),
      `a${'['.repeat(500_000)}=1`,
      `a${'[]'.repeat(500_000)}=1`,
      'a'.repeat(1_000_000),
      '%'.repeat(1_000_000),
      `${'a=1&'.repeat(200_000)}`,
      `x=${'%41'.repeat(300_000)}`,
    ];
    // CPU time of this process, not the wall clock: a busy machine (CI beside a CPU hog) stretches
    // the wall clock, never the work. Generous: a quadratic algorithm would take minutes here.
    const start = process.cpuUsage();
    for (const q of inputs) parsePhpQuery(q);
    const used = process.cpuUsage(start);
    expect((used.user + used.system) / 1000).toBeLessThan(3_000);
    expect(parsePhpQuery(`a${'['.repeat(10)}=1`).get(`a${'_'.repeat(10)}`)).toBe('1');
    expect(parsePhpQuery(`a${'[]'.repeat(500_000)}=1`).size).toBe(0);
  });
});

describe('phpStringParam / hasArrayShapes', () => {
  it('phpStringParam returns strings only, like WebRequest::getVal', () => {
    const get = parsePhpQuery('action=query&titles[]=Foo&a.b=1&empty=');
    expect(phpStringParam(get, 'action')).toBe('query');
    expect(phpStringParam(get, 'titles')).toBeUndefined();
    expect(phpStringParam(get, 'a_b')).toBe('1');
    expect(phpStringParam(get, 'a.b')).toBeUndefined();
    expect(phpStringParam(get, 'empty')).toBe('');
    expect(phpStringParam(get, 'missing')).toBeUndefined();
  });

  it('hasArrayShapes is true when any top-level value is an array', () => {
    expect(hasArrayShapes(parsePhpQuery('action=query&format=json'))).toBe(false);
    expect(hasArrayShapes(parsePhpQuery('action=query&titles[]=x'))).toBe(true);
    expect(hasArrayShapes(parsePhpQuery('a[x]=1'))).toBe(true);
    // Unmatched brackets do not make arrays, and a forbidden key still leaves an (empty) array.
    expect(hasArrayShapes(parsePhpQuery('a[x=1&b]=2'))).toBe(false);
    expect(hasArrayShapes(parsePhpQuery('a[__Host-x]=1'))).toBe(true);
    expect(hasArrayShapes(new Map())).toBe(false);
  });
});

describe('max_input_vars reached (the wiki may read further: reachedMaxInputVars)', () => {
  it('is said of a query, cookies and a form with more variables than the limit, never of one within it', () => {
    expect(reachedMaxInputVars(parsePhpQuery(`a=1${'&='.repeat(999)}`))).toBe(false);
    expect(reachedMaxInputVars(parsePhpQuery(`a=1${'&='.repeat(1000)}`))).toBe(true);
    expect(reachedMaxInputVars(parsePhpCookies(`${'a;'.repeat(1000)} s=1`))).toBe(true);
    expect(reachedMaxInputVars(parsePhpCookies('a=1; s=1'))).toBe(false);
    const body = Buffer.from(`action=edit${'&x='.repeat(1000)}&title=T`);
    expect(postedForm('application/x-www-form-urlencoded', body, new Set(['action']))).toEqual({ kind: 'unreadable' });
  });
});
