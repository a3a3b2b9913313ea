/**
 * The access log: one JSON line per client request, with what nginx's `combined` format and
 * varnishncsa give (client address, method, URL, status, bytes, user agent, duration) and what
 * the gateway adds (cache disposition, module, request id, upstream time, why not stored). And
 * the purge line: what a purge removed, who asked.
 *
 *   {"level":30,"time":1718000000000,"service":"wikiedge","reqId":"…","method":"GET",
 *    "path":"/w/api.php","url":"/w/api.php?action=query&meta=tokens&token=[redacted]",
 *    "module":"query+tokens","cache":"pass","status":200,"ms":12.345,"client":"203.0.113.7",
 *    "ua":"mwn/2.0","bytesIn":172,"bytesOut":912,"upstreamMs":11.9,"pass":"…","msg":"request"}
 *
 * The lines are pino's (the same level, time, bindings and `msg`, through the same destination
 * and its batches, observe/logging.ts), but written here as text: pino's log.info() with an object
 * costs ~4–6 µs of CPU per line in the server (docs/BENCHMARKS.md). Here a request's line is
 * one string concatenation, and a hit's line the bytes of fragments serialised once (per URL
 * and per metrics cell) and of a few per-request values, put straight into the log batch
 * (observe/log-bytes.ts).
 *
 * What never reaches the line: the values of query parameters that carry credentials
 * (redactQuery below); cookies and other headers (only the user agent, bounded).
 */
import pino, { type Logger } from 'pino';
import type { PurgeMessage } from '../words/purge-message.js';
import { putBytes, putFirstBytes, putMicrosAsMillis, putPlainString, putUint } from './log-bytes.js';
import { batchedDestination, LineBuffer } from './logging.js';
import type { AccessLogFormat } from '../config/config.js';
import type { PurgeSource } from './metrics.js';
import type { Disposition, NoStoreReason, PassReason } from '../words/outcomes.js';
import type { RequestCell } from './request-metrics.js';
import type { RequestTarget } from '../words/target.js';
import { redactQuery, redactSubpages } from '../http/redaction.js';

/** The user agent is cut here: enough for any real one, bounded for a client that sends 8 KiB. */
export const MAX_USER_AGENT_CHARS = 256;
/** URLs are logged up to here (the gateway serves up to WIKIEDGE_MAX_URL_BYTES, 8 KiB by default). */
export const MAX_URL_CHARS = 4096;
/** The Host header is cut here. */
export const MAX_HOST_CHARS = 256;

// ------------------------------------------------------------------------------ redaction

export { parameterName, REDACTED, redactQuery, redactSubpages } from '../http/redaction.js';

/** The request target as logged: the query and secret sub-pages redacted, at most MAX_URL_CHARS. */
export function loggedUrl(target: string): string {
  target = redactSubpages(target);
  const q = target.indexOf('?');
  const url = q === -1 ? target : `${target.slice(0, q + 1)}${redactQuery(target.slice(q + 1))}`;
  return url.length > MAX_URL_CHARS ? `${url.slice(0, MAX_URL_CHARS)}…` : url;
}

// ------------------------------------------------------------------------------ JSON text

/** Printable ASCII without `"` and `\`: such a string is its own JSON text between quotes. */
const PLAIN = /^[\x20\x21\x23-\x5b\x5d-\x7e]*$/;

/** A JSON string, quotes included; cheap for the plain strings a request line mostly holds. */
export function jsonString(s: string): string {
  return PLAIN.test(s) ? `"${s}"` : JSON.stringify(s);
}

/** Milliseconds with microsecond precision, as the lines have always carried them. */
function ms(seconds: number): number {
  return Math.round(seconds * 1e6) / 1e3;
}

// ------------------------------------------------------------------------------ the writer

