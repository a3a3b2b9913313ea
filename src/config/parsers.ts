/**
 * The rules a configuration value must follow, one parser per kind of value. Each is given a
 * value that is set (defaults are the table's business, fields.ts) and the key to name in its
 * error; every error names the key and the rule, as @fastify/http-proxy's options do.
 */
import { isIP } from 'node:net';
import { addressEntryProblem } from '../words/address-list.js';
import { ConfigError, parseOr } from './field.js';
import { describeJsonError } from './json-error.js';

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];
export const DEBUGINFO_MODES = ['strip', 'pass', 'off'] as const;
export type DebuginfoMode = (typeof DEBUGINFO_MODES)[number];
export const LOG_FORMATS = ['json', 'pretty'] as const;
export type LogFormat = (typeof LOG_FORMATS)[number];
export const ACCESS_LOG_FORMATS = ['json', 'combined'] as const;
export type AccessLogFormat = (typeof ACCESS_LOG_FORMATS)[number];

/** Per-module override: `ttl` in seconds replaces the wiki's own, `pass` never stores. */
export interface ModuleRule {
  readonly pass?: boolean;
  readonly ttlSeconds?: number;
  /** Store anonymous answers that the wiki marks private (e.g. list=filearchive) in the shared tier. */
  readonly shareAnonymousPrivate?: boolean;
  /**
   * What the module's answers depend on, instead of the gateway's table
   * (policy/dependencies.ts): `pages` (those the request and answer name), `any` (every
   * change), `nothing` (the TTL alone).
   */
  readonly dependsOn?: 'pages' | 'any' | 'nothing';
}

export const DEPENDS_ON = ['pages', 'any', 'nothing'] as const;

export const MiB = 1024 * 1024;

export function str(v: unknown, key: string): string {
  if (typeof v !== 'string') throw new ConfigError(key, 'must be a string');
  return v;
}

export const int =
  (min: number, max: number) =>
  (v: unknown, key: string): number => {
    const n = typeof v === 'number' ? v : typeof v === 'string' && /^-?\d+$/.test(v.trim()) ? Number(v) : NaN;
    if (!Number.isSafeInteger(n) || n < min || n > max) {
      throw new ConfigError(key, `must be an integer from ${min} to ${max}, got ${JSON.stringify(v)}`);
    }
    return n;
  };

export const port = int(0, 65535);

/**
 * A listen address: an IP literal (an IPv6 one with or without brackets), or a host name as
 * RFC 1123 §2.1 spells one, which is resolved when the listener binds. Anything else (a URL, a
 * `host:port`, spaces) is refused here, naming the key, not at the bind.
 */
export function listenHost(v: unknown, key: string): string {
  const s = str(v, key).trim();
  if (isIP(s) !== 0) return s;
  // An IPv6 literal in brackets, as a URL writes it: the address itself.
  const bracketed = /^\[(.+)\]$/.exec(s)?.[1];
  if (bracketed !== undefined && isIP(bracketed) === 6) return bracketed;
  // Labels of letters, digits, `-` and `_` (a container's service name may hold one), and the
  // final dot of a fully qualified name.
  if (
    s.length <= (s.endsWith('.') ? 254 : 253) &&
    /^[A-Za-z0-9_](?:[A-Za-z0-9_-]{0,61}[A-Za-z0-9_])?(?:\.[A-Za-z0-9_](?:[A-Za-z0-9_-]{0,61}[A-Za-z0-9_])?)*\.?$/.test(s)
  )
    return s;
  throw new ConfigError(key, `must be an IP address or a host name (e.g. 0.0.0.0, ::, 127.0.0.1, localhost), got ${JSON.stringify(v)}`);
}

/** A number from 0 to `max`, such as the share of a TTL taken off at random. */
export const fraction =
  (max: number) =>
  (v: unknown, key: string): number => {
    // Number('') and Number(' ') are 0, Number([]) too: only a number or a string that spells one.
    const n = typeof v === 'number' ? v : typeof v === 'string' && v.trim() !== '' ? Number(v) : NaN;
    if (!Number.isFinite(n) || n < 0 || n > max) throw new ConfigError(key, `must be a number from 0 to ${max}, got ${JSON.stringify(v)}`);
    return n;
  };

