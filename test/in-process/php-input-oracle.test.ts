/**
 * src/mediawiki/php-input.ts against the judge: a real PHP 8.2 under `php -S` (test/support/php-echo).
 *
 * Hostile query strings and Cookie headers are generated from pieces rich in the characters
 * where PHP differs from generic parsers (`. [ ] % + = & ; , space _`, valid and invalid
 * percent-escapes, NUL, `__Host-` prefixes, integer-like keys), sent verbatim, and
 * parsePhpQuery / parsePhpCookies must give exactly PHP's `$_GET` / `$_COOKIE`, order included.
 *
 * We parse the query string and Cookie value PHP reports having received ($_SERVER), and also
 * check that it is what we sent, so a transport quirk cannot hide or fake a difference.
 */
import http from 'node:http';
import net from 'node:net';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type PhpInputLimits, parsePhpCookies, parsePhpQuery } from '../../src/mediawiki/php-input.js';
import { type PhpEcho, startPhpEcho, toPairs } from '../support/php-echo.js';

// PHP_ORACLE_RUNS=5000 for a longer hunt.
const RUNS = Number(process.env.PHP_ORACLE_RUNS ?? 400);
// Bounded time even on a slow machine: stop generating (not a failure) after this long.
const TIME_LIMIT_MS = 40_000;
const fcOptions = { numRuns: RUNS, interruptAfterTimeLimit: TIME_LIMIT_MS, markInterruptAsFailure: false };

// Pieces of a request target's query. Only what an HTTP request line can carry raw: php -S (and
// Node) reject raw bytes >= 0x80, controls and space, and `#` starts a fragment, so those arrive
// only percent-encoded.
const QUERY_PIECES = [
  'a',
  'b',
  'x',
  'action',
  '_',
  '-',
  '0',
  '1',
  '5',
  '9223372036854775807',
  '9223372036854775808',
  '.',
  '[',
  ']',
  '[]',
  '][',
  '=',
  '==',
  '&',
  '&&',
  ';',
  ',',
  '+',
  '%',
  '%%',
  '~',
  '"',
  '\\',
  '|',
  '?',
  '/',
  '%20',
  '%2e',
  '%2E',
  '%5b',
  '%5B',
  '%5d',
  '%5D',
  '%3d',
  '%26',
  '%2b',
  '%25',
  '%3b',
  '%2c',
  '%00',
  '%61',
  '%41',
  '%zz',
  '%4',
  '%4g',
  '%g4',
  '%ff',
  '%c3%a9',
  '%09',
  '%0b',
  '%0d%0a',
  '%85',
  '%a0',
  '__Host-',
  '__Secure-',
  '_.Host-',
  '..Host-',
  '_[Host-',
  'Host-',
] as const;

// Pieces of a Cookie header value: anything but CR, LF and NUL can appear raw in a header.
const COOKIE_PIECES = [
  'a',
  'b',
  'x',
  'session',
  '_',
  '-',
  '0',
  '1',
  '5',
  '05',
  '-3',
  '.',
  '[',
  ']',
  '[]',
  '][',
  '=',
  '==',
  ';',
  ';;',
  '; ',
  ',',
  ', ',
  ' ',
  '  ',
  '\t',
  '+',
  '%',
  '"',
  '$',
  '%20',
  '%2e',
  '%5b',
  '%5d',
  '%3d',
  '%3b',
  '%2b',
  '%00',
  '%41',
  '%zz',
  '%4',
  '%ff',
  '\x0b',
  '\x0c',
  '\x85',
  '\xa0',
  '\xe9',
  '\xff',
  '__Host-',
  '__Secure-',
  '_.Host-',
  '..Host-',
  '_[Host-',
] as const;

function pieces(alphabet: readonly string[], maxLength: number): fc.Arbitrary<string> {
  return fc.array(fc.constantFrom(...alphabet), { maxLength }).map((p) => p.join(''));
}

/** name[=value] tokens joined by separators, so most tokens look like variables. */
function tokens(alphabet: readonly string[], separators: readonly string[], maxTokens: number) {
  const token = fc.tuple(pieces(alphabet, 6), fc.option(pieces(alphabet, 5), { nil: undefined }));
  return fc
    .array(fc.tuple(token, fc.constantFrom(...separators)), { maxLength: maxTokens })
    .map((ts) => ts.map(([[n, v], sep]) => (v === undefined ? n : `${n}=${v}`) + sep).join(''));
}

const queryArb = fc.oneof({ weight: 3, arbitrary: tokens(QUERY_PIECES, ['&', '&', '&&', ';'], 8) }, { weight: 1, arbitrary: pieces(QUERY_PIECES, 30) });

