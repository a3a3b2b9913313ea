/**
 * Configuration: read once at start from `WIKIEDGE_*` environment variables and an optional file
 * named by `WIKIEDGE_CONFIG` (YAML or JSON; the environment overrides the file), validated, then
 * deep-frozen. Every error names the key and the rule, as @fastify/http-proxy's options do.
 *
 * The README's configuration reference is generated from nothing: keep it in step with `FIELDS`.
 */
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { parse as parseYaml } from 'yaml';
import { addressEntryProblem } from './address-list.js';

export type LogLevel = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
export type DebuginfoMode = 'strip' | 'pass' | 'off';
export type LogFormat = 'json' | 'pretty';

/** Per-module override: `ttl` in seconds replaces the wiki's own, `pass` never stores. */
export interface ModuleRule {
  readonly pass?: boolean;
  readonly ttlSeconds?: number;
  /** Store anonymous answers that the wiki marks private (e.g. list=filearchive) in the shared tier. */
  readonly shareAnonymousPrivate?: boolean;
}

export interface Config {
  readonly upstream: URL;
  readonly host: string;
  readonly port: number;
  readonly adminHost: string;
  readonly adminPort: number;
  readonly apiPath: string;
  readonly cookiePrefix: string;
  /** `$wgSessionName`; empty means `{cookiePrefix}_session`, as CookieSessionProvider does. */
  readonly sessionName: string;
  /** Whether `sessionJwt` counts as a credential (CookieSessionProvider with JWT sessions enabled). */
  readonly sessionJwtCookie: boolean;
  /** Credential cookies of extension session providers and `$wgCacheVaryCookies`: names, or `prefix*`. */
  readonly credentialCookies: readonly string[];
  /** Cookies whose name says session or token but that authenticate nobody: names, or `prefix*`. */
  readonly harmlessCookies: readonly string[];
  /** Request headers that carry credentials besides Authorization (lower case). */
  readonly credentialHeaders: readonly string[];
  readonly logLevel: LogLevel;
  /** `pretty` is for a terminal (the demo); production logs are JSON lines. */
  readonly logFormat: LogFormat;
  /** Log one line per cache hit (misses, passes and errors are always logged). */
  /** Share of cache hits logged line by line, 0 to 1 (every request is in the metrics). */
  readonly logHits: number;
  readonly upstreamConnectTimeoutMs: number;
  readonly upstreamResponseTimeoutMs: number;
  readonly upstreamConnections: number;
  readonly readyTimeoutMs: number;
  /** Most requests on their way to the wiki at once (all reasons). */
  readonly upstreamMaxConcurrency: number;
  /** Most requests waiting for a turn; more are refused (503). */
  readonly upstreamQueueMax: number;
  /** Longest a request waits for a turn before 503. */
  readonly upstreamQueueTimeoutMs: number;
  /** Turns and places one client may hold at once; more are refused (429). 0: no limit. */
  readonly clientMaxConcurrency: number;
  /** Uncached requests (misses, passes) per second per client; 0: no budget. */
  readonly clientMissRate: number;
  /** Uncached requests a client may make at once after a quiet spell. */
  readonly clientMissBurst: number;
  /** ms to receive a request's headers (slow-header clients are cut off: 408). */
  readonly clientHeadersTimeoutMs: number;
  /** ms to receive a whole request, body included (slow-body clients are cut off: 408). */
  readonly clientRequestTimeoutMs: number;
  /** Request bodies up to this many bytes are read whole before the request goes to the wiki. */
  readonly requestBodyBufferBytes: number;
  /** Addresses or CIDR ranges whose X-Forwarded-* headers are believed (the proxies in front). */
  readonly trustedProxies: readonly string[];
  /** Addresses or CIDR ranges allowed to send PURGE on the public listener (the wiki's $wgCdnServers traffic). */
  readonly purgeAllow: readonly string[];
  readonly identitySecret: Buffer;
  /** Bearer token every mutating admin request must carry; empty: none (then only non-browser requests, from IP or localhost Hosts). */
  readonly adminToken: string;
  readonly cacheSharedMaxBytes: number;
  readonly cacheSessionMaxBytes: number;
  readonly cacheMaxEntries: number;
  readonly cacheMaxEntryBytes: number;
  readonly ttlPublicSeconds: number;
  readonly ttlSessionSeconds: number;
  readonly ttlMaxSeconds: number;
  readonly ttlJitterRatio: number;
  readonly graceSeconds: number;
  readonly staleIfErrorSeconds: number;
  readonly coalesceWaitMs: number;
  readonly maxUrlBytes: number;
  readonly debuginfo: DebuginfoMode;
  readonly modules: Readonly<Record<string, ModuleRule>>;
  readonly shutdownGraceMs: number;
  /**
   * On SIGTERM, how long to go on serving (every answer with `Connection: close`, `/readyz` 503)
   * before the listener closes, so a load balancer that follows /readyz stops sending first.
   */
  readonly shutdownDrainMs: number;
  /**
   * Processes serving the public port: 1 is one process (no cluster); more runs a node:cluster
   * primary (admin listener, no gateway) and that many workers, each with its own local tier.
   */
  readonly workers: number;
  /** Empty: no shared tier. Else `redis://[user:pass@]host:port[/db]` (or `rediss://`). */
  readonly redisUrl: string;
  /** Bound on every Redis call on a request's path; past it the request goes on without Redis. */
  readonly redisTimeoutMs: number;
  /** How long the cross-replica fetch lock lives at most (the winner deletes it when done). */
  readonly redisLockMs: number;
  /** Prefix of every Redis key and of the purge channel (several wikis can share one Redis). */
  readonly redisKeyPrefix: string;
}