/** Everything a request line says besides what it shares with the others of its URL. */
export interface AccessFacts {
  readonly reqId: string;
  readonly method: string;
  /** The request target as received (origin-form); undefined when there was none to parse. */
  readonly target: string;
  /** The path as received, for the `path` field (what the lines carried before `url`). */
  readonly path: string | undefined;
  readonly module: string;
  readonly disposition: Disposition;
  readonly status: number;
  readonly seconds: number;
  readonly client: string;
  readonly userAgent: string | undefined;
  readonly bytesIn: number;
  readonly bytesOut: number;
  /** The Host header, the Referer, and the HTTP version (`1.1`) as node:http gives them. */
  readonly host?: string | undefined;
  readonly referer?: string | undefined;
  readonly httpVersion?: string | undefined;
  readonly upstreamMs?: number | undefined;
  readonly passReason?: PassReason | undefined;
  readonly notStored?: NoStoreReason | undefined;
  readonly errorCode?: string | undefined;
}

/** pino's internals that a line needs to be one of its lines (pino.symbols, its public API). */
interface PinoInternals {
  readonly [pino.symbols.streamSym]: { write(line: string): unknown };
  readonly [pino.symbols.chindingsSym]: string;
}

const writers = new WeakMap<Logger, AccessLog>();

/** The fixed parts of a hit line, as bytes (JSON names are ASCII). */
const ascii = (s: string): Buffer => Buffer.from(s, 'latin1');
const LINE_START = ascii('{"level":30,"time":');
const MS = ascii(',"ms":');
const CLIENT = ascii(',"client":');
const UA = ascii(',"ua":');
const BYTES_IN = ascii(',"bytesIn":');
const BYTES_OUT = ascii(',"bytesOut":');
const HOST = ascii(',"host":');
const REFERER = ascii(',"referer":');
const PROTOCOLS = new Map([
  ['1.1', ascii(',"protocol":"HTTP/1.1"')],
  ['1.0', ascii(',"protocol":"HTTP/1.0"')],
]);
const TIME_ISO = ascii(',"timeIso":"');
const LINE_END = ascii('","msg":"request"}\n');
/**
 * A hit line's bytes besides its strings: the fixed parts (~170), quotes, five numbers of at
 * most 16 digits, the milliseconds (at most 20 characters) and the ISO time (24).
 */
const HIT_LINE_FIXED_BYTES = 320;

/** Where the access log goes and how its lines read (WIKIEDGE_ACCESS_LOG_FORMAT, WIKIEDGE_ACCESS_LOG_FILE). */
export interface AccessLogOptions {
  readonly format: AccessLogFormat;
  /** A file to append to (reopened by reopenAccessLogs); '' for the logger's own destination. */
  readonly file: string;
}

/**
 * The access-log files open in this process, by name, for SIGUSR1, with how many gateways write
 * to each. One writer per name: a reload builds a new gateway (cluster/generations.ts) while the
 * old one drains, and both append through the same batches, so lines stay whole and in order
 * and a reload opens no second handle. A file no gateway writes to any more is closed: a reload
 * away from it kept its handle and timer, and every SIGUSR1 made it again after logrotate had
 * moved it (test/in-process/reload-moves-the-access-log-only-when-it-succeeds.test.ts).
 */
const openFiles = new Map<string, { readonly buffer: LineBuffer; users: number }>();

/** SIGUSR1: every access-log file is closed and opened again by its name (LineBuffer.reopen). */
export function reopenAccessLogs(): number {
  for (const file of openFiles.values()) file.buffer.reopen();
  return openFiles.size;
}

function fileDestination(name: string): LineBuffer {
  let file = openFiles.get(name);
  if (!file) openFiles.set(name, (file = { buffer: batchedDestination(name), users: 0 }));
  file.users++;
  return file.buffer;
}

function releaseFile(name: string): void {
  const file = openFiles.get(name);
  if (!file || --file.users > 0) return;
  openFiles.delete(name);
  file.buffer.close();
}

export class AccessLog {
  /** `{"level":30` … the bindings of the logger (service, and whatever a child adds). */
  private readonly bindings: string;
  private stream: { write(line: string): unknown };
  /**
   * A URL's line fragment (method, path, url, module, cache), for hits answered again and again;
   * `bytes`, its UTF-8 with the `,"status":` that follows it.
   */
  private readonly fragments = new WeakMap<RequestTarget, { readonly cell: RequestCell; readonly text: string; readonly bytes: Buffer }>();
  /** The batches of standard output (observe/logging.ts), when the logger writes to them: hit lines go in as bytes. */
  private lines: LineBuffer | undefined;
  /** The bindings and the name that follows the time in every line, as bytes. */
  private readonly afterTime: Buffer;
  /** The time of the last hit line written as bytes, and its digits. */
  private lastTime = Number.NaN;
  private readonly lastTimeDigits = new Uint8Array(16);
  private lastTimeLength = -1;

