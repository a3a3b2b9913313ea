/**
 * Turns MediaWiki's `debuginfo` block into Prometheus metrics: processing and SQL time, memory
 * (read by size.ts), included files, MWDebug log entries, the cache modes MediaWiki set, the
 * versions it runs, and how many blocks strip.ts removed.
 */
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import { CACHE_MODES, type CacheMode } from '../../words/outcomes.js';
import { parseFormattedSize } from './size.js';
import { DEBUGINFO_FORMATS, type DebuginfoFormat } from './strip.js';

/** MWDebug's log types (`MWDebug::log` → log, `warning` → warn, `deprecated*` → deprecated). */
export type LogType = 'log' | 'warn' | 'deprecated' | 'other';
export const LOG_TYPES: readonly LogType[] = ['log', 'warn', 'deprecated', 'other'];

const CACHE_MODE_LINE = 'ApiMain::setCacheMode: setting cache mode ';
const MIB = 1024 * 1024;
/** "1.39.17", "1.42.0-wmf.5", "8.2.35", "8.2.7-1~deb12u1" */
const VERSION = /^[0-9]{1,4}(?:\.[0-9]{1,4}){0,3}(?:[-+~][0-9A-Za-z.~+-]{1,40})?$/;
const ENGINE = /^[A-Za-z]{1,16}$/;

function num(v: unknown): number | undefined {
  const n = typeof v === 'number' ? v : typeof v === 'string' && v.trim() !== '' ? Number(v) : Number.NaN;
  return Number.isFinite(n) && n >= 0 ? n : undefined;
}

function foldLogType(t: unknown): LogType {
  return t === 'log' || t === 'warn' || t === 'deprecated' ? t : 'other';
}

/**
 * The mode of an `ApiMain::setCacheMode: setting cache mode X` line, in the words of words/outcomes.ts
 * (the same the gateway reads back from the headers); a mode this parser does not know (a future
 * one) is `unknown`.
 */
function foldCacheMode(m: string): CacheMode {
  return m === 'public' || m === 'anon-public-user-private' || m === 'private' ? m : 'unknown';
}

export class DebuginfoMetrics {
  readonly processing: Histogram<'module'>;
  readonly sqlQueries: Histogram;
  readonly sqlSeconds: Histogram;
  readonly memory: Histogram;
  readonly memoryPeak: Histogram;
  readonly memoryUnparsed: Counter<'field'>;
  readonly includedFiles: Histogram;
  readonly logEntries: Counter<'type'>;
  readonly upstreamInfo: Gauge<'mw_version' | 'php_engine' | 'php_version'>;
  readonly cacheModes: Counter<'mode'>;
  readonly stripped: Counter<'format'>;
  private lastInfo = '';

  constructor(registry: Registry) {
    const registers = [registry];
    this.processing = new Histogram({
      name: 'wikiedge_wiki_processing_seconds',
      help: 'MediaWiki processing time per answer, from debuginfo.time.',
      labelNames: ['module'] as const,
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers,
    });
    this.sqlQueries = new Histogram({
      name: 'wikiedge_wiki_sql_queries',
      help: 'SQL queries per answer, from debuginfo.queries.',
      buckets: [0, 1, 2, 5, 10, 20, 50, 100, 200, 500, 1000],
      registers,
    });
    this.sqlSeconds = new Histogram({
      name: 'wikiedge_wiki_sql_seconds',
      help: 'Total SQL time per answer, the sum of debuginfo.queries[].time.',
      buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
      registers,
    });
    const memoryBuckets = [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024].map((m) => m * MIB);
    this.memory = new Histogram({
      name: 'wikiedge_wiki_memory_bytes',
      help: 'PHP memory in use at the end of the request, from debuginfo.memory (base 1024, as rounded by MediaWiki).',
      buckets: memoryBuckets,
      registers,
    });
    this.memoryPeak = new Histogram({
      name: 'wikiedge_wiki_memory_peak_bytes',
      help: 'PHP peak memory of the request, from debuginfo.memoryPeak (base 1024, as rounded by MediaWiki).',
      buckets: memoryBuckets,
      registers,
    });
    this.memoryUnparsed = new Counter({
      name: 'wikiedge_wiki_memory_unparsed_total',
      help: 'debuginfo memory values that could not be read as a size.',
      labelNames: ['field'] as const,
      registers,
    });
    this.includedFiles = new Histogram({
      name: 'wikiedge_wiki_included_files',
      help: 'PHP files included per answer, from debuginfo.includes.',
      buckets: [100, 250, 500, 750, 1000, 1250, 1500, 2000, 3000, 5000],
      registers,
    });
    this.logEntries = new Counter({
      name: 'wikiedge_wiki_log_entries_total',
      help: 'MWDebug log entries by type (log, warn, deprecated, other), from debuginfo.log.',
      labelNames: ['type'] as const,
      registers,
    });
    this.upstreamInfo = new Gauge({
      name: 'wikiedge_upstream_info',
      help: 'Versions the wiki reports in debuginfo (latest combination seen), always 1.',
      labelNames: ['mw_version', 'php_engine', 'php_version'] as const,
      registers,
    });
    this.cacheModes = new Counter({
      name: 'wikiedge_wiki_cache_mode_total',
      help: 'Cache modes MediaWiki set (debugLog "ApiMain::setCacheMode: setting cache mode X").',
      labelNames: ['mode'] as const,
      registers,
    });
    this.stripped = new Counter({
      name: 'wikiedge_debuginfo_stripped_total',
      help: 'Answers from which a debuginfo block was removed, by the format it was found in.',
      labelNames: ['format'] as const,
      registers,
    });
    for (const type of LOG_TYPES) this.logEntries.inc({ type }, 0);
    for (const mode of CACHE_MODES) this.cacheModes.inc({ mode }, 0);
    for (const format of DEBUGINFO_FORMATS) this.stripped.inc({ format }, 0);
    for (const field of ['memory', 'memoryPeak']) this.memoryUnparsed.inc({ field }, 0);
  }