/** Node (and so our gateway) trims optional whitespace around a header value. */
function trimOws(s: string): string {
  return s.replace(/^[ \t]+/, '').replace(/[ \t]+$/, '');
}

const cookieArb = fc
  .oneof({ weight: 3, arbitrary: tokens(COOKIE_PIECES, [';', '; ', ';  ', ', ', ';;'], 8) }, { weight: 1, arbitrary: pieces(COOKIE_PIECES, 30) })
  .map(trimOws);

/** Array-shaped names, to exercise nesting, appends, integer keys and unmatched brackets. */
const arrayNameArb = fc
  .tuple(
    fc.constantFrom('a', 'b', 'a.b', ' a', '__Host-a', '5'),
    fc.array(
      fc.constantFrom(
        '[]',
        '[x]',
        '[0]',
        '[1]',
        '[-1]',
        '[05]',
        '[ ]',
        '[ x]',
        '[__Host-x]',
        '[',
        ']',
        '[a.b]',
        'z',
        '[9223372036854775807]',
        '[-9223372036854775808]',
      ),
      { maxLength: 6 },
    ),
  )
  .map(([head, rest]) => head + rest.join(''));
const arrayQueryArb = fc
  .array(fc.tuple(arrayNameArb, fc.constantFrom('1', '2', '')), { maxLength: 8 })
  .map((vs) => vs.map(([n, v]) => `${n.replace(/ /g, '%20')}=${v}`).join('&'));

function expectCanonicalIntegerKeys(integerKeys: readonly string[]): void {
  // The documented key spelling: PHP makes a key an integer only for the canonical decimal form.
  for (const path of integerKeys) {
    const key = path.slice(path.lastIndexOf('/') + 1).replace(/^(get|cookie):/, '');
    expect(BigInt(key).toString()).toBe(key);
  }
}

