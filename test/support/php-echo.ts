/**
 * A real PHP to compare against: runs test/support/php-echo/index.php under `php -S` and sends it
 * raw requests, so tests can check src/mediawiki/php-input.ts and php-post.ts against PHP's own
 * `$_GET`, `$_POST` and `$_COOKIE`.
 *
 * Requests go over a plain `net` socket, written as latin1 bytes, so nothing normalises the
 * request target or the Cookie header(s) on the way. Strings are byte strings like in
 * src/mediawiki/php-input.ts: one byte per UTF-16 code unit.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { PhpArray } from '../../src/mediawiki/php-input.js';

const ECHO_DIR = path.join(path.dirname(fileURLToPath(import.meta.url)), 'php-echo');

/** One entry of the echo script's ordered pair-list encoding (hex bytes; see index.php). */
interface EchoEntry {
  k: string;
  i?: boolean;
  v?: string;
  a?: EchoEntry[];
}

export interface PhpEchoResult {
  /** `$_GET` as PHP built it. */
  get: PhpArray;
  /** `$_POST` as PHP built it (empty for a GET). */
  post: PhpArray;
  /** `$_COOKIE` as PHP built it. */
  cookie: PhpArray;
  /** `$_SERVER['QUERY_STRING']`: the raw query string PHP parsed. */
  query: string;
  /** `$_SERVER['HTTP_COOKIE']`: the Cookie value PHP parsed, or null without one. */
  cookieHeader: string | null;
  /** Keys PHP made integers, as paths like `a/5` (for checking the key-spelling rule). */
  integerKeys: string[];
  /** MediaWiki's WebRequest::getAcceptLang() of the Accept-Language PHP received: [code, q] by q. */
  acceptLang: [string, number][];
}

export interface PhpEcho {
  readonly port: number;
  readonly pid: number;
  /**
   * GET `target` (sent verbatim, e.g. `/?a.b=1&c[]=2`) with one `Cookie:` line per element of
   * `cookieHeaders` (also verbatim).
   */
  request(target: string, cookieHeaders?: readonly string[]): Promise<PhpEchoResult>;
  /** GET `/` with this Accept-Language header (latin1 bytes), sent verbatim. */
  acceptLanguage(header: string): Promise<PhpEchoResult>;
  /** POST `body` (latin1 bytes) with this Content-Type header, sent verbatim. */
  post(target: string, contentType: string, body: string): Promise<PhpEchoResult>;
  stop(): Promise<void>;
}

export interface PhpEchoOptions {
  /** php binary (default: `php` on PATH). */
  php?: string;
  /** Extra `-d` ini settings, e.g. `{ max_input_vars: '5' }`. */
  ini?: Record<string, string>;
}

/** Ordered, nested pairs for exact comparisons (Map equality in test matchers ignores order). */
export type PhpPairs = Array<[string, string | PhpPairs]>;

export function toPairs(arr: PhpArray): PhpPairs {
  const out: PhpPairs = [];
  for (const [k, v] of arr) out.push([k, typeof v === 'string' ? v : toPairs(v)]);
  return out;
}

function hexToBytes(hex: string): string {
  return Buffer.from(hex, 'hex').toString('latin1');
}

function decodeEntries(entries: EchoEntry[], prefix: string, intKeys: string[]): PhpArray {
  const out: PhpArray = new Map();
  for (const e of entries) {
    const key = hexToBytes(e.k);
    if (e.i) intKeys.push(prefix + key);
    if (e.a !== undefined) out.set(key, decodeEntries(e.a, `${prefix}${key}/`, intKeys));
    else out.set(key, hexToBytes(e.v ?? ''));
  }
  return out;
}

async function freePort(): Promise<number> {
  const srv = net.createServer();
  srv.listen(0, '127.0.0.1');
  await once(srv, 'listening');
  const addr = srv.address();
  const port = typeof addr === 'object' && addr !== null ? addr.port : 0;
  await new Promise<void>((resolve) => srv.close(() => resolve()));
  return port;
}

/** Sends raw bytes, returns the whole response (php -S closes the connection after it). */
function rawExchange(port: number, request: string, timeoutMs = 10_000): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    const sock = net.connect({ host: '127.0.0.1', port });
    sock.setTimeout(timeoutMs, () => sock.destroy(new Error(`php -S did not answer within ${timeoutMs} ms`)));
    sock.on('connect', () => sock.end(Buffer.from(request, 'latin1')));
    sock.on('data', (c: Buffer) => chunks.push(c));
    sock.on('error', reject);
    sock.on('close', () => resolve(Buffer.concat(chunks)));
  });
}

function dechunk(body: Buffer): Buffer {
  const parts: Buffer[] = [];
  let pos = 0;
  for (;;) {
    const lineEnd = body.indexOf('\r\n', pos);
    if (lineEnd === -1) throw new Error('bad chunked body');
    const size = Number.parseInt(body.subarray(pos, lineEnd).toString('latin1'), 16);
    if (!(size > 0)) return Buffer.concat(parts);
    parts.push(body.subarray(lineEnd + 2, lineEnd + 2 + size));
    pos = lineEnd + 2 + size + 2;
  }
}

