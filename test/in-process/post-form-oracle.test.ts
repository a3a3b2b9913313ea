/**
 * src/mediawiki/php-post.ts postedForm against the judge: a real PHP 8.2 under `php -S`
 * (test/support/php-echo), which reports the `$_POST` it built. The gateway takes a write's
 * module and, where the answer names none, its pages from what it reads of the form; a body the
 * two read apart let one edit of a sandbox invalidate the lists of whatever namespaces the query
 * string named (test/in-process/attack-write-form-read-apart-from-php.test.ts).
 *
 * For every body, what postedForm says must be PHP's reading or nothing: `unreadable` is always
 * allowed (the write is then named by its answer alone), `none` only when PHP's `$_POST` is empty,
 * and a `form` must hold, for every name asked, exactly what PHP holds (a string, an array, or
 * nothing).
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PhpArray } from '../../src/mediawiki/php-input.js';
import { postedForm } from '../../src/mediawiki/php-post.js';
import { type PhpEcho, startPhpEcho } from '../support/php-echo.js';

// PHP_ORACLE_RUNS=5000 for a longer hunt.
const RUNS = Number(process.env.PHP_ORACLE_RUNS ?? 300);
const TIME_LIMIT_MS = 40_000;
const fcOptions = { numRuns: RUNS, interruptAfterTimeLimit: TIME_LIMIT_MS, markInterruptAsFailure: false };

const NAMES = ['action', 'title', 'x'];
const ONLY = new Set(NAMES);

type Shape = string | 'array' | undefined;
const shape = (arr: PhpArray, name: string): Shape => {
  const v = arr.get(name);
  return v === undefined || typeof v === 'string' ? v : 'array';
};

let php: PhpEcho;
beforeAll(async () => {
  php = await startPhpEcho();
});
afterAll(async () => {
  await php?.stop();
});

/** postedForm's reading of the body is PHP's, or it says it cannot tell (its kind, returned). */
async function readAsPhp(contentType: string, body: string): Promise<string> {
  const ours = postedForm(contentType, Buffer.from(body, 'latin1'), ONLY);
  const theirs = (await php.post('/', contentType, body)).post;
  const context = JSON.stringify({ contentType, body, ours: ours.kind, php: [...theirs.keys()] });
  if (ours.kind === 'none') expect(theirs.size, context).toBe(0);
  if (ours.kind === 'form') for (const name of NAMES) expect(shape(ours.post, name), `${name} in ${context}`).toEqual(shape(theirs, name));
  return ours.kind;
}

const B = 'XyZ';
const part = (headers: string, value: string, eol = '\r\n') => `--${B}${eol}${headers}${eol}${eol}${value}${eol}`;
const named = (name: string, value: string) => part(`Content-Disposition: form-data; name="${name}"`, value);

describe('the media type and the boundary, as PHP reads them', () => {
  it.each([
    ['application/x-www-form-urlencoded, x', 'action=edit&title=Sandbox'],
    ['application/x-www-form-urlencoded x', 'action=edit&title=Sandbox'],
    ['APPLICATION/X-WWW-FORM-URLENCODED;charset=UTF-8', 'action=edit&title=Sandbox'],
    ['application/x-www-form-urlencoded\t', 'action=edit&title=Sandbox'],
    ['text/plain', 'action=edit&title=Sandbox'],
    [`multipart/form-data; boundary=${B}`, `${named('action', 'edit')}--${B}--\r\n`],
    [`multipart/form-data, boundary=${B}`, `${named('action', 'edit')}--${B}--\r\n`],
    [`multipart/form-data; xboundary=${B}; boundary=other`, `${named('action', 'edit')}--${B}--\r\n`],
    [`multipart/form-data; BOUNDARY=${B}`, `${named('action', 'edit')}--${B}--\r\n`],
    [`multipart/form-data; boundary = ${B}`, `${named('action', 'edit')}--${B}--\r\n`],
    [`multipart/form-data; boundary="${B}"; x`, `${named('action', 'edit')}--${B}--\r\n`],
    [`multipart/form-data; charset=x; boundary=${B}`, `${named('action', 'edit')}--${B}--\r\n`],
  ])('%j', async (contentType, body) => {
    await readAsPhp(contentType, body);
  });
});