  /** The ISO 8601 form of lastTime, as bytes. */
  private readonly lastIso = Buffer.alloc(24);
  /** The second of the last string line's time, and its ISO 8601 form up to the milliseconds (`2026-11-28T21:40:52.`). */
  private isoSecond = Number.NaN;
  private isoPrefix = '';
  /** The second of the last combined line's time, and its `[28/Nov/2026:21:40:52 +0000]`. */
  private lastSecond = Number.NaN;
  private lastClf = '';
  private readonly format: AccessLogFormat;
  /** WIKIEDGE_ACCESS_LOG_FILE, when it writes to one, and whether close() let go of it. */
  private readonly fileName: string | undefined;
  private closed = false;

  /** A writer per logger, on the logger's own destination, as JSON (a gateway has its own: open()). */
  static of(log: Logger): AccessLog {
    let writer = writers.get(log);
    if (!writer) writers.set(log, (writer = new AccessLog(log, { format: 'json', file: '' })));
    return writer;
  }

  /**
   * A gateway's writer, as its configuration says (gateway/gateway.ts), its own: every
   * generation shares the process's logger, and a reload that failed once its gateway was built
   * had switched the serving one's format and file through it. close() lets go of its file.
   */
  static open(log: Logger, options: AccessLogOptions): AccessLog {
    return new AccessLog(log, options);
  }

  /**
   * Its file let go (closed when no other gateway writes to it). A line of a request still
   * answered after (a retired gateway's, past the grace of a reload) goes to the logger's own
   * destination, never to a closed file.
   */
  close(): void {
    if (this.fileName === undefined || this.closed) return;
    this.closed = true;
    releaseFile(this.fileName);
    this.stream = (this.log as unknown as PinoInternals)[pino.symbols.streamSym];
    this.lines = this.stream instanceof LineBuffer && this.format === 'json' ? this.stream : undefined;
  }

  private constructor(
    private readonly log: Logger,
    options: AccessLogOptions,
  ) {
    const internals = log as unknown as PinoInternals;
    this.format = options.format;
    if (options.file !== '') {
      this.fileName = options.file;
      this.stream = fileDestination(options.file);
    } else {
      this.stream = internals[pino.symbols.streamSym];
    }
    this.bindings = internals[pino.symbols.chindingsSym];
    this.lines = this.stream instanceof LineBuffer && this.format === 'json' ? this.stream : undefined;
    this.afterTime = Buffer.from(`${this.bindings},"reqId":`, 'utf8');
  }

  /** Request lines are `info`: none below that level. */
  get enabled(): boolean {
    return this.log.levelVal <= 30;
  }

  /** A request's line, from its facts. */
  request(f: AccessFacts): void {
    if (!this.enabled) return;
    if (this.format === 'combined') {
      this.stream.write(
        this.combined(Date.now(), f.client, f.method, loggedUrl(f.target), f.httpVersion, f.status, f.bytesOut, f.referer, f.userAgent, f.disposition),
      );
      return;
    }
    const time = Date.now();
    let line =
      `{"level":30,"time":${time}${this.bindings},"reqId":"${f.reqId}"` +
      `,"method":${jsonString(f.method)}` +
      (f.path === undefined ? '' : `,"path":${jsonString(redactSubpages(f.path))}`) +
      `,"url":${jsonString(loggedUrl(f.target))},"module":${jsonString(f.module)},"cache":"${f.disposition}"`;
    line += this.perRequest(time, f.status, f.seconds, f.client, f.userAgent, f.bytesIn, f.bytesOut, f.host, f.referer, f.httpVersion);
    if (f.upstreamMs !== undefined) line += `,"upstreamMs":${f.upstreamMs}`;
    if (f.passReason !== undefined) line += `,"pass":"${f.passReason}"`;
    if (f.notStored !== undefined) line += `,"notStored":"${f.notStored}"`;
    if (f.errorCode !== undefined) line += `,"error":${jsonString(f.errorCode)}`;
    this.stream.write(`${line},"msg":"request"}\n`);
  }