export function bool(v: unknown, key: string): boolean {
  if (typeof v === 'boolean') return v;
  if (v === 'true' || v === '1') return true;
  if (v === 'false' || v === '0') return false;
  throw new ConfigError(key, 'must be true or false');
}

/**
 * The share of cache hits that get a log line: false (0, the default), true (1) or a fraction.
 * Every request is counted in wikiedge_requests_total whatever this says; a line per hit costs
 * about as much again as the hit itself (docs/BENCHMARKS.md).
 */
export function hitLogShare(v: unknown, key: string): number {
  if (v === false || v === 'false') return 0;
  if (v === true || v === 'true') return 1;
  const n = typeof v === 'number' ? v : typeof v === 'string' && /^(\d+(\.\d*)?|\.\d+)$/.test(v) ? Number(v) : NaN;
  if (!Number.isFinite(n) || n < 0 || n > 1) throw new ConfigError(key, 'must be true, false or a fraction from 0 to 1 (e.g. 0.01)');
  return n;
}

export const oneOf =
  <const T extends string>(allowed: readonly T[]) =>
  (v: unknown, key: string): T => {
    if (typeof v !== 'string' || !(allowed as readonly string[]).includes(v)) {
      throw new ConfigError(key, `must be one of ${allowed.join(', ')}`);
    }
    return v as T;
  };