export class ConfigError extends Error {
  constructor(
    readonly key: string,
    rule: string,
  ) {
    super(`${key}: ${rule}`);
    this.name = 'ConfigError';
  }
}

type Raw = Record<string, unknown>;

interface Field<T> {
  /** Environment variable; the file uses the same name without the prefix, in camelCase. */
  env: string;
  file: string;
  parse: (value: unknown, key: string) => T;
  /** A secret: may also come from a file named by `<env>_FILE` (a container's secrets mount). */
  secretFile?: true;
}

const str =
  (fallback?: string) =>
  (v: unknown, key: string): string => {
    if (v === undefined || v === '') {
      if (fallback === undefined) throw new ConfigError(key, 'is required');
      return fallback;
    }
    if (typeof v !== 'string') throw new ConfigError(key, 'must be a string');
    return v;
  };

const int =
  (fallback: number, min: number, max: number) =>
  (v: unknown, key: string): number => {
    if (v === undefined || v === '') return fallback;
    const n = typeof v === 'number' ? v : typeof v === 'string' && /^-?\d+$/.test(v.trim()) ? Number(v) : NaN;
    if (!Number.isSafeInteger(n) || n < min || n > max) {
      throw new ConfigError(key, `must be an integer from ${min} to ${max}, got ${JSON.stringify(v)}`);
    }
    return n;
  };

const ratio =
  (fallback: number) =>
  (v: unknown, key: string): number => {
    if (v === undefined || v === '') return fallback;
    const n = typeof v === 'number' ? v : Number(v);
    if (!Number.isFinite(n) || n < 0 || n > 0.5) throw new ConfigError(key, 'must be a number from 0 to 0.5');
    return n;
  };

const bool =
  (fallback: boolean) =>
  (v: unknown, key: string): boolean => {
    if (v === undefined || v === '') return fallback;
    if (typeof v === 'boolean') return v;
    if (v === 'true' || v === '1') return true;
    if (v === 'false' || v === '0') return false;
    throw new ConfigError(key, 'must be true or false');
  };

/**
 * The share of cache hits that get a log line: false (0, the default), true (1) or a fraction.
 * Every request is counted in wikiedge_requests_total whatever this says; a line per hit costs
 * about as much again as the hit itself (docs/BENCHMARKS.md).
 */
function hitLogShare(v: unknown, key: string): number {
  if (v === undefined || v === '' || v === false || v === 'false') return 0;
  if (v === true || v === 'true') return 1;
  const n = typeof v === 'number' ? v : typeof v === 'string' && /^(\d+(\.\d*)?|\.\d+)$/.test(v) ? Number(v) : NaN;
  if (!Number.isFinite(n) || n < 0 || n > 1) throw new ConfigError(key, 'must be true, false or a fraction from 0 to 1 (e.g. 0.01)');
  return n;
}