function parseResponse(raw: Buffer): PhpEchoResult {
  const headEnd = raw.indexOf('\r\n\r\n');
  if (headEnd === -1) throw new Error(`no HTTP response from php -S: ${JSON.stringify(raw.toString('latin1'))}`);
  const head = raw.subarray(0, headEnd).toString('latin1');
  let body = raw.subarray(headEnd + 4);
  const status = head.slice(0, head.indexOf('\r\n'));
  if (!/^HTTP\/1\.[01] 200 /.test(status)) throw new Error(`php -S answered ${status}`);
  if (/^transfer-encoding:\s*chunked\s*$/im.test(head)) body = dechunk(body);
  const json = JSON.parse(body.toString('utf8')) as {
    get: EchoEntry[];
    post: EchoEntry[];
    cookie: EchoEntry[];
    query: string;
    cookieHeader: string | null;
    acceptLang: [string, number][];
  };
  const integerKeys: string[] = [];
  const get = decodeEntries(json.get, 'get:', integerKeys);
  const post = decodeEntries(json.post, 'post:', integerKeys);
  const cookie = decodeEntries(json.cookie, 'cookie:', integerKeys);
  return {
    get,
    post,
    cookie,
    query: hexToBytes(json.query),
    cookieHeader: json.cookieHeader === null ? null : hexToBytes(json.cookieHeader),
    integerKeys,
    acceptLang: json.acceptLang.map(([code, q]) => [hexToBytes(code), q]),
  };
}

async function waitUntilServing(port: number, child: ChildProcess, deadlineMs: number): Promise<void> {
  const deadline = Date.now() + deadlineMs;
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null) {
      throw new Error(`php -S exited early (code ${child.exitCode}, signal ${child.signalCode})`);
    }
    try {
      parseResponse(await rawExchange(port, 'GET /?ready HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n'));
      return;
    } catch (err) {
      if (Date.now() > deadline) throw err;
      await new Promise((r) => setTimeout(r, 50));
    }
  }
}

/**
 * Starts `php -S 127.0.0.1:<free port> index.php` (the script is the router, so every target
 * reaches it). The ini settings that shape parsing are pinned to PHP 8.2's defaults, and errors
 * are not displayed (a max_input_vars warning would otherwise land in the JSON body).
 */
export async function startPhpEcho(options: PhpEchoOptions = {}): Promise<PhpEcho> {
  const ini: Record<string, string> = {
    display_errors: '0',
    display_startup_errors: '0',
    log_errors: '0',
    variables_order: 'GPCS',
    'arg_separator.input': '&',
    max_input_vars: '1000',
    max_input_nesting_level: '64',
    ...options.ini,
  };
  let lastError: unknown;
  for (let attempt = 0; attempt < 3; attempt++) {
    const port = await freePort();
    const args = [...Object.entries(ini).flatMap(([k, v]) => ['-d', `${k}=${v}`])];
    args.push('-S', `127.0.0.1:${port}`, 'index.php');
    const env = { ...process.env };
    // One worker: requests are answered in order by a single process.
    delete env.PHP_CLI_SERVER_WORKERS;
    const child = spawn(options.php ?? 'php', args, { cwd: ECHO_DIR, stdio: 'ignore', env });
    const spawned = new Promise<void>((resolve, reject) => {
      child.once('spawn', () => resolve());
      child.once('error', reject);
    });
    try {
      await spawned;
      await waitUntilServing(port, child, 10_000);
    } catch (err) {
      lastError = err;
      await stopChild(child);
      continue;
    }
    const pid = child.pid!;
    return {
      port,
      pid,
      async request(target, cookieHeaders = []) {
        if (/[\r\n]/.test(target) || cookieHeaders.some((c) => /[\r\n]/.test(c))) {
          throw new Error('CR/LF in a request line or header would split the request');
        }
        const lines = [`GET ${target} HTTP/1.1`, 'Host: 127.0.0.1'];
        for (const c of cookieHeaders) lines.push(`Cookie: ${c}`);
        lines.push('Connection: close', '', '');
        return parseResponse(await rawExchange(port, lines.join('\r\n')));
      },
      async acceptLanguage(header) {
        if (/[\r\n]/.test(header)) throw new Error('CR/LF in a header would split the request');
        return parseResponse(
          await rawExchange(port, ['GET / HTTP/1.1', 'Host: 127.0.0.1', `Accept-Language: ${header}`, 'Connection: close', '', ''].join('\r\n')),
        );
      },
      async post(target, contentType, body) {
        if (/[\r\n]/.test(target) || /[\r\n]/.test(contentType)) throw new Error('CR/LF in a request line or header would split the request');
        const head = [`POST ${target} HTTP/1.1`, 'Host: 127.0.0.1', `Content-Type: ${contentType}`, `Content-Length: ${Buffer.byteLength(body, 'latin1')}`];
        return parseResponse(await rawExchange(port, [...head, 'Connection: close', '', body].join('\r\n')));
      },
      stop: () => stopChild(child),
    };
  }
  throw new Error(`could not start php -S: ${String(lastError)}`);
}

/** Ends the php process this module started (by its pid) and waits for it to exit. */
async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null || child.pid === undefined) return;
  const exited = once(child, 'exit');
  process.kill(child.pid, 'SIGTERM');
  const timer = setTimeout(() => {
    if (child.exitCode === null && child.signalCode === null && child.pid !== undefined) {
      process.kill(child.pid, 'SIGKILL');
    }
  }, 3000);
  await exited;
  clearTimeout(timer);
}
