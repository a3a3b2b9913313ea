/**
 * parseFormattedSize against what MediaWiki 1.39.17 itself writes (Language::formatSize for all 469
 * languages, generated with the Debian package: test/fixtures/debuginfo/formatsize-all-languages).
 */
import { describe, expect, it } from 'vitest';
import { parseFormattedSize } from '../../src/mediawiki/debuginfo/size.js';
import { debuginfoFixture as fixture } from '../support/debuginfo-fixtures.js';

const MiB = 1024 * 1024;

/** Language::formatComputingNumbers( $n, 1024, … ) without the text: the value the text stands for. */
function mediawikiRounded(n: number): number {
  if (n <= 0) return n;
  let i = 0;
  let v = n;
  while (v >= 1024 && i < 10) {
    v /= 1024;
    i++;
  }
  const places = i > 1 ? 2 : 0;
  return (Math.round(v * 10 ** places) / 10 ** places) * 1024 ** i;
}

describe('parseFormattedSize', () => {
  it.each([
    // uselang=en (and the captures): base 1024, bytes/KB whole, MB two decimals, "1 bytes" (PLURAL never sees the number)
    ['512 bytes', 512],
    ['1 bytes', 1],
    ['1,009 bytes', 1009],
    ['2 KB', 2048],
    ['1,024 KB', 1024 * 1024],
    ['1.29 MB', 1.29 * MiB],
    ['2.5 MB', 2.5 * MiB],
    ['1,000 GB', 1000 * 1024 ** 3],
    // real memory values from the lab wiki, uselang=…
    ['1,6 MB', 1.6 * MiB], // de
    ['1.009 Bytes', 1009], // de
    ['2,57 Mio', 2.57 * MiB], // fr: "$1 Mio", U+202F between number and unit
    ['1\u00a0009\u202foctet', 1009], // fr: NBSP groups thousands
    ['١٫٥٥ ميجابايت', 1.55 * MiB], // ar: Arabic-Indic digits, U+066B decimal
    ['١٬٠٠٩ بايت', 1009], // ar: U+066C groups
    ['۲٫۵۸ مگابایت', 2.58 * MiB], // fa
    ['१.६ MB', 1.6 * MiB], // hi: Devanagari digits
    ['१,००९ B', 1009], // hi
    ['2,58 МБ', 2.58 * MiB], // ru
    ['1009 байт', 1009], // ru: no grouping under 10 000
    ['一點六 MB', 1.6 * MiB], // lzh: CJK numerals, 點 as decimal point
    ['一〇〇九 位元組', 1009], // lzh
    ['1.55メガバイト', 1.55 * MiB], // ja: no space
    ['1.6 מ"ב', 1.6 * MiB], // he
    ["1'234 KB", 1234 * 1024], // de-ch grouping
    ['MB 1.29', 1.29 * MiB], // lg: unit first
  ])('%j → %d', (text, bytes) => {
    expect(parseFormattedSize(text)).toBeCloseTo(bytes, 6);
  });

  it.each([
    ['بائٹ', 'ur: size-bytes has no $1, so there is no number at all'],
    ['1.5 KB', 'KB is rounded to whole numbers, so "." must group thousands'],
    ['1,2345 MB', 'not a MediaWiki number'],
    ['12 parsecs', 'unknown unit'],
    ['1.29', 'no unit'],
    ['GB 1,29 \\', 'ses writes a stray backslash after the number'],
    ['', 'empty'],
    ['1 MB 2 MB', 'two numbers'],
  ])('%j → undefined (%s)', (text) => {
    expect(parseFormattedSize(text)).toBeUndefined();
  });

  it('reads formatSize() output of every language MediaWiki 1.39 ships, bar a known few', () => {
    const data = JSON.parse(fixture('formatsize-all-languages.json.gz').toString('utf8')) as {
      mediawiki: string;
      sizes: number[];
      languages: Record<string, string[]>;
    };
    expect(data.mediawiki).toBe('1.39.17');
    const wrong: string[] = [];
    const unread: string[] = [];
    let read = 0;
    for (const [code, texts] of Object.entries(data.languages)) {
      texts.forEach((text, k) => {
        const got = parseFormattedSize(text);
        const want = mediawikiRounded(data.sizes[k]!);
        if (got === undefined) unread.push(`${code}:${text}`);
        else if (Math.abs(got - want) > 1e-6 * Math.max(1, want)) wrong.push(`${code}:${text}=${got}≠${want}`);
        else read++;
      });
    }
    expect(Object.keys(data.languages).length).toBe(469);
    // krc translates size-gigabytes as "$1 МБ" (the MB unit): read as MB, like every other Cyrillic wiki.
    expect(wrong.filter((w) => !w.startsWith('krc:'))).toEqual([]);
    expect(wrong.filter((w) => w.startsWith('krc:')).length).toBeGreaterThan(0);
    // Unreadable, on purpose: ur, khw and skr-arab write "بائٹ" with no number (size-bytes lacks $1),
    // and ses writes a stray backslash after its GB values.
    expect(unread.filter((u) => !u.endsWith(':بائٹ') && !/^ses:GB .+ \\$/u.test(u))).toEqual([]);
    expect(new Set(unread.map((u) => u.split(':')[0]))).toEqual(new Set(['ur', 'khw', 'skr-arab', 'ses']));
    expect(read).toBeGreaterThan(7400);
  });
});