export function upstreamUrl(v: unknown, key: string): URL {
  const s = str(v, key);
  let url: URL;
  try {
    url = new URL(s);
  } catch {
    throw new ConfigError(key, `must be an absolute http(s) URL, got ${JSON.stringify(s)}`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new ConfigError(key, 'must use http: or https:');
  }
  if (url.pathname !== '/' || url.search || url.hash || url.username || url.password) {
    throw new ConfigError(key, 'must be a bare origin such as http://wiki:80 (no path, query or credentials)');
  }
  return url;
}

/** `$wgArticlePath`: a path holding `$1` where the title goes, e.g. /wiki/$1. */
export function articlePath(v: unknown, key: string): string {
  const s = str(v, key);
  if (!/^\/[A-Za-z0-9._~/$-]*$/.test(s) || s.split('$1').length !== 2) throw new ConfigError(key, 'must be an absolute path holding $1 once, such as /wiki/$1');
  return s;
}

export function apiPath(v: unknown, key: string): string {
  const s = str(v, key);
  if (!/^\/[A-Za-z0-9._~/-]*$/.test(s) || s.includes('//') || s.includes('/./') || s.includes('/../')) {
    throw new ConfigError(key, 'must be a normalised absolute path such as /w/api.php');
  }
  return s;
}

export function cookieName(v: unknown, key: string): string {
  const s = str(v, key);
  // PHP rewrites `.` and space in cookie names; a prefix containing them could never match.
  if (s !== '' && !/^[A-Za-z0-9_-]+$/.test(s)) throw new ConfigError(key, 'may hold only A-Z a-z 0-9 _ -');
  return s;
}

/** A comma-separated string (the environment) or a list (the file), trimmed, empty items dropped. */
function listItems(v: unknown, key: string, what: string): string[] {
  // A list in the file holds strings (or numbers, as YAML reads a bare port or digits): `null`,
  // a map or a nested list is no item, not the text "null".
  if (Array.isArray(v) && !v.every((x) => typeof x === 'string' || typeof x === 'number'))
    throw new ConfigError(key, `must be a list of ${what}, got ${JSON.stringify(v.find((x) => typeof x !== 'string' && typeof x !== 'number'))} in it`);
  const items = Array.isArray(v) ? v.map(String) : typeof v === 'string' ? v.split(',') : null;
  if (!items) throw new ConfigError(key, `must be a comma-separated list of ${what}`);
  return items.map((s) => s.trim()).filter((s) => s !== '');
}

/**
 * A comma-separated list of cookie names as PHP stores them (`.` and space become `_`), each
 * optionally ending in `*` (a prefix).
 */
export function cookieNameList(v: unknown, key: string): readonly string[] {
  return listItems(v, key, 'cookie names').map((s) => {
    if (!/^[!#$%&'+\-^_`|~0-9A-Za-z]+\*?$/.test(s) || s === '*')
      throw new ConfigError(key, `must list cookie names (RFC 6265 tokens, optionally ending in *), got ${JSON.stringify(s)}`);
    return s;
  });
}

/** Query parameter names as PHP names them (`$_GET` keys: case-sensitive, no `.` or space, no brackets). */
export function parameterNameList(v: unknown, key: string): readonly string[] {
  return listItems(v, key, 'query parameter names').map((s) => {
    if (!/^[A-Za-z0-9_-]+$/.test(s)) throw new ConfigError(key, `must list query parameter names (letters, digits, _ and -), got ${JSON.stringify(s)}`);
    return s;
  });
}

export function headerNameList(v: unknown, key: string): readonly string[] {
  return listItems(v, key, 'header names')
    .map((s) => s.toLowerCase())
    .map((s) => {
      if (!/^[!#$%&'*+\-.^_`|~0-9a-z]+$/.test(s)) throw new ConfigError(key, `must list header names, got ${JSON.stringify(s)}`);
      if (s === 'cookie') throw new ConfigError(key, 'must not list cookie (cookies are named in WIKIEDGE_CREDENTIAL_COOKIES)');
      return s;
    });
}

export function addressList(v: unknown, key: string): readonly string[] {
  return listItems(v, key, 'IP addresses or CIDR ranges').map((s) => {
    const problem = addressEntryProblem(s);
    if (problem) throw new ConfigError(key, `must list IP addresses or CIDR ranges (e.g. 10.0.0.0/8): ${problem}`);
    return s;
  });
}

export function adminToken(v: unknown, key: string): string {
  if (typeof v !== 'string' || v.length < 16 || /\s/.test(v)) throw new ConfigError(key, 'must be at least 16 characters, without whitespace');
  return v;
}

export function hmacKey(v: unknown, key: string): Buffer {
  if (typeof v !== 'string' || v.length < 16) throw new ConfigError(key, 'must be at least 16 characters');
  return Buffer.from(v, 'utf8');
}

/** An integer from `min` to `max`, or `auto`: a value derived from other keys where it is used. */
export const intOrAuto =
  (min: number, max: number) =>
  (v: unknown, key: string): number | 'auto' => {
    if (typeof v === 'string' && v.trim() === 'auto') return 'auto';
    try {
      return int(min, max)(v, key);
    } catch {
      throw new ConfigError(key, `must be auto or an integer from ${min} to ${max}, got ${JSON.stringify(v)}`);
    }
  };

/** A positive integer up to `max`, or `auto`: one per CPU this process may use. */
export const workerCount =
  (max: number, cpus: () => number) =>
  (v: unknown, key: string): number => {
    if (typeof v === 'string' && v.trim() === 'auto') return Math.min(cpus(), max);
    try {
      return int(1, max)(v, key);
    } catch {
      throw new ConfigError(key, `must be auto or an integer from 1 to ${max}, got ${JSON.stringify(v)}`);
    }
  };

export function redisUrl(v: unknown, key: string): string {
  const s = str(v, key);
  let url: URL;
  try {
    url = new URL(s);
  } catch {
    throw new ConfigError(key, 'must be a redis:// or rediss:// URL');
  }
  if (url.protocol !== 'redis:' && url.protocol !== 'rediss:') throw new ConfigError(key, 'must be a redis:// or rediss:// URL');
  if (!url.hostname) throw new ConfigError(key, 'must name a host');
  if (url.pathname !== '' && url.pathname !== '/' && !/^\/\d{1,2}$/.test(url.pathname))
    throw new ConfigError(key, 'may end only in a database number, e.g. /0');
  return s;
}

/**
 * `host:port`, `[v6]:port`: an address of a Sentinel or of a cluster's seed node, split. The port
 * is required (Sentinels listen on 26379 by convention, data nodes on 6379: no default would be
 * right for both).
 */
export function splitHostPort(s: string): { host: string; port: number } | undefined {
  const m = /^(?:\[([0-9A-Fa-f:.]+)\]|([A-Za-z0-9._-]+)):(\d{1,5})$/.exec(s);
  if (!m) return undefined;
  const port = Number(m[3]);
  if (port < 1 || port > 65535) return undefined;
  return { host: m[1] ?? m[2]!, port };
}

/** A comma-separated list (or a list in the file) of `host:port`, at least one. */
export function hostPortList(v: unknown, key: string): readonly string[] {
  const items = listItems(v, key, 'host:port addresses');
  for (const s of items) {
    if (!splitHostPort(s)) throw new ConfigError(key, `must list host:port addresses (e.g. sentinel-1:26379, [::1]:26379), got ${JSON.stringify(s)}`);
  }
  if (items.length === 0) throw new ConfigError(key, 'must list at least one host:port address');
  return items;
}

/** The name Sentinels monitor a primary under (`sentinel monitor <name> <host> <port> <quorum>`). */
export function sentinelMasterName(v: unknown, key: string): string {
  const s = str(v, key);
  if (!/^[A-Za-z0-9._-]{1,128}$/.test(s)) throw new ConfigError(key, 'may hold only A-Z a-z 0-9 _ . - (1 to 128), as in `sentinel monitor <name> ...`');
  return s;
}

/** A password or user name for Redis (AUTH): any text without line breaks. */
export function redisCredential(v: unknown, key: string): string {
  const s = str(v, key);
  if (/[\r\n]/.test(s)) throw new ConfigError(key, 'must not hold a line break');
  return s;
}

export function redisKeyPrefix(v: unknown, key: string): string {
  const s = str(v, key);
  if (!/^[A-Za-z0-9_.:-]{1,64}$/.test(s)) throw new ConfigError(key, 'may hold only A-Z a-z 0-9 _ . : - (1 to 64)');
  return s;
}

const MODULE_RULE_KEYS = ['pass', 'ttlSeconds', 'shareAnonymousPrivate', 'dependsOn'];

/** A JSON object (the environment) or a mapping (the file) of module name to ModuleRule. */
export function moduleRules(v: unknown, key: string): Readonly<Record<string, ModuleRule>> {
  let table: unknown = v;
  if (typeof v === 'string') {
    try {
      table = JSON.parse(v);
    } catch {
      throw new ConfigError(key, `must be a JSON object of module name to rule: not valid JSON ${describeJsonError(v)}`);
    }
  }
  if (typeof table !== 'object' || table === null || Array.isArray(table)) {
    throw new ConfigError(key, 'must be an object of module name to rule');
  }
  const out: Record<string, ModuleRule> = {};
  for (const [name, rule] of Object.entries(table)) {
    const where = `${key}.${name}`;
    if (typeof rule !== 'object' || rule === null) throw new ConfigError(where, 'must be an object');
    const r = rule as Record<string, unknown>;
    for (const k of Object.keys(r)) {
      if (!MODULE_RULE_KEYS.includes(k)) {
        throw new ConfigError(`${where}.${k}`, `is not a known rule (${MODULE_RULE_KEYS.join(', ')})`);
      }
    }
    out[name] = {
      pass: parseOr(r['pass'], false, bool, `${where}.pass`),
      ...(r['ttlSeconds'] !== undefined && {
        ttlSeconds: parseOr(r['ttlSeconds'], 0, int(1, 86_400), `${where}.ttlSeconds`),
      }),
      shareAnonymousPrivate: parseOr(r['shareAnonymousPrivate'], false, bool, `${where}.shareAnonymousPrivate`),
      ...(r['dependsOn'] !== undefined && {
        dependsOn: parseOr(r['dependsOn'], 'any', oneOf(DEPENDS_ON), `${where}.dependsOn`),
      }),
    };
  }
  return out;
}