describe('php-input against real PHP 8.2 (php -S)', () => {
  let php: PhpEcho;
  let phpSmallLimits: PhpEcho;

  beforeAll(async () => {
    php = await startPhpEcho();
    phpSmallLimits = await startPhpEcho({ ini: { max_input_vars: '5', max_input_nesting_level: '3' } });
  });

  afterAll(async () => {
    await php?.stop();
    await phpSmallLimits?.stop();
  });

  async function checkQuery(query: string, server = php, limits?: PhpInputLimits) {
    const r = await server.request(`/?${query}`);
    // php -S's HTTP parser drops any '?' right after the one that starts the query (see the
    // test below); everything else arrives verbatim.
    expect(r.query).toBe(query.replace(/^\?+/, ''));
    expect(toPairs(parsePhpQuery(r.query, limits))).toEqual(toPairs(r.get));
    expectCanonicalIntegerKeys(r.integerKeys);
  }

  async function checkCookie(header: string, server = php, limits?: PhpInputLimits) {
    const r = await server.request('/', header === '' ? [] : [header]);
    expect(r.cookieHeader ?? '').toBe(header);
    expect(toPairs(parsePhpCookies(header, limits))).toEqual(toPairs(r.cookie));
    expectCanonicalIntegerKeys(r.integerKeys);
  }

  it('parsePhpQuery equals $_GET for hostile query strings', async () => {
    await fc.assert(
      fc.asyncProperty(queryArb, (q) => checkQuery(q)),
      fcOptions,
    );
  });

  it('parsePhpQuery equals $_GET for array-shaped names', async () => {
    await fc.assert(
      fc.asyncProperty(arrayQueryArb, (q) => checkQuery(q)),
      fcOptions,
    );
  });

  it('parsePhpCookies equals $_COOKIE for hostile Cookie headers', async () => {
    await fc.assert(
      fc.asyncProperty(cookieArb, (c) => checkCookie(c)),
      fcOptions,
    );
  });

  it('parsePhpCookies equals $_COOKIE for array-shaped cookie names', async () => {
    const arb = fc
      .array(fc.tuple(arrayNameArb, fc.constantFrom('1', '2', '')), { maxLength: 8 })
      .map((vs) => vs.map(([n, v]) => `${n}=${v}`).join('; '))
      .map(trimOws);
    await fc.assert(
      fc.asyncProperty(arb, (c) => checkCookie(c)),
      fcOptions,
    );
  });

  it('honours max_input_vars and max_input_nesting_level like PHP (set to 5 and 3)', async () => {
    const limits = { maxInputVars: 5, maxInputNestingLevel: 3 };
    await fc.assert(
      fc.asyncProperty(fc.oneof(tokens(QUERY_PIECES, ['&', '&&'], 10), arrayQueryArb), cookieArb, async (q, c) => {
        await checkQuery(q, phpSmallLimits, limits);
        await checkCookie(c, phpSmallLimits, limits);
      }),
      { ...fcOptions, numRuns: Math.ceil(RUNS / 2) },
    );
  });

  it('stops after the default max_input_vars (1000) like PHP', async () => {
    // Empty-name GET tokens count (PHP counts before dropping them), empty tokens do not.
    const q1 = Array.from({ length: 1003 }, (_, i) => `v${i}=${i}`).join('&');
    const q2 = ['=x', 'a=1', '&&', '%00=y', ...Array.from({ length: 997 }, (_, i) => `w${i}`), 'b=2', 'c=3'].join('&');
    for (const q of [q1, q2]) await checkQuery(q);
    // Cookie tokens with an empty (or whitespace-only) name are skipped before counting.
    const c1 = ['=x', ' ', ' =y', ...Array.from({ length: 1001 }, (_, i) => `c${i}=${i}`)].join('; ');
    await checkCookie(c1);
    expect(parsePhpQuery(q1).size).toBe(1000);
    expect(parsePhpCookies(c1).size).toBe(1000);
  });

  it('php -S drops the "?"s right after the first "?" of the request target', async () => {
    // A php -S quirk (its http_parser ignores extra '?' at the start of the query), not part of
    // PHP's variable parsing: `/??a=1` gives QUERY_STRING "a=1" and $_GET ['a' => '1'], while
    // the raw query after the first '?' is "?a=1", whose $_GET would be ['?a' => '1']. The
    // MediaWiki used by the integration tests runs under php -S, so it sees such URLs
    // differently from a gateway that parses everything after the first '?'.
    const r = await php.request('/???a=1&?b=2');
    expect(r.query).toBe('a=1&?b=2');
    expect(toPairs(r.get)).toEqual([
      ['a', '1'],
      ['?b', '2'],
    ]);
    expect(toPairs(parsePhpQuery('??a=1&?b=2'))).toEqual([
      ['??a', '1'],
      ['?b', '2'],
    ]);
  });

  it('two Cookie header lines: php -S joins them with ", ", Node with "; "', async () => {
    // What php -S 8.2 does with two Cookie lines: it joins them with ", " (like any repeated
    // header), so PHP parses `a=1, b=2` and sees ONE cookie a = "1, b=2"; b is lost.
    const twoLines = await php.request('/', ['a=1', 'b=2']);
    expect(twoLines.cookieHeader).toBe('a=1, b=2');
    expect(toPairs(twoLines.cookie)).toEqual([['a', '1, b=2']]);
    expect(toPairs(parsePhpCookies('a=1, b=2'))).toEqual(toPairs(twoLines.cookie));

    // What our gateway sees and forwards: Node joins repeated Cookie lines with "; " (and trims
    // each value), and sends that as a single line. PHP's parse of that single line is what
    // counts, and parsePhpCookies of Node's value must equal it.
    const joined = await nodeJoinedCookie(['a=1', ' b=2 ', 'a=3; c=4']);
    expect(joined).toBe('a=1; b=2; a=3; c=4');
    const oneLine = await php.request('/', [joined]);
    expect(toPairs(oneLine.cookie)).toEqual([
      ['a', '1'],
      ['b', '2'],
      ['c', '4'],
    ]);
    expect(toPairs(parsePhpCookies(joined))).toEqual(toPairs(oneLine.cookie));
  });

  it('Node-joined Cookie lines: parsePhpCookies(joined) equals PHP given the joined line', async () => {
    // Node refuses header values with control characters other than tab.
    const lineArb = cookieArb.filter((c) => c !== '' && !/[\x00-\x08\x0a-\x1f\x7f]/.test(c));
    await fc.assert(
      fc.asyncProperty(fc.array(lineArb, { minLength: 2, maxLength: 3 }), async (lines) => {
        const joined = await nodeJoinedCookie(lines);
        await checkCookie(joined);
      }),
      { ...fcOptions, numRuns: Math.ceil(RUNS / 4) },
    );
  });
});

/** The `cookie` header value Node's HTTP server hands to the gateway for these raw lines. */
function nodeJoinedCookie(lines: readonly string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const server = http.createServer((req, res) => {
      res.end();
      server.close();
      resolve(req.headers.cookie ?? '');
    });
    server.on('error', reject);
    server.on('clientError', (err) => {
      server.close();
      reject(err);
    });
    server.listen(0, '127.0.0.1', () => {
      const addr = server.address();
      if (addr === null || typeof addr === 'string') return reject(new Error('no port'));
      const head = ['GET / HTTP/1.1', 'Host: x', ...lines.map((l) => `Cookie: ${l}`), 'Connection: close', '', ''];
      const sock = net.connect(addr.port, '127.0.0.1', () => sock.end(Buffer.from(head.join('\r\n'), 'latin1')));
      sock.on('error', reject);
      sock.resume();
    });
  });
}
