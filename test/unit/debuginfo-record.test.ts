/** DebuginfoMetrics.record() on real debuginfo blocks (JSON, XML, PHP) and on odd ones. */
import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { DebuginfoMetrics } from '../../src/mediawiki/debuginfo/record.js';
import { parseFormattedSize } from '../../src/mediawiki/debuginfo/size.js';
import { stripDebuginfo } from '../../src/mediawiki/debuginfo/strip.js';
import { debuginfoFixture as fixture } from '../support/debuginfo-fixtures.js';

const MiB = 1024 * 1024;

describe('DebuginfoMetrics.record', () => {
  function sumOf(text: string, name: string): number {
    const line = text.split('\n').find((l) => l.startsWith(`${name}_sum `));
    return Number(line?.slice(name.length + 5));
  }

  async function value(registry: Registry, name: string) {
    const m = (await registry.getMetricsAsJSON()).find((x) => x.name === name);
    return m?.values ?? [];
  }

  it('records the figures of a real debuginfo block (capture-61-siteinfo-fv1.json, anonymous siteinfo)', async () => {
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
    // capture-61-siteinfo-fv1.json has no uselang: downgraded to anon-public-user-private
    expect(text).toContain('wikiedge_wiki_cache_mode_total{mode="anon-public-user-private"} 1');
    expect(text).toContain('wikiedge_wiki_cache_mode_total{mode="public"} 0');
    expect(text).toContain('wikiedge_upstream_info{mw_version="1.39.17",php_engine="PHP",php_version="8.2.35"} 1');
    expect(text).toContain('wikiedge_debuginfo_stripped_total{format="json"} 1');
  });

  it('capture-60-filearchive-fv1.json (filearchive) counts the private cache mode', async () => {
    const registry = new Registry();
    const metrics = new DebuginfoMetrics(registry);
    metrics.record(stripDebuginfo(fixture('capture-60-filearchive-fv1.json'), 'application/json').debuginfo!, 'query+filearchive');
    expect(await registry.metrics()).toContain('wikiedge_wiki_cache_mode_total{mode="private"} 1');
  });

  it('keeps only the latest version combination and refuses label values that are not versions', async () => {
    const registry = new Registry();
    const metrics = new DebuginfoMetrics(registry);
    metrics.record({ mwVersion: '1.39.17', phpEngine: 'PHP', phpVersion: '8.2.35' }, 'query');
    metrics.record({ mwVersion: '1.39.18', phpEngine: 'PHP', phpVersion: '8.2.36' }, 'query');
    let series = await value(registry, 'wikiedge_upstream_info');
    expect(series.map((s) => s.labels)).toEqual([{ mw_version: '1.39.18', php_engine: 'PHP', php_version: '8.2.36' }]);
    metrics.record({ mwVersion: '<script>', phpEngine: 'P H P', phpVersion: 8 }, 'query');
    series = await value(registry, 'wikiedge_upstream_info');
    expect(series.map((s) => s.labels)).toEqual([{ mw_version: 'unknown', php_engine: 'unknown', php_version: 'unknown' }]);
  });

  it('folds log types and cache modes to closed sets', async () => {
    const registry = new Registry();
    const metrics = new DebuginfoMetrics(registry);
    metrics.record(
      {
        log: [{ type: 'warn' }, { type: 'deprecated' }, { type: 'x'.repeat(300) }, null, 'oops', { type: 'log' }],
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
    // a mode line the parser does not know is counted as words/outcomes.ts's `unknown`
    expect(text).toContain('wikiedge_wiki_cache_mode_total{mode="unknown"} 1');
    expect(text).not.toContain('wikiedge_wiki_cache_mode_total{mode="other"}');
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
      expect(text).toContain('wikiedge_upstream_info{mw_version="1.39.17",php_engine="PHP",php_version="8.2.35"} 1');
    }
  });
});
