/**
 * Turns MediaWiki's `debuginfo` block into Prometheus metrics.
 *
 * `memory`, `memoryPeak` and each `includes[].size` are `Language::formatSize()` output in the
 * *user* language (`uselang`), e.g. "1.29 MB", "1,29 MB" (de), "1,29 Mio" (fr, with U+202F),
 * "١٫٢٩ ميجابايت" (ar). MediaWiki 1.39 (`Language::formatComputingNumbers( $size, 1024, "size-$1bytes" )`):
 *   - base **1024**; the unit advances while the value is >= 1024, so the number is below 1024
 *     (1024 itself after rounding, e.g. "1,024 KB" for 1048575 bytes);
 *   - bytes and KB are rounded to whole numbers, MB and above to 2 decimals;
 *   - the message `size-bytes`/`size-kilobytes`/… is fetched with `$1` unsubstituted, so PLURAL
 *     always picks the "other" form ("1 bytes"), and then `formatNum()` output replaces `$1`:
 *     localised digits (digitTransformTable) and separators (separatorTransformTable / ICU).
 */
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import { DEBUGINFO_FORMATS, type DebuginfoFormat } from './strip.js';

// ---------------------------------------------------------------- parseFormattedSize

/**
 * Unit texts per power of 1024, as MediaWiki 1.39.17 renders `size-*bytes` for all 469 languages of
 * `LanguageNameUtils::getLanguageNames( null, 'mwfile' )` (generated with the Debian package; number
 * removed, spaces collapsed). Where languages disagree the majority wins: krc says "МБ" for GB.
 * Exabytes and above: the English symbols only.
 */