const oneOf =
  <T extends string>(fallback: T, allowed: readonly T[]) =>
  (v: unknown, key: string): T => {
    if (v === undefined || v === '') return fallback;
    if (typeof v !== 'string' || !(allowed as readonly string[]).includes(v)) {
      throw new ConfigError(key, `must be one of ${allowed.join(', ')}`);
    }
    return v as T;
  };

const port = (fallback: number) => int(fallback, 0, 65535);
const MiB = 1024 * 1024;

function upstreamUrl(v: unknown, key: string): URL {
  const s = str()(v, key);
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
    throw new ConfigError(
      key,
      'must be a bare origin such as http://wiki:80 (no path, query or credentials)',
    );
  }
  return url;
}

function apiPath(v: unknown, key: string): string {
  const s = str('/w/api.php')(v, key);
  if (!/^\/[A-Za-z0-9._~/-]*$/.test(s) || s.includes('//') || s.includes('/./') || s.includes('/../')) {
    throw new ConfigError(key, 'must be a normalised absolute path such as /w/api.php');
  }
  return s;
}

function cookieName(fallback: string) {
  return (v: unknown, key: string): string => {
    const s = str(fallback)(v, key);
    // PHP rewrites `.` and space in cookie names; a prefix containing them could never match.
    if (s !== '' && !/^[A-Za-z0-9_-]+$/.test(s)) throw new ConfigError(key, 'may hold only A-Z a-z 0-9 _ -');
    return s;
  };
}

/**
 * A comma-separated list of cookie names as PHP stores them (`.` and space become `_`), each
 * optionally ending in `*` (a prefix).
 */
