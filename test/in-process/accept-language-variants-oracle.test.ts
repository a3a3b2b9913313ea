/**
 * src/mediawiki/accept-language.ts variantPreferences against the judge: MediaWiki 1.39's
 * WebRequest::getAcceptLang() run by a real PHP 8.2 under `php -S` (test/support/php-echo). The
 * key holds what variantPreferences returns; it must hold everything LanguageConverter reads of
 * the header: the codes of languages with variants, in getAcceptLang()'s order, with their q. So
 * from the key alone (never the header) this test works out that list as getAcceptLang() builds
 * it (a code's last non-zero q, in its first place, sorted by q as PHP 8's stable arsort does),
 * and it must be PHP's, restricted to those languages.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { VARIANT_LANGUAGES, variantPreferences } from '../../src/mediawiki/accept-language.js';
import { type PhpEcho, startPhpEcho } from '../support/php-echo.js';

const RUNS = Number(process.env.PHP_ORACLE_RUNS ?? 300);

/** getAcceptLang()'s list, worked out from the key alone. */
function fromKey(key: string | undefined): string[] {
  if (key === undefined) return [];
  const q = new Map<string, number>();
  for (const item of key.split(',')) {
    const [code, given] = item.split(';') as [string, string];
    const value = given === '' ? 1 : Number.parseFloat(given);
    if (value !== 0) q.set(code, value);
  }
  return [...q].sort((a, b) => b[1] - a[1]).map(([code]) => code);
}

/** PHP's list, restricted to the languages with variants. */
async function fromPhp(php: PhpEcho, header: string): Promise<string[]> {
  const { acceptLang } = await php.acceptLanguage(header);
  return acceptLang.map(([code]) => code).filter((code) => VARIANT_LANGUAGES.has(code.split('-')[0]!));
}

let php: PhpEcho;
beforeAll(async () => {
  php = await startPhpEcho();
});
afterAll(async () => {
  await php?.stop();
});

describe('Accept-Language: what the key holds is what MediaWiki reads', () => {
  const CASES = [
    'zh-TW',
    'en-US,en;q=0.9',
    'zh-CN,zh;q=0.9,en;q=0.8,zh-TW;q=0.7',
    'en;q=0.9, sr-el',
    // getAcceptLang's pattern cuts a run of letters every eight: the second code is zh-tw.
    'aaaaaaaazh-tw',
    'xzh-tw',
    'zh-tw;q=0, zh-cn',
    'zh-tw;q=0.5, zh-tw;q=0',
    'zh-tw;q=0.5, zh-cn;q=0.5',
    'zh-tw ; q = 0.3,sr',
    // PCRE's \s without /u is ASCII whitespace: a no-break space ends the match before its q.
    'zh-tw\u00a0;q=0, zh-cn',
    'zh-tw;q=1.0000,ike-latn;q=0.9',
    'ZH-HANT;Q=0.8, kk-Arab-CN',
    '*, zh-hk;q=0.1',
    'zh_tw, sr-cyrl',
    'zh-tw;q=0.12345, zh-cn;q=0.1234',
  ];
  it.each(CASES)('%j', async (header) => {
    expect(fromKey(variantPreferences(header))).toEqual(await fromPhp(php, header));
  });

  it('for generated headers', async () => {
    const piece = fc.constantFrom(
      'zh',
      'ZH',
      'tw',
      'cn',
      'sr',
      'el',
      'ike',
      'en',
      'us',
      'a',
      'aaaaaaa',
      '-',
      ',',
      ';',
      'q',
      'Q',
      '=',
      '0',
      '1',
      '.',
      '5',
      ' ',
      '\t',
      '\u00a0',
      '\u0085',
      '*',
      '_',
    );
    await fc.assert(
      fc.asyncProperty(
        fc.array(piece, { minLength: 1, maxLength: 24 }).map((p) => p.join('').trim()),
        async (header) => {
          if (header === '') return;
          expect(fromKey(variantPreferences(header)), JSON.stringify(header)).toEqual(await fromPhp(php, header));
        },
      ),
      { numRuns: RUNS, interruptAfterTimeLimit: 40_000, markInterruptAsFailure: false },
    );
  });
});