describe('multipart shapes where PHP`s reader has quirks', () => {
  const TYPE = `multipart/form-data; boundary=${B}`;
  it.each([
    // Content-Disposition spellings.
    ['name first, no form-data', `${part('Content-Disposition: name="title"', 'A')}--${B}--\r\n`],
    ['single quotes', `${part("Content-Disposition: form-data; name='title'", 'A')}--${B}--\r\n`],
    ['two names', `${part('Content-Disposition: form-data; name="x"; name="title"', 'A')}--${B}--\r\n`],
    ['a space before =', `${part('Content-Disposition: form-data; name ="title"', 'A')}--${B}--\r\n`],
    ['a space before the colon', `${part('Content-Disposition : form-data; name="title"', 'A')}--${B}--\r\n`],
    ['an escaped quote', `${part('Content-Disposition: form-data; name="ti\\"tle"', 'A')}--${B}--\r\n`],
    ['a backslash', `${part('Content-Disposition: form-data; name="ti\\tle"', 'A')}--${B}--\r\n`],
    ['folded', `${part('Content-Disposition: form-data;\r\n name="title"', 'A')}--${B}--\r\n`],
    ['unquoted', `${part('Content-Disposition: form-data; name=title', 'A')}--${B}--\r\n`],
    ['upper case', `${part('CONTENT-DISPOSITION: FORM-DATA; NAME="title"', 'A')}--${B}--\r\n`],
    ['nameless, then a title', `${part('Content-Disposition: form-data', 'A')}${named('title', 'B')}--${B}--\r\n`],
    ['no disposition, then a title', `${part('Content-Type: text/plain', 'A')}${named('title', 'B')}--${B}--\r\n`],
    ['a file', `${part('Content-Disposition: form-data; name="title"; filename="a.txt"', 'A')}--${B}--\r\n`],
    ['a field named as a file before it', `${part('Content-Disposition: form-data; name="action"; filename=""', '')}${named('action', 'edit')}--${B}--\r\n`],
    ['a header line PHP reads as two', `${part(`X-Pad: ${'a'.repeat(5_120 - 9)}\r\nContent-Disposition: form-data; name="action"`, 'edit')}--${B}--\r\n`],
    [
      'an empty file input, then a delimiter PHP finds 5 KiB into a line',
      `${named('title', 'Sandbox')}${part('Content-Disposition: form-data; name="f"; filename=""', `${'x'.repeat(5_120)}--${B}\r\nContent-Disposition: form-data; name="title"\r\n\r\nMain_Page`)}--${B}--\r\n`,
    ],
    [
      'a file PHP skips (unbalanced brackets), then a delimiter 5 KiB into a line',
      `${named('title', 'Sandbox')}${part('Content-Disposition: form-data; name="f]"; filename="a.png"', `${'x'.repeat(5_120)}--${B}\r\nContent-Disposition: form-data; name="title"\r\n\r\nMain_Page`)}--${B}--\r\n`,
    ],
    ['a NUL in a name', `${part('Content-Disposition: form-data; name="action\0x"', 'edit')}--${B}--\r\n`],
    [
      'a long line after the closing delimiter, ending in one',
      `${named('title', 'A')}--${B}--\r\n${'x'.repeat(5_120)}--${B}\r\nContent-Disposition: form-data; name="action"\r\n\r\nedit\r\n`,
    ],
    ['an epilogue', `${named('title', 'A')}--${B}--\r\nepilogue\r\n`],
    ['a value with no line', `--${B}\r\nContent-Disposition: form-data; name="x"\r\n\r\n${named('action', 'edit')}--${B}--\r\n`],
    // Delimiters.
    ['parts after the closing delimiter', `${named('title', 'A')}--${B}--\r\n${named('title', 'B')}--${B}--\r\n`],
    ['a delimiter with more after it', `${named('title', 'A')}--${B}x\r\n${named('title', 'B')}--${B}--\r\n`],
    ['a preamble', `preamble\r\n${named('title', 'A')}--${B}--\r\n`],
    ['LF line ends', `--${B}\nContent-Disposition: form-data; name="title"\n\nA\n--${B}--\n`],
    ['no closing delimiter', `${named('title', 'A')}`],
    ['a value with CR LF inside', `${named('title', 'A\r\nB')}--${B}--\r\n`],
    ['an empty value', `${named('title', '')}--${B}--\r\n`],
    ['an array', `${named('title[]', 'A')}--${B}--\r\n`],
  ])('%s', async (_what, body) => {
    await readAsPhp(TYPE, body);
  });

  it('the shapes clients send are read, not given up on', async () => {
    expect(await readAsPhp(TYPE, `${named('action', 'edit')}${named('title', 'A b')}--${B}--\r\n`)).toBe('form');
    expect(await readAsPhp(TYPE, `${part('Content-Disposition: form-data; name="file"; filename="a.png"\r\nContent-Type: image/png', 'x')}--${B}--\r\n`)).toBe(
      'form',
    );
  });
});