const UNIT_TABLE: readonly (readonly string[])[] = [
  /* size-bytes */ [
    'B',
    'B/O',
    'Byte',
    'Bytes',
    'G',
    'Vi-ngièn-chû',
    'b',
    'bait',
    'baiti',
    'bajtoj',
    'bajtov',
    'bajtova',
    'bajtów',
    'bajtů',
    'bayt',
    'bayti',
    'baýt',
    'bicoki',
    'biq',
    'bita',
    'byte',
    'bytes',
    'bæti',
    'nga B',
    'o',
    'octet',
    'octeti',
    'octets',
    'octeți',
    'okted',
    'stavâlid',
    'stávvala',
    'tavua',
    'Δ',
    'Б',
    'Б҃',
    'ба̄ййтэ',
    'байт',
    'байт(ы)',
    'байта',
    'байтаў',
    'байтів',
    'бајти',
    'бајтова',
    'բայթ',
    'בתים',
    'ب',
    'بائيٽون',
    'بائٹ',
    'بايت',
    'بايټ',
    'بایت',
    'बा.',
    'बाइट',
    'बाइटअन',
    'बाइटहरू',
    'বাইট',
    'ਬਾਈਟ',
    'బైట్లు',
    'ബൈ',
    'බ',
    'ไบต์',
    'ဘါဧံ',
    'ဘိုက်',
    'ბაიტი',
    'ባይት',
    'បៃ',
    'バイト',
    '位元組',
    '字節',
    '字节',
    '바이트',
  ],
  /* size-kilobytes */ [
    'KB',
    'KB/KO',
    'KByte',
    'KG',
    'Kb',
    'KiB',
    'Kio',
    'Ko',
    'chiliocteti',
    'kB',
    'kb',
    'kbyte',
    'kio',
    'nga KB',
    'ΧΔ',
    'КБ',
    'Кб',
    'Х҃Б',
    'кб',
    'кбайт',
    'ԿԲ',
    'ק"ב',
    'קילאבייטן',
    'كيلوبايت',
    'ک.ب',
    'کلوبائٹ',
    'کيلوبايټ',
    'کِلوبایِٹ',
    'کیلوبایت',
    'کیلۆبایت',
    'कि.बा.',
    'किलोबाइट',
    'किलोबाइटहरू',
    'केबी',
    'কিলোবাইট',
    'കെ.ബി.',
    'කි.බ.',
    'กิโลไบต์',
    'კბ',
    'ኪ.ባ.',
    'គីឡូបៃ',
    'キロバイト',
  ],
  /* size-megabytes */ [
    'MB',
    'MB/MO',
    'MByte',
    'MG',
    'Mb',
    'Mbyte',
    'MiB',
    'Mio',
    'Mo',
    'mb',
    'megaocteti',
    'nga MB',
    'ΜΔ',
    'МБ',
    'Мб',
    'Мбайт',
    'ՄԲ',
    'מ"ב',
    'م.ب',
    'ميجابايت',
    'ميڭابايت',
    'مگابایت',
    'میگا بایِٹ',
    'میگابائٹ',
    'مێگابایت',
    'مېگابايټ',
    'एमबी',
    'मे.बा.',
    'मेगाबाइट',
    'मेगाबाइटहरू',
    'মেগাবাইট',
    'എം.ബി.',
    'මෙ.බ.',
    'เมกะไบต์',
    'მბ',
    'መ.ባ.',
    'មេកាបៃ',
    'メガバイト',
  ],
  /* size-gigabytes */ [
    'GB',
    'GB/GO',
    'GByte',
    'GG',
    'Gb',
    'Gbyte',
    'GiB',
    'Gio',
    'Go',
    'XB',
    'gb',
    'gigaocteti',
    'nga GB',
    'ΓΔ',
    'ГБ',
    'Гб',
    'Гбайт',
    'ԳԲ',
    'ג"ב',
    'جيجابايت',
    'ګېګابايټ',
    'گ.ب',
    'گیگابایت',
    'गि.बा.',
    'गिगाबाइट',
    'गिगाबाइटहरू',
    'जीबी',
    'গিগাবাইট',
    'ജി.ബി.',
    'ගි.බ.',
    'จิกะไบต์',
    'გბ',
    'ጊ.ባ.',
    'ជីកាបៃ',
    'ギガバイト',
  ],
  /* size-terabytes */ [
    'TB',
    'TiB',
    'Tio',
    'ТБ',
    'Тб',
    'ՏԲ',
    'ט"ב',
    'ترابایت',
    'تيرابايت',
    'تێرابایت',
    'ټېرابايټ',
    'टेराबाइट',
    'ടി.ബി.',
    'เทระไบต์',
    'ტბ',
    'テラバイト',
  ],
  /* size-petabytes */ [
    'PB',
    'PiB',
    'Pio',
    'ПБ',
    'Пб',
    'פ"ב',
    'بيتابايت',
    'پێبی\u200cبایت',
    'پېبي بايټ',
    'पीबी',
    'เพตะไบต์',
    'პბ',
    'ペタバイト',
  ],
  /* size-exabytes */ ['EB', 'EiB'],
  /* size-zettabytes */ ['ZB', 'ZiB'],
  /* size-yottabytes */ ['YB', 'YiB'],
  /* size-ronnabytes */ ['RB'],
  /* size-quettabytes */ ['QB'],
];

const UNITS: ReadonlyMap<string, number> = (() => {
  const m = new Map<string, number>();
  UNIT_TABLE.forEach((units, exponent) => {
    for (const u of units) if (!m.has(u)) m.set(u, exponent);
  });
  return m;
})();

/** Code points of the digit zero of every decimal-digit script a MediaWiki digitTransformTable uses (and a few more). */
const DIGIT_ZEROS = [
  0x30, 0x660, 0x6f0, 0x7c0, 0x966, 0x9e6, 0xa66, 0xae6, 0xb66, 0xbe6, 0xc66, 0xce6, 0xd66, 0xde6, 0xe50,
  0xed0, 0xf20, 0x1040, 0x1090, 0x17e0, 0x1810, 0x1946, 0x19d0, 0x1a80, 0x1a90, 0x1b50, 0x1bb0, 0x1c40,
  0x1c50, 0xa8d0, 0xa900, 0xa9d0, 0xa9f0, 0xaa50, 0xabf0, 0xff10,
];
const DIGITS: ReadonlyMap<string, number> = (() => {
  const m = new Map<string, number>();
  for (const zero of DIGIT_ZEROS) for (let d = 0; d < 10; d++) m.set(String.fromCharCode(zero + d), d);
  // lzh (Literary Chinese) writes numbers with CJK numerals and 點 as the decimal point.
  [...'〇一二三四五六七八九'].forEach((c, d) => {
    m.set(c, d);
  });
  return m;
})();