  /** Count one answer whose block was removed (StripResult.format). */
  countStripped(format: DebuginfoFormat): void {
    this.stripped.inc({ format });
  }

  /** Records one parsed debuginfo block. Tolerates missing or oddly-typed fields; never throws. */
  record(info: Record<string, unknown>, moduleLabel: string): void {
    if (info === null || typeof info !== 'object') return;
    const step = (f: () => void) => {
      try {
        f();
      } catch {
        // a metric must never break a request
      }
    };
    step(() => {
      const t = num(info['time']);
      if (t !== undefined) this.processing.observe({ module: String(moduleLabel) }, t);
    });
    step(() => {
      const queries = info['queries'];
      if (!Array.isArray(queries)) return;
      this.sqlQueries.observe(queries.length);
      let total = 0;
      for (const q of queries) {
        const t = q !== null && typeof q === 'object' ? num((q as Record<string, unknown>)['time']) : undefined;
        if (t !== undefined) total += t;
      }
      this.sqlSeconds.observe(total);
    });
    step(() => this.recordMemory(info['memory'], 'memory', this.memory));
    step(() => this.recordMemory(info['memoryPeak'], 'memoryPeak', this.memoryPeak));
    step(() => {
      const includes = info['includes'];
      if (Array.isArray(includes)) this.includedFiles.observe(includes.length);
    });
    step(() => {
      const log = info['log'];
      if (!Array.isArray(log)) return;
      const counts = new Map<LogType, number>();
      for (const entry of log) {
        const type = foldLogType(entry !== null && typeof entry === 'object' ? (entry as Record<string, unknown>)['type'] : undefined);
        counts.set(type, (counts.get(type) ?? 0) + 1);
      }
      for (const [type, n] of counts) this.logEntries.inc({ type }, n);
    });
    step(() => {
      const lines = info['debugLog'];
      if (!Array.isArray(lines)) return;
      for (const line of lines) {
        if (typeof line !== 'string') continue;
        const at = line.indexOf(CACHE_MODE_LINE);
        if (at === -1 || at > 2) continue;
        const mode = line.slice(at + CACHE_MODE_LINE.length).trim();
        this.cacheModes.inc({ mode: foldCacheMode(mode) });
      }
    });
    step(() => {
      const mw = info['mwVersion'];
      const engine = info['phpEngine'];
      const php = info['phpVersion'];
      const labels = {
        mw_version: typeof mw === 'string' && VERSION.test(mw) ? mw : 'unknown',
        php_engine: typeof engine === 'string' && ENGINE.test(engine) ? engine : 'unknown',
        php_version: typeof php === 'string' && VERSION.test(php) ? php : 'unknown',
      };
      const key = `${labels.mw_version}\u0000${labels.php_engine}\u0000${labels.php_version}`;
      if (key === this.lastInfo) return;
      // Only the latest combination is exported: an upgrade replaces the series.
      this.upstreamInfo.reset();
      this.upstreamInfo.set(labels, 1);
      this.lastInfo = key;
    });
  }

  private recordMemory(value: unknown, field: 'memory' | 'memoryPeak', histogram: Histogram): void {
    if (value === undefined) return;
    const bytes = typeof value === 'string' ? parseFormattedSize(value) : undefined;
    if (bytes === undefined) this.memoryUnparsed.inc({ field });
    else histogram.observe(bytes);
  }
}