  /**
   * nginx's `combined` line (`$remote_addr - $remote_user [$time_local] "$request" $status
   * $body_bytes_sent "$http_referer" "$http_user_agent"`, varnishncsa's default too) with the
   * cache disposition appended, as operators append `$upstream_cache_status`. Strings escaped
   * as nginx escapes them (`"`, `\` and bytes outside printable ASCII as `\xHH`); the size is
   * the bytes sent on the connection for this answer, headers included (nginx's `$bytes_sent`),
   * which the gateway counts exactly; the time is UTC.
   */
  private combined(
    time: number,
    client: string,
    method: string,
    url: string,
    httpVersion: string | undefined,
    status: number,
    bytesOut: number,
    referer: string | undefined,
    userAgent: string | undefined,
    disposition: Disposition,
  ): string {
    const second = Math.floor(time / 1000);
    if (second !== this.lastSecond) {
      this.lastSecond = second;
      this.lastClf = clfTime(new Date(second * 1000));
    }
    const request = `${clfEscape(method)} ${clfEscape(url)}${httpVersion === undefined ? '' : ` HTTP/${clfEscape(httpVersion)}`}`;
    const ref = referer === undefined ? '-' : clfEscape(loggedUrl(referer));
    const ua = userAgent === undefined ? '-' : clfEscape(userAgent.length > MAX_USER_AGENT_CHARS ? userAgent.slice(0, MAX_USER_AGENT_CHARS) : userAgent);
    return `${clfEscape(client)} - - [${this.lastClf}] "${request}" ${status} ${bytesOut} "${ref}" "${ua}" ${disposition}\n`;
  }

  /**
   * A hit's line on the fresh-hit path: the target is the one the recv step remembered (the
   * same object for every hit of that URL) and the cell the metrics cell of its method, module
   * and disposition (a GET or a HEAD, never an `other` method), so their part of the line is
   * serialised once and kept as long as both are the same.
   */
  hit(
    target: RequestTarget,
    cell: RequestCell,
    reqId: string,
    status: number,
    seconds: number,
    client: string,
    userAgent: string | undefined,
    bytesIn: number,
    bytesOut: number,
    host?: string,
    referer?: string,
    httpVersion?: string,
  ): void {
    if (!this.enabled) return;
    const time = Date.now();
    if (this.format === 'combined') {
      const { method, disposition } = cell.labels;
      this.stream.write(this.combined(time, client, method, loggedUrl(target.upstreamPath), httpVersion, status, bytesOut, referer, userAgent, disposition));
      return;
    }
    let fragment = this.fragments.get(target);
    if (fragment?.cell !== cell) {
      const { method, module, disposition } = cell.labels;
      const text =
        `,"method":${jsonString(method)},"path":${jsonString(redactSubpages(target.rawPath))},"url":${jsonString(loggedUrl(target.upstreamPath))}` +
        `,"module":${jsonString(module)},"cache":"${disposition}"`;
      this.fragments.set(target, (fragment = { cell, text, bytes: Buffer.from(`${text},"status":`, 'utf8') }));
    }
    if (
      this.lines !== undefined &&
      this.hitBytes(this.lines, time, fragment.bytes, reqId, status, seconds, client, userAgent, bytesIn, bytesOut, host, referer, httpVersion)
    )
      return;
    this.stream.write(
      `{"level":30,"time":${time}${this.bindings},"reqId":"${reqId}"${fragment.text}` +
        `${this.perRequest(time, status, seconds, client, userAgent, bytesIn, bytesOut, host, referer, httpVersion)},"msg":"request"}\n`,
    );
  }