/** Grouping or decimal separators formatNum() writes (`,` `.` U+066B U+066C NBSP NNBSP `'` `’` 點). */
const SEPARATORS = new Set([',', '.', '\u066b', '\u066c', '\u00a0', '\u202f', ' ', "'", '\u2019', '點']);
/** Separators that are only ever decimal marks. */
const DECIMAL_ONLY = new Set(['\u066b', '點']);

/**
 * Bytes from `Language::formatSize()` output in any language MediaWiki 1.39 ships, or undefined
 * when the text is not such output (or is ambiguous: ur writes "بائٹ" for any byte count, with no
 * number at all). The result is as precise as the text: "1.29 MB" → 1.29 × 1024².
 */
export function parseFormattedSize(text: string): number | undefined {
  if (typeof text !== 'string' || text.length === 0 || text.length > 64) return undefined;
  const s = text.normalize('NFC');
  const chars = [...s];
  const first = chars.findIndex((c) => DIGITS.has(c));
  if (first === -1) return undefined;
  // The number: digits, and separators that sit between two digits.
  let end = first;
  const digits: number[] = [];
  const seps: { at: number; char: string }[] = [];
  while (end < chars.length) {
    const c = chars[end]!;
    const d = DIGITS.get(c);
    if (d !== undefined) {
      digits.push(d);
      end++;
    } else if (SEPARATORS.has(c) && end + 1 < chars.length && DIGITS.has(chars[end + 1]!)) {
      seps.push({ at: digits.length, char: c });
      end++;
    } else break;
  }
  const before = chars.slice(0, first).join('').trim();
  const after = chars.slice(end).join('').trim();
  if (before !== '' && after !== '') return undefined;
  const unit = (before || after).split(/\s+/).join(' ');
  const exponent = UNITS.get(unit);
  if (exponent === undefined) return undefined;
  const value = readNumber(digits, seps, exponent >= 2);
  if (value === undefined) return undefined;
  return value * 1024 ** exponent;
}

/**
 * Separators are told apart by position, not by language: bytes and KB are whole numbers, so every
 * separator groups thousands (followed by 3 digits); from MB up the value has at most 2 decimals,
 * so a last separator followed by 1-2 digits is the decimal mark.
 */
function readNumber(
  digits: number[],
  seps: { at: number; char: string }[],
  mayHaveDecimals: boolean,
): number | undefined {
  let decimals = 0;
  let grouping = seps;
  const last = seps[seps.length - 1];
  if (last) {
    const tail = digits.length - last.at;
    if (tail !== 3 || DECIMAL_ONLY.has(last.char)) {
      if (!mayHaveDecimals || tail > 2) return undefined;
      decimals = tail;
      grouping = seps.slice(0, -1);
    }
  }
  const intEnd = digits.length - decimals;
  for (let k = 0; k < grouping.length; k++) {
    const g = grouping[k]!;
    const next = k + 1 < grouping.length ? grouping[k + 1]!.at : intEnd;
    if (next - g.at !== 3 || DECIMAL_ONLY.has(g.char)) return undefined;
    if (grouping[0]!.char !== g.char) return undefined;
  }
  if (decimals > 0 && grouping.length > 0 && grouping[0]!.char === last!.char) return undefined;
  let n = 0;
  for (const d of digits) n = n * 10 + d;
  return n / 10 ** decimals;
}

// ---------------------------------------------------------------- metrics

/** MWDebug's log types (`MWDebug::log` → log, `warning` → warn, `deprecated*` → deprecated). */
export type LogType = 'log' | 'warn' | 'deprecated' | 'other';
export const LOG_TYPES: readonly LogType[] = ['log', 'warn', 'deprecated', 'other'];

/** `ApiMain::setCacheMode()` modes; anything else (a future mode) is `other`. */
export type CacheModeLabel = 'public' | 'anon-public-user-private' | 'private' | 'other';
export const CACHE_MODES: readonly CacheModeLabel[] = [
  'public',
  'anon-public-user-private',
  'private',
  'other',
];

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

function foldCacheMode(m: string): CacheModeLabel {
  return m === 'public' || m === 'anon-public-user-private' || m === 'private' ? m : 'other';
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
        const t =
          q !== null && typeof q === 'object' ? num((q as Record<string, unknown>)['time']) : undefined;
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
        const type = foldLogType(
          entry !== null && typeof entry === 'object'
            ? (entry as Record<string, unknown>)['type']
            : undefined,
        );
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