function cookieNameList(fallback: readonly string[]) {
  return (v: unknown, key: string): string[] => {
    if (v === undefined) return [...fallback];
    const items = Array.isArray(v) ? v.map(String) : typeof v === 'string' ? v.split(',') : null;
    if (!items) throw new ConfigError(key, 'must be a comma-separated list of cookie names');
    return items
      .map((s) => s.trim())
      .filter((s) => s !== '')
      .map((s) => {
        if (!/^[!#$%&'+\-^_`|~0-9A-Za-z]+\*?$/.test(s) || s === '*')
          throw new ConfigError(key, `must list cookie names (RFC 6265 tokens, optionally ending in *), got ${JSON.stringify(s)}`);
        return s;
      });
  };
}

function headerNameList(v: unknown, key: string): string[] {
  if (v === undefined || v === '') return [];
  const items = Array.isArray(v) ? v.map(String) : typeof v === 'string' ? v.split(',') : null;
  if (!items) throw new ConfigError(key, 'must be a comma-separated list of header names');
  return items
    .map((s) => s.trim().toLowerCase())
    .filter((s) => s !== '')
    .map((s) => {
      if (!/^[!#$%&'*+\-.^_`|~0-9a-z]+$/.test(s)) throw new ConfigError(key, `must list header names, got ${JSON.stringify(s)}`);
      if (s === 'cookie') throw new ConfigError(key, 'must not list cookie (cookies are named in WIKIEDGE_CREDENTIAL_COOKIES)');
      return s;
    });
}

function addressList(v: unknown, key: string): string[] {
  if (v === undefined || v === '') return ['127.0.0.1', '::1'];
  const items = Array.isArray(v) ? v : typeof v === 'string' ? v.split(',') : null;
  if (!items) throw new ConfigError(key, 'must be a comma-separated list of IP addresses or CIDR ranges');
  return items
    .map((item) => String(item).trim())
    .filter((s) => s !== '')
    .map((s) => {
      const problem = addressEntryProblem(s);
      if (problem) throw new ConfigError(key, `must list IP addresses or CIDR ranges (e.g. 10.0.0.0/8): ${problem}`);
      return s;
    });
}

function adminToken(v: unknown, key: string): string {
  if (v === undefined || v === '') return '';
  if (typeof v !== 'string' || v.length < 16 || /\s/.test(v)) throw new ConfigError(key, 'must be at least 16 characters, without whitespace');
  return v;
}

function secret(v: unknown, key: string): Buffer {
  if (v === undefined || v === '') return randomBytes(32);
  if (typeof v !== 'string' || v.length < 16) throw new ConfigError(key, 'must be at least 16 characters');
  return Buffer.from(v, 'utf8');
}

const MAX_WORKERS = 256;

/** A positive integer, or `auto`: one per CPU this process may use (os.availableParallelism()). */
function workerCount(v: unknown, key: string): number {
  if (typeof v === 'string' && v.trim() === 'auto') return Math.min(availableParallelism(), MAX_WORKERS);
  try {
    return int(1, 1, MAX_WORKERS)(v, key);
  } catch {
    throw new ConfigError(key, `must be auto or an integer from 1 to ${MAX_WORKERS}, got ${JSON.stringify(v)}`);
  }
}

function redisUrl(v: unknown, key: string): string {
  const s = str('')(v, key);
  if (s === '') return s;
  let url: URL;
  try {
    url = new URL(s);
  } catch {
    throw new ConfigError(key, 'must be a redis:// or rediss:// URL');
  }
  if (url.protocol !== 'redis:' && url.protocol !== 'rediss:')
    throw new ConfigError(key, 'must be a redis:// or rediss:// URL');
  if (!url.hostname) throw new ConfigError(key, 'must name a host');
  if (url.pathname !== '' && url.pathname !== '/' && !/^\/\d{1,2}$/.test(url.pathname))
    throw new ConfigError(key, 'may end only in a database number, e.g. /0');
  return s;
}

function redisKeyPrefix(v: unknown, key: string): string {
  const s = str('wikiedge:')(v, key);
  if (!/^[A-Za-z0-9_.:-]{1,64}$/.test(s)) throw new ConfigError(key, 'may hold only A-Z a-z 0-9 _ . : - (1 to 64)');
  return s;
}

function moduleRules(v: unknown, key: string): Record<string, ModuleRule> {
  if (v === undefined || v === '') return {};
  let table: unknown = v;
  if (typeof v === 'string') {
    try {
      table = JSON.parse(v);
    } catch {
      throw new ConfigError(key, 'must be a JSON object of module name to rule');
    }
  }
  if (typeof table !== 'object' || table === null || Array.isArray(table)) {
    throw new ConfigError(key, 'must be an object of module name to rule');
  }
  const out: Record<string, ModuleRule> = {};
  for (const [name, rule] of Object.entries(table)) {
    const where = `${key}.${name}`;
    if (typeof rule !== 'object' || rule === null) throw new ConfigError(where, 'must be an object');
    const r = rule as Raw;
    for (const k of Object.keys(r)) {
      if (!['pass', 'ttlSeconds', 'shareAnonymousPrivate'].includes(k)) {
        throw new ConfigError(
          `${where}.${k}`,
          'is not a known rule (pass, ttlSeconds, shareAnonymousPrivate)',
        );
      }
    }
    out[name] = {
      pass: bool(false)(r['pass'], `${where}.pass`),
      ...(r['ttlSeconds'] !== undefined && {
        ttlSeconds: int(0, 1, 86_400)(r['ttlSeconds'], `${where}.ttlSeconds`),
      }),
      shareAnonymousPrivate: bool(false)(r['shareAnonymousPrivate'], `${where}.shareAnonymousPrivate`),
    };
  }
  return out;
}

/** Every key: environment name, file name, parser with its default. */
const FIELDS = {
  upstream: { env: 'WIKIEDGE_UPSTREAM', file: 'upstream', parse: upstreamUrl },
  host: { env: 'WIKIEDGE_HOST', file: 'host', parse: str('0.0.0.0') },
  port: { env: 'WIKIEDGE_PORT', file: 'port', parse: port(8080) },
  adminHost: { env: 'WIKIEDGE_ADMIN_HOST', file: 'adminHost', parse: str('127.0.0.1') },
  adminPort: { env: 'WIKIEDGE_ADMIN_PORT', file: 'adminPort', parse: port(8081) },
  apiPath: { env: 'WIKIEDGE_API_PATH', file: 'apiPath', parse: apiPath },
  cookiePrefix: { env: 'WIKIEDGE_COOKIE_PREFIX', file: 'cookiePrefix', parse: cookieName('wiki') },
  sessionName: { env: 'WIKIEDGE_SESSION_NAME', file: 'sessionName', parse: cookieName('') },
  sessionJwtCookie: { env: 'WIKIEDGE_SESSION_JWT_COOKIE', file: 'sessionJwtCookie', parse: bool(true) },
  credentialCookies: { env: 'WIKIEDGE_CREDENTIAL_COOKIES', file: 'credentialCookies', parse: cookieNameList([]) },
  harmlessCookies: { env: 'WIKIEDGE_HARMLESS_COOKIES', file: 'harmlessCookies', parse: cookieNameList([]) },
  credentialHeaders: { env: 'WIKIEDGE_CREDENTIAL_HEADERS', file: 'credentialHeaders', parse: headerNameList },
  logLevel: {
    env: 'WIKIEDGE_LOG_LEVEL',
    file: 'logLevel',
    parse: oneOf<LogLevel>('info', ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']),
  },
  logFormat: {
    env: 'WIKIEDGE_LOG_FORMAT',
    file: 'logFormat',
    parse: oneOf<LogFormat>('json', ['json', 'pretty']),
  },
  logHits: { env: 'WIKIEDGE_LOG_HITS', file: 'logHits', parse: hitLogShare },
  upstreamConnectTimeoutMs: {
    env: 'WIKIEDGE_UPSTREAM_CONNECT_TIMEOUT_MS',
    file: 'upstreamConnectTimeoutMs',
    parse: int(5_000, 1, 600_000),
  },
  upstreamResponseTimeoutMs: {
    env: 'WIKIEDGE_UPSTREAM_RESPONSE_TIMEOUT_MS',
    file: 'upstreamResponseTimeoutMs',
    parse: int(30_000, 1, 3_600_000),
  },
  upstreamConnections: {
    env: 'WIKIEDGE_UPSTREAM_CONNECTIONS',
    file: 'upstreamConnections',
    parse: int(64, 1, 4096),
  },
  readyTimeoutMs: { env: 'WIKIEDGE_READY_TIMEOUT_MS', file: 'readyTimeoutMs', parse: int(2_000, 1, 60_000) },
  upstreamMaxConcurrency: {
    env: 'WIKIEDGE_UPSTREAM_MAX_CONCURRENCY',
    file: 'upstreamMaxConcurrency',
    parse: int(16, 1, 4096),
  },
  upstreamQueueMax: { env: 'WIKIEDGE_UPSTREAM_QUEUE_MAX', file: 'upstreamQueueMax', parse: int(256, 0, 1_000_000) },
  upstreamQueueTimeoutMs: {
    env: 'WIKIEDGE_UPSTREAM_QUEUE_TIMEOUT_MS',
    file: 'upstreamQueueTimeoutMs',
    parse: int(10_000, 1, 600_000),
  },
  clientMaxConcurrency: {
    env: 'WIKIEDGE_CLIENT_MAX_CONCURRENCY',
    file: 'clientMaxConcurrency',
    parse: int(8, 0, 100_000),
  },
  clientMissRate: { env: 'WIKIEDGE_CLIENT_MISS_RATE', file: 'clientMissRate', parse: int(20, 0, 1_000_000) },
  clientMissBurst: { env: 'WIKIEDGE_CLIENT_MISS_BURST', file: 'clientMissBurst', parse: int(100, 1, 1_000_000) },
  clientHeadersTimeoutMs: {
    env: 'WIKIEDGE_CLIENT_HEADERS_TIMEOUT_MS',
    file: 'clientHeadersTimeoutMs',
    parse: int(10_000, 100, 600_000),
  },
  clientRequestTimeoutMs: {
    env: 'WIKIEDGE_CLIENT_REQUEST_TIMEOUT_MS',
    file: 'clientRequestTimeoutMs',
    parse: int(60_000, 100, 3_600_000),
  },
  requestBodyBufferBytes: {
    env: 'WIKIEDGE_REQUEST_BODY_BUFFER_BYTES',
    file: 'requestBodyBufferBytes',
    parse: int(1 * MiB, 0, 2 ** 30),
  },
  trustedProxies: { env: 'WIKIEDGE_TRUSTED_PROXIES', file: 'trustedProxies', parse: addressList },
  purgeAllow: { env: 'WIKIEDGE_PURGE_ALLOW', file: 'purgeAllow', parse: addressList },
  identitySecret: { env: 'WIKIEDGE_IDENTITY_SECRET', file: 'identitySecret', parse: secret, secretFile: true },
  adminToken: { env: 'WIKIEDGE_ADMIN_TOKEN', file: 'adminToken', parse: adminToken, secretFile: true },
  cacheSharedMaxBytes: {
    env: 'WIKIEDGE_CACHE_SHARED_MAX_BYTES',
    file: 'cacheSharedMaxBytes',
    parse: int(256 * MiB, 1024, 2 ** 40),
  },
  cacheSessionMaxBytes: {
    env: 'WIKIEDGE_CACHE_SESSION_MAX_BYTES',
    file: 'cacheSessionMaxBytes',
    parse: int(64 * MiB, 1024, 2 ** 40),
  },
  cacheMaxEntries: {
    env: 'WIKIEDGE_CACHE_MAX_ENTRIES',
    file: 'cacheMaxEntries',
    parse: int(200_000, 1, 10_000_000),
  },
  cacheMaxEntryBytes: {
    env: 'WIKIEDGE_CACHE_MAX_ENTRY_BYTES',
    file: 'cacheMaxEntryBytes',
    parse: int(1 * MiB, 1, 2 ** 31),
  },
  ttlPublicSeconds: {
    env: 'WIKIEDGE_TTL_PUBLIC_SECONDS',
    file: 'ttlPublicSeconds',
    parse: int(60, 1, 86_400),
  },
  ttlSessionSeconds: {
    env: 'WIKIEDGE_TTL_SESSION_SECONDS',
    file: 'ttlSessionSeconds',
    parse: int(10, 1, 3_600),
  },
  ttlMaxSeconds: { env: 'WIKIEDGE_TTL_MAX_SECONDS', file: 'ttlMaxSeconds', parse: int(3_600, 1, 604_800) },
  ttlJitterRatio: { env: 'WIKIEDGE_TTL_JITTER_RATIO', file: 'ttlJitterRatio', parse: ratio(0.1) },
  graceSeconds: { env: 'WIKIEDGE_GRACE_SECONDS', file: 'graceSeconds', parse: int(10, 0, 86_400) },
  staleIfErrorSeconds: {
    env: 'WIKIEDGE_STALE_IF_ERROR_SECONDS',
    file: 'staleIfErrorSeconds',
    parse: int(300, 0, 86_400),
  },
  coalesceWaitMs: {
    env: 'WIKIEDGE_COALESCE_WAIT_MS',
    file: 'coalesceWaitMs',
    parse: int(10_000, 1, 600_000),
  },
  maxUrlBytes: { env: 'WIKIEDGE_MAX_URL_BYTES', file: 'maxUrlBytes', parse: int(8_192, 256, 1_048_576) },
  debuginfo: {
    env: 'WIKIEDGE_DEBUGINFO',
    file: 'debuginfo',
    parse: oneOf<DebuginfoMode>('strip', ['strip', 'pass', 'off']),
  },
  modules: { env: 'WIKIEDGE_MODULES', file: 'modules', parse: moduleRules },
  shutdownGraceMs: {
    env: 'WIKIEDGE_SHUTDOWN_GRACE_MS',
    file: 'shutdownGraceMs',
    parse: int(10_000, 0, 600_000),
  },
  shutdownDrainMs: {
    env: 'WIKIEDGE_SHUTDOWN_DRAIN_MS',
    file: 'shutdownDrainMs',
    parse: int(0, 0, 600_000),
  },
  workers: { env: 'WIKIEDGE_WORKERS', file: 'workers', parse: workerCount },
  redisUrl: { env: 'WIKIEDGE_REDIS_URL', file: 'redisUrl', parse: redisUrl },
  redisTimeoutMs: { env: 'WIKIEDGE_REDIS_TIMEOUT_MS', file: 'redisTimeoutMs', parse: int(50, 1, 10_000) },
  redisLockMs: { env: 'WIKIEDGE_REDIS_LOCK_MS', file: 'redisLockMs', parse: int(3_000, 10, 600_000) },
  redisKeyPrefix: { env: 'WIKIEDGE_REDIS_KEY_PREFIX', file: 'redisKeyPrefix', parse: redisKeyPrefix },
} satisfies { [K in keyof Config]: Field<Config[K]> };

export const CONFIG_KEYS: readonly string[] = Object.values(FIELDS).map((f) => f.env);
/** `WIKIEDGE_IDENTITY_SECRET_FILE` and friends: the secret is the file's content. */
export const SECRET_FILE_KEYS: readonly string[] = Object.values(FIELDS as Record<string, Field<unknown>>)
  .filter((f) => f.secretFile)
  .map((f) => `${f.env}_FILE`);

/** A secret's value from `<env>_FILE`: the file's content without its final newline. */
function readSecretFile(env: NodeJS.ProcessEnv, field: Field<unknown>): string | undefined {
  const path = env[`${field.env}_FILE`];
  if (path === undefined || path === '') return undefined;
  if (env[field.env] !== undefined && env[field.env] !== '')
    throw new ConfigError(`${field.env}_FILE`, `must not be set together with ${field.env}`);
  try {
    return readFileSync(path, 'utf8').replace(/\r?\n$/, '');
  } catch (err) {
    throw new ConfigError(`${field.env}_FILE`, `cannot read ${path}: ${(err as Error).message}`);
  }
}

function readFile(path: string): Raw {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new ConfigError('WIKIEDGE_CONFIG', `cannot read ${path}: ${(err as Error).message}`);
  }
  let doc: unknown;
  try {
    doc = path.endsWith('.json') ? JSON.parse(text) : parseYaml(text);
  } catch (err) {
    throw new ConfigError('WIKIEDGE_CONFIG', `${path} is not valid YAML/JSON: ${(err as Error).message}`);
  }
  if (doc === null || doc === undefined) return {};
  if (typeof doc !== 'object' || Array.isArray(doc)) {
    throw new ConfigError('WIKIEDGE_CONFIG', `${path} must hold a mapping of keys`);
  }
  const known = new Set(Object.values(FIELDS).map((f) => f.file));
  for (const k of Object.keys(doc)) {
    if (!known.has(k)) throw new ConfigError(k, `is not a known configuration key (in ${path})`);
  }
  return doc as Raw;
}

function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object' && !Object.isFrozen(value) && !Buffer.isBuffer(value)) {
    for (const v of Object.values(value)) deepFreeze(v);
    Object.freeze(value);
  }
  return value;
}

/** Validate and freeze. Throws ConfigError naming the first bad key. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  for (const name of Object.keys(env)) {
    if (name.startsWith('WIKIEDGE_') && name !== 'WIKIEDGE_CONFIG' && !CONFIG_KEYS.includes(name) && !SECRET_FILE_KEYS.includes(name)) {
      // A typo in an operator's variable must not silently fall back to a default.
      if (!name.startsWith('WIKIEDGE_TEST_')) throw new ConfigError(name, 'is not a known configuration key');
    }
  }
  const file = env['WIKIEDGE_CONFIG'] ? readFile(env['WIKIEDGE_CONFIG']) : {};
  const out: Record<string, unknown> = {};
  for (const [name, field] of Object.entries(FIELDS) as [string, Field<unknown>][]) {
    const fromEnv = (field.secretFile && readSecretFile(env, field)) || env[field.env];
    const value = fromEnv !== undefined && fromEnv !== '' ? fromEnv : file[field.file];
    out[name] = field.parse(value, field.env);
  }
  const config = out as unknown as Config;
  if (config.ttlPublicSeconds > config.ttlMaxSeconds) {
    throw new ConfigError('WIKIEDGE_TTL_PUBLIC_SECONDS', 'must not exceed WIKIEDGE_TTL_MAX_SECONDS');
  }
  if (config.clientHeadersTimeoutMs > config.clientRequestTimeoutMs) {
    throw new ConfigError('WIKIEDGE_CLIENT_HEADERS_TIMEOUT_MS', 'must not exceed WIKIEDGE_CLIENT_REQUEST_TIMEOUT_MS');
  }
  if (config.cacheMaxEntryBytes > config.cacheSharedMaxBytes) {
    throw new ConfigError(
      'WIKIEDGE_CACHE_MAX_ENTRY_BYTES',
      'must not exceed WIKIEDGE_CACHE_SHARED_MAX_BYTES',
    );
  }
  return deepFreeze(config);
}

/** What is logged at start: everything but the secret. */
export function describeConfig(config: Config): Record<string, unknown> {
  const { identitySecret: _secret, adminToken, upstream, redisUrl, ...rest } = config;
  return {
    ...rest,
    upstream: upstream.origin,
    identitySecret: '[redacted]',
    adminToken: adminToken ? '[redacted]' : '',
    redisUrl: redactUrlPassword(redisUrl),
  };
}

/** `redis://user:secret@host` → `redis://user:REDACTED@host`. */
export function redactUrlPassword(url: string): string {
  if (url === '') return url;
  try {
    const u = new URL(url);
    if (u.password) u.password = 'REDACTED';
    return u.toString();
  } catch {
    return '[unparseable]';
  }
}