  /**
   * The hit line put into the batch as bytes (observe/log-bytes.ts), the same bytes as the string line
   * below, with no string built and nothing allocated: measured in a loop on one core (commit
   * d66076f, /dev/null), ~450 ns a line against ~680 for the string line (concatenated,
   * flattened, then encoded by Buffer#write). False, with nothing written, when a value is not
   * one the byte writers take as it is (a user agent with a quote or non-ASCII character, say):
   * the string line is written instead.
   */
  private hitBytes(
    lines: LineBuffer,
    time: number,
    fragment: Buffer,
    reqId: string,
    status: number,
    seconds: number,
    client: string,
    userAgent: string | undefined,
    bytesIn: number,
    bytesOut: number,
    host: string | undefined,
    referer: string | undefined,
    httpVersion: string | undefined,
  ): boolean {
    // A referer that loggedUrl changes (a query, a secret sub-page such as Special:ConfirmEmail's
    // token, a long one) is written by the string line, which redacts it.
    if (referer !== undefined && loggedUrl(referer) !== referer) return false;
    const protocol = httpVersion === undefined ? undefined : PROTOCOLS.get(httpVersion);
    if (httpVersion !== undefined && protocol === undefined) return false;
    const uaLength = userAgent === undefined ? 0 : Math.min(userAgent.length, MAX_USER_AGENT_CHARS);
    const hostLength = host === undefined ? 0 : Math.min(host.length, MAX_HOST_CHARS);
    const most = HIT_LINE_FIXED_BYTES + this.afterTime.length + fragment.length + reqId.length + client.length + uaLength + hostLength + (referer?.length ?? 0);
    const buf = lines.reserve(most);
    if (buf === null) return false;
    let at = putBytes(buf, lines.batchEnd, LINE_START);
    // Hits close together share their millisecond: its digits are kept, and its ISO form.
    if (time !== this.lastTime) {
      this.lastTimeLength = putUint(this.lastTimeDigits, 0, time);
      this.lastIso.write(new Date(time).toISOString(), 0, 'latin1');
      this.lastTime = time;
    }
    if (this.lastTimeLength < 0) return false;
    at = putFirstBytes(buf, at, this.lastTimeDigits, this.lastTimeLength);
    at = putBytes(buf, at, this.afterTime);
    if ((at = putPlainString(buf, at, reqId)) < 0) return false;
    at = putBytes(buf, at, fragment);
    if ((at = putUint(buf, at, status)) < 0) return false;
    at = putBytes(buf, at, MS);
    if ((at = putMicrosAsMillis(buf, at, Math.round(seconds * 1e6))) < 0) return false;
    at = putBytes(buf, at, CLIENT);
    if ((at = putPlainString(buf, at, client)) < 0) return false;
    if (userAgent !== undefined) {
      at = putBytes(buf, at, UA);
      if ((at = putPlainString(buf, at, userAgent, uaLength)) < 0) return false;
    }
    at = putBytes(buf, at, BYTES_IN);
    if ((at = putUint(buf, at, bytesIn)) < 0) return false;
    at = putBytes(buf, at, BYTES_OUT);
    if ((at = putUint(buf, at, bytesOut)) < 0) return false;
    if (host !== undefined) {
      at = putBytes(buf, at, HOST);
      if ((at = putPlainString(buf, at, host, hostLength)) < 0) return false;
    }
    if (referer !== undefined) {
      at = putBytes(buf, at, REFERER);
      if ((at = putPlainString(buf, at, referer)) < 0) return false;
    }
    if (protocol !== undefined) at = putBytes(buf, at, protocol);
    at = putBytes(buf, at, TIME_ISO);
    at = putBytes(buf, at, this.lastIso);
    lines.commit(putBytes(buf, at, LINE_END));
    return true;
  }

  private perRequest(
    time: number,
    status: number,
    seconds: number,
    client: string,
    userAgent: string | undefined,
    bytesIn: number,
    bytesOut: number,
    host: string | undefined,
    referer: string | undefined,
    httpVersion: string | undefined,
  ): string {
    const ua =
      userAgent === undefined ? '' : `,"ua":${jsonString(userAgent.length > MAX_USER_AGENT_CHARS ? userAgent.slice(0, MAX_USER_AGENT_CHARS) : userAgent)}`;
    const where =
      (host === undefined ? '' : `,"host":${jsonString(host.length > MAX_HOST_CHARS ? host.slice(0, MAX_HOST_CHARS) : host)}`) +
      (referer === undefined ? '' : `,"referer":${jsonString(loggedUrl(referer))}`) +
      (httpVersion === undefined ? '' : `,"protocol":${jsonString(`HTTP/${httpVersion}`)}`);
    return (
      `,"status":${status},"ms":${ms(seconds)},"client":${jsonString(client)}${ua},"bytesIn":${bytesIn},"bytesOut":${bytesOut}` +
      `${where},"timeIso":"${this.isoTime(time)}"`
    );
  }