describe('generated multipart bodies', () => {
  const headerLine = fc.constantFrom(
    'Content-Disposition: form-data; name="title"',
    'Content-Disposition: form-data; name="action"',
    'Content-Disposition: form-data; name="x"; filename="f"',
    'Content-Disposition: form-data; name="action"; filename=""',
    'Content-Disposition: form-data; name="title"; filename="t.png"',
    'Content-Disposition: form-data; name=title',
    "Content-Disposition: form-data; name='title'",
    'Content-Disposition: form-data; name="title"; name="x"',
    'Content-Disposition: form-data',
    'content-disposition:form-data;name="action"',
    'Content-Type: text/plain',
    ' name="title"',
    'X-Other: 1',
  );
  const value = fc.constantFrom('', 'A', 'edit', 'a b', `--${B}`, `x\r\n--${B}x`, '\r', 'A\r\nB');
  const eol = fc.constantFrom('\r\n', '\n');
  // Mostly parts both read (so that the comparison is not only of bodies given up on), then
  // anything the pieces make.
  const plain = fc
    .tuple(fc.constantFrom('action', 'title', 'x', 'other'), value, eol)
    .map(([n, v, e]) => `--${B}${e}Content-Disposition: form-data; name="${n}"${e}${e}${v}${e}`);
  const piece = fc.oneof(
    { arbitrary: plain, weight: 4 },
    fc.tuple(fc.array(headerLine, { minLength: 0, maxLength: 3 }), value, eol).map(([h, v, e]) => `--${B}${e}${h.join(e)}${e}${e}${v}${e}`),
    // No value line: the delimiter right after the headers' empty line.
    fc.tuple(fc.array(headerLine, { minLength: 1, maxLength: 2 }), eol).map(([h, e]) => `--${B}${e}${h.join(e)}${e}${e}`),
    fc.constantFrom(`--${B}--\r\n`, `--${B}x\r\n`, 'junk\r\n', '\r\n'),
  );
  it('read as PHP reads them, or not at all', async () => {
    const kinds = new Map<string, number>();
    await fc.assert(
      fc.asyncProperty(fc.array(piece, { minLength: 1, maxLength: 5 }), fc.boolean(), async (pieces, closed) => {
        const kind = await readAsPhp(`multipart/form-data; boundary=${B}`, pieces.join('') + (closed ? `--${B}--\r\n` : ''));
        kinds.set(kind, (kinds.get(kind) ?? 0) + 1);
      }),
      fcOptions,
    );
    // Not a comparison that holds only because every body was given up on.
    expect(kinds.get('form') ?? 0).toBeGreaterThan(0);
  }, 60_000);
});
