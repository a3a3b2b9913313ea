/**
 * parseFormattedSize against what MediaWiki 1.39.17 itself writes (Language::formatSize for all 469
 * languages, generated with the Debian package: test/fixtures/debuginfo/formatsize-all-languages),
 * and DebuginfoMetrics.record() on a real debuginfo block.
 */
import { readFileSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';
import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { DebuginfoMetrics, parseFormattedSize } from '../../src/debuginfo/record.js';
import { stripDebuginfo } from '../../src/debuginfo/strip.js';

const MiB = 1024 * 1024;

function fixture(name: string): Buffer {
  const b = readFileSync(new URL(`../fixtures/debuginfo/${name}`, import.meta.url));
  return name.endsWith('.gz') ? gunzipSync(b) : b;
}

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
        else if (Math.abs(got - want) > 1e-6 * Math.max(1, want))
          wrong.push(`${code}:${text}=${got}≠${want}`);
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

describe('DebuginfoMetrics.record', () => {
  function sumOf(text: string, name: string): number {
    const line = text.split('\n').find((l) => l.startsWith(`${name}_sum `));
    return Number(line?.slice(name.length + 5));
  }

  async function value(registry: Registry, name: string) {
    const m = (await registry.getMetricsAsJSON()).find((x) => x.name === name);
    return m?.values ?? [];
  }

  it('records the figures of a real debuginfo block (capture 61, anonymous siteinfo)', async () => {
    const registry = new Registry();
    const metrics = new DebuginfoMetrics(registry);
    const { debuginfo, format } = stripDebuginfo(fixture('capture-61-siteinfo-fv1.json'), 'application/json');
    metrics.countStripped(format!);
    metrics.record(debuginfo!, 'query+siteinfo');

    const text = await registry.metrics();
    const info = debuginfo!;
    const queries = info['queries'] as { time: number }[];
    const includes = info['includes'] as unknown[];

    expect(text).toContain(`wikiedge_wiki_processing_seconds_sum{module="query+siteinfo"} ${info['time']}`);
    expect(text).toContain(`wikiedge_wiki_sql_queries_sum ${queries.length}`);
    expect(text).toContain(`wikiedge_wiki_included_files_sum ${includes.length}`);
    expect(sumOf(text, 'wikiedge_wiki_sql_seconds')).toBeCloseTo(
      queries.reduce((a, q) => a + q.time, 0),
      12,
    );
    // "memory":"1.5 MB"-style values, base 1024
    const memory = sumOf(text, 'wikiedge_wiki_memory_bytes');
    expect(memory).toBeCloseTo(parseFormattedSize(info['memory'] as string)!, 3);
    expect(memory).toBeGreaterThan(MiB);
    expect(text).toContain('wikiedge_wiki_memory_unparsed_total{field="memory"} 0');
    expect(text).toContain('wikiedge_wiki_log_entries_total{type="log"} 1');
    expect(text).toContain('wikiedge_wiki_log_entries_total{type="warn"} 0');
    // capture 61 has no uselang: downgraded to anon-public-user-private
    expect(text).toContain('wikiedge_wiki_cache_mode_total{mode="anon-public-user-private"} 1');
    expect(text).toContain('wikiedge_wiki_cache_mode_total{mode="public"} 0');
    expect(text).toContain(
      'wikiedge_upstream_info{mw_version="1.39.17",php_engine="PHP",php_version="8.2.35"} 1',
    );
    expect(text).toContain('wikiedge_debuginfo_stripped_total{format="json"} 1');
  });

  it('capture 60 (filearchive) counts the private cache mode', async () => {
    const registry = new Registry();
    const metrics = new DebuginfoMetrics(registry);
    metrics.record(
      stripDebuginfo(fixture('capture-60-filearchive-fv1.json'), 'application/json').debuginfo!,
      'query+filearchive',
    );
    expect(await registry.metrics()).toContain('wikiedge_wiki_cache_mode_total{mode="private"} 1');
  });

  it('keeps only the latest version combination and refuses label values that are not versions', async () => {
    const registry = new Registry();
    const metrics = new DebuginfoMetrics(registry);
    metrics.record({ mwVersion: '1.39.17', phpEngine: 'PHP', phpVersion: '8.2.35' }, 'query');
    metrics.record({ mwVersion: '1.39.18', phpEngine: 'PHP', phpVersion: '8.2.36' }, 'query');
    let series = await value(registry, 'wikiedge_upstream_info');
    expect(series.map((s) => s.labels)).toEqual([
      { mw_version: '1.39.18', php_engine: 'PHP', php_version: '8.2.36' },
    ]);
    metrics.record({ mwVersion: '<script>', phpEngine: 'P H P', phpVersion: 8 }, 'query');
    series = await value(registry, 'wikiedge_upstream_info');
    expect(series.map((s) => s.labels)).toEqual([
      { mw_version: 'unknown', php_engine: 'unknown', php_version: 'unknown' },
    ]);
  });

  it('folds log types and cache modes to closed sets', async () => {
    const registry = new Registry();
    const metrics = new DebuginfoMetrics(registry);
    metrics.record(
      {
        log: [
          { type: 'warn' },
          { type: 'deprecated' },
          { type: 'x'.repeat(300) },
          null,
          'oops',
          { type: 'log' },
        ],
        debugLog: [
          'ApiMain::setCacheMode: setting cache mode public',
          'ApiMain::setCacheMode: setting cache mode private',
          'ApiMain::setCacheMode: setting cache mode totally-new',
          "ApiMain::setCacheMode: downgrading cache mode 'public' to 'anon-public-user-private' due to uselang=user",
          'someone said ApiMain::setCacheMode: setting cache mode public',
          42,
        ],
      },
      'query',
    );
    const text = await registry.metrics();
    expect(text).toContain('wikiedge_wiki_log_entries_total{type="warn"} 1');
    expect(text).toContain('wikiedge_wiki_log_entries_total{type="deprecated"} 1');
    expect(text).toContain('wikiedge_wiki_log_entries_total{type="log"} 1');
    expect(text).toContain('wikiedge_wiki_log_entries_total{type="other"} 3');
    expect(text).toContain('wikiedge_wiki_cache_mode_total{mode="public"} 1');
    expect(text).toContain('wikiedge_wiki_cache_mode_total{mode="private"} 1');
    expect(text).toContain('wikiedge_wiki_cache_mode_total{mode="other"} 1');
    expect(text).toContain('wikiedge_wiki_cache_mode_total{mode="anon-public-user-private"} 0');
  });

  it('never throws on missing or oddly-typed fields; unreadable memory is counted', async () => {
    const registry = new Registry();
    const metrics = new DebuginfoMetrics(registry);
    const odd: Record<string, unknown>[] = [
      {},
      { time: 'soon', queries: 'many', includes: { length: 3 }, log: 7, debugLog: null },
      { time: -1, queries: [null, 5, { time: 'x' }, { time: Number.NaN }], memory: 12, memoryPeak: 'بائٹ' },
      Object.create(null) as Record<string, unknown>,
    ];
    for (const info of odd) expect(() => metrics.record(info, 'query')).not.toThrow();
    expect(() => metrics.record(null as unknown as Record<string, unknown>, 'query')).not.toThrow();
    const text = await registry.metrics();
    expect(text).toContain('wikiedge_wiki_memory_unparsed_total{field="memory"} 1');
    expect(text).toContain('wikiedge_wiki_memory_unparsed_total{field="memoryPeak"} 1');
    expect(text).toContain('wikiedge_wiki_sql_queries_count 1');
    expect(text).toContain('wikiedge_wiki_sql_seconds_sum 0');
    expect(text).not.toContain('wikiedge_wiki_processing_seconds_count{module="query"} 1');
  });

  it('reads XML and PHP blocks the same way as JSON', async () => {
    for (const [name, type] of [
      ['filearchive-xml.on.xml.gz', 'text/xml'],
      ['filearchive-php.on.php.txt.gz', 'application/vnd.php.serialized'],
    ] as const) {
      const registry = new Registry();
      const metrics = new DebuginfoMetrics(registry);
      metrics.record(stripDebuginfo(fixture(name), type).debuginfo!, 'query+filearchive');
      const text = await registry.metrics();
      expect(text).toContain('wikiedge_wiki_memory_unparsed_total{field="memory"} 0');
      expect(text).toContain('wikiedge_wiki_cache_mode_total{mode="private"} 1');
      expect(text).toMatch(/wikiedge_wiki_included_files_sum [1-9][0-9]{2,}/);
      expect(text).toMatch(/wikiedge_wiki_sql_queries_sum [1-9]/);
      expect(text).toContain(
        'wikiedge_upstream_info{mw_version="1.39.17",php_engine="PHP",php_version="8.2.35"} 1',
      );
    }
  });
});