  /**
   * `new Date(time).toISOString()`, its second's part kept (lines of one second share it): a
   * Date and its formatting per line cost more than the rest of the line's numbers together
   * (bench/micro-miss.mjs accessLogRequest).
   */
  private isoTime(time: number): string {
    const second = Math.floor(time / 1000);
    if (second !== this.isoSecond) {
      this.isoSecond = second;
      this.isoPrefix = new Date(second * 1000).toISOString().slice(0, -4);
    }
    const millis = time - second * 1000;
    return `${this.isoPrefix}${millis < 10 ? '00' : millis < 100 ? '0' : ''}${millis}Z`;
  }
}

// ------------------------------------------------------------------------------ combined

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
const two = (n: number) => (n < 10 ? `0${n}` : `${n}`);

/** nginx's `$time_local` in UTC: `28/Nov/2026:21:40:52 +0000`. */
export function clfTime(d: Date): string {
  return `${two(d.getUTCDate())}/${MONTHS[d.getUTCMonth()]}/${d.getUTCFullYear()}:${two(d.getUTCHours())}:${two(d.getUTCMinutes())}:${two(d.getUTCSeconds())} +0000`;
}

/** As nginx escapes a logged variable: `"`, `\` and characters outside printable ASCII as `\xHH` (UTF-8 bytes). */
export function clfEscape(s: string): string {
  if (PLAIN.test(s)) return s;
  let out = '';
  for (const byte of Buffer.from(s, 'utf8')) {
    out +=
      byte >= 0x20 && byte <= 0x7e && byte !== 0x22 && byte !== 0x5c ? String.fromCharCode(byte) : `\\x${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}

// ------------------------------------------------------------------------------ purges

/** What a purge line says: who asked, what kind, what it named, what it removed. */
export interface PurgeFacts {
  /** Who asked (wikiedge_purge_requests_total's source). */
  readonly source: PurgeSource;
  /** url, module, prefix, all (admin and api.php PURGEs, cache/purge.ts) or page (a page URL's PURGE). */
  readonly kind: string;
  /** The URL key, module, prefix or page title; absent for `all`. */
  readonly what?: string | undefined;
  /** Entries removed from this process's (or, from the admin of a cluster, every worker's) local tier. */
  readonly purged: number;
  /** Entries removed from Redis; null when Redis could not be reached; absent without Redis. */
  readonly redisPurged?: number | null | undefined;
  readonly workers?: number | undefined;
  readonly missedWorkers?: number | undefined;
}

/** A purge message's kind and what it names, for its line. */
export function describePurge(message: PurgeMessage): { readonly kind: string; readonly what?: string } {
  switch (message.kind) {
    case 'url':
      return { kind: 'url', what: message.urlKey };
    case 'module':
      return { kind: 'module', what: message.module };
    case 'prefix':
      return { kind: 'prefix', what: message.prefix };
    case 'pattern':
      return { kind: 'pattern', what: message.pattern };
    case 'slot':
      return { kind: 'slot', what: message.slot };
    case 'user':
      return { kind: 'user', what: message.user };
    case 'tags':
      return { kind: 'tags', what: message.tags.slice(0, 20).join(' ') };
    case 'expire':
      return { kind: 'expire', what: new Date(message.before).toISOString() };
    case 'all':
      return { kind: 'all' };
  }
}

/** The purge line: rare (an operator's or the wiki's purge), so through pino as any other line. */
export function logPurge(log: Logger, facts: PurgeFacts): void {
  log.info(
    {
      source: facts.source,
      kind: facts.kind,
      what: facts.what === undefined ? undefined : loggedUrl(facts.what),
      purged: facts.purged,
      redisPurged: facts.redisPurged,
      workers: facts.workers,
      missedWorkers: facts.missedWorkers,
    },
    'purge',
  );
}
