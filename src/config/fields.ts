/**
 * Every configuration key, once: the single source of the `Config` type, of loading and
 * validation (load.ts), of the logged configuration, of `--help` and `--print-config`
 * (render.ts) and of the configuration reference (docs/CONFIGURATION.md) (scripts/config-reference.mjs).
 *
 * To add a key, add one entry below:
 *
 *     shutdownGraceMs: field({
 *       env: 'WIKIEDGE_SHUTDOWN_GRACE_MS',      // WIKIEDGE_ + the entry's name in SNAKE_CASE
 *       parse: int(0, 600_000),                 // a parser of parsers.ts, or a new one there
 *       default: 10_000,                        // or REQUIRED, or new MadeAtStart(make, 'words')
 *       unit: 'ms',
 *       doc: 'on SIGTERM, once the listener is closed, ...',  // the reference's "meaning", Markdown
 *     }),
 *
 * The entry's name is the key in the YAML/JSON file and in `Config`, whose type follows from
 * `parse`. Mark a key `secret: true` when it must never be logged; it may then also come from
 * `<env>_FILE`, and the reference says so itself. A rule between two keys goes in NOT_ABOVE.
 * Then regenerate the table in docs/CONFIGURATION.md:
 * `npm run build && node scripts/config-reference.mjs --write` (test/unit/readme-config-reference.test.ts
 * fails until it is done).
 */
import { randomBytes } from 'node:crypto';
import { availableParallelism } from 'node:os';
import { type Field, type ValueOf, field, MadeAtStart, REQUIRED } from './field.js';
import {
  addressList,
  adminToken,
  apiPath,
  articlePath,
  bool,
  cookieName,
  cookieNameList,
  DEBUGINFO_MODES,
  fraction,
  headerNameList,
  parameterNameList,
  hitLogShare,
  hmacKey,
  int,
  intOrAuto,
  LOG_FORMATS,
  ACCESS_LOG_FORMATS,
  LOG_LEVELS,
  MiB,
  moduleRules,
  oneOf,
  port,
  listenHost,
  str,
  upstreamUrl,
  workerCount,
} from './parsers.js';
import { REDIS_FIELDS } from './fields-redis.js';

export const FIELDS = {
  upstream: field({
    env: 'WIKIEDGE_UPSTREAM',
    parse: upstreamUrl,
    default: REQUIRED,
    unit: 'url',
    doc: "the wiki's origin, e.g. `http://wiki:80` (no path)",
    describe: (url) => url.origin,
  }),
  host: field({ env: 'WIKIEDGE_HOST', parse: listenHost, default: '0.0.0.0', unit: 'host', doc: 'public listener address' }),
  port: field({ env: 'WIKIEDGE_PORT', parse: port, default: 8080, unit: 'port', doc: 'public listener port' }),
  adminHost: field({
    env: 'WIKIEDGE_ADMIN_HOST',
    parse: listenHost,
    default: '127.0.0.1',
    unit: 'host',
    doc: 'admin listener address (`/healthz`, `/readyz`, `/upstreamz`, `/metrics`, `POST /purge`)',
  }),
  adminPort: field({ env: 'WIKIEDGE_ADMIN_PORT', parse: port, default: 8081, unit: 'port', doc: 'admin listener port' }),
  apiPath: field({
    env: 'WIKIEDGE_API_PATH',
    parse: apiPath,
    default: '/w/api.php',
    unit: 'path',
    doc: 'the intercepted path (`$wgScriptPath` + `/api.php`)',
  }),
  cookiePrefix: field({ env: 'WIKIEDGE_COOKIE_PREFIX', parse: cookieName, default: 'wiki', unit: 'name', doc: '`$wgCookiePrefix`' }),
  sessionName: field({
    env: 'WIKIEDGE_SESSION_NAME',
    parse: cookieName,
    default: '',
    unit: 'name',
    doc: '`$wgSessionName`; empty means `{prefix}_session`',
  }),
  sessionJwtCookie: field({
    env: 'WIKIEDGE_SESSION_JWT_COOKIE',
    parse: bool,
    default: true,
    unit: 'boolean',
    doc: 'count `sessionJwt` as a credential',
  }),
  credentialCookies: field({
    env: 'WIKIEDGE_CREDENTIAL_COOKIES',
    parse: cookieNameList,
    default: [],
    unit: 'list',
    doc: "more credential cookies, comma-separated names or `prefix*`: extension session providers (CentralAuth: `centralauth_*`) and the wiki's `$wgCacheVaryCookies`; `scripts/wiki/vary-cookies.php` prints what the wiki itself varies on",
  }),
  harmlessCookies: field({
    env: 'WIKIEDGE_HARMLESS_COOKIES',
    parse: cookieNameList,
    default: [],
    unit: 'list',
    doc: "cookies whose name says session or token but that authenticate nobody (names or `prefix*`), besides MediaWiki's own `{prefix}mwuser-sessionId`; every other such cookie is taken for a credential (the credential net)",
  }),
  credentialHeaders: field({
    env: 'WIKIEDGE_CREDENTIAL_HEADERS',
    parse: headerNameList,
    default: [],
    unit: 'list',
    doc: 'request headers that carry credentials besides `Authorization` (e.g. a header set by an SSO proxy in front of the wiki)',
  }),
  credentialParams: field({
    env: 'WIKIEDGE_CREDENTIAL_PARAMS',
    parse: parameterNameList,
    default: ['centralauthtoken'],
    unit: 'list',
    doc: "api.php query parameters that log a request in by themselves (CentralAuth's `centralauthtoken`, CentralAuthApiSessionProvider): such a request is never cached and its answer goes out `private`",
  }),
  logLevel: field({
    env: 'WIKIEDGE_LOG_LEVEL',
    parse: oneOf(LOG_LEVELS),
    default: 'info',
    unit: 'choice',
    doc: '`fatal` … `trace`, `silent`',
  }),
  logFormat: field({
    env: 'WIKIEDGE_LOG_FORMAT',
    parse: oneOf(LOG_FORMATS),
    default: 'json',
    unit: 'choice',
    doc: '`json` (one line per request) or `pretty` (terminal)',
  }),
  logHits: field({
    env: 'WIKIEDGE_LOG_HITS',
    parse: hitLogShare,
    default: 1,
    shownDefault: 'true',
    unit: 'ratio',
    doc: 'cache hits that get an access-log line: `true` (every one), `false` or a fraction such as `0.01` (a sample); every hit is counted in `wikiedge_requests_total` either way; a line costs ~1.5 µs of CPU (docs/OPERATIONS.md, Access log: a logged hit measured 1.06× a bare Fastify route, an unlogged one 1.14×)',
  }),
  accessLogFormat: field({
    env: 'WIKIEDGE_ACCESS_LOG_FORMAT',
    parse: oneOf(ACCESS_LOG_FORMATS),
    default: 'json',
    unit: 'choice',
    doc: "the access log's lines: `json` (pino's lines, with an ISO 8601 `timeIso`, `host`, `referer`, `protocol`, the cache disposition and why, upstream time, request id) or `combined` (nginx's and varnishncsa's default line with the cache disposition appended, as `$upstream_cache_status` is; better with `WIKIEDGE_ACCESS_LOG_FILE`: on stdout it mixes with the other lines' JSON). See \"Access log\"",
  }),
  accessLogFile: field({
    env: 'WIKIEDGE_ACCESS_LOG_FILE',
    parse: str,
    default: '',
    unit: 'path',
    doc: 'write the access log (request lines) to this file, appended, instead of standard output; reopened on SIGUSR1 (as nginx does) so that logrotate can move it (`postrotate`: `systemctl kill -s USR1 wikiedge`, `kill -USR1 <pid>`). A file that cannot be appended to or created (its directory missing, a read-only file system) is refused like any bad value, by `--check`, at start and at a reload; one that fails later (a write error, a reopen) sends the lines to standard output, said once on standard error, until SIGUSR1 opens it again. Empty: standard output',
  }),
  upstreamConnectTimeoutMs: field({
    env: 'WIKIEDGE_UPSTREAM_CONNECT_TIMEOUT_MS',
    parse: int(1, 600_000),
    default: 5_000,
    unit: 'ms',
    doc: 'ms to connect to the wiki',
  }),
  upstreamResponseTimeoutMs: field({
    env: 'WIKIEDGE_UPSTREAM_RESPONSE_TIMEOUT_MS',
    parse: int(1, 3_600_000),
    default: 30_000,
    unit: 'ms',
    doc: "ms for the wiki's headers, and between body chunks",
  }),
  upstreamConnections: field({
    env: 'WIKIEDGE_UPSTREAM_CONNECTIONS',
    parse: int(1, 4096),
    default: 64,
    unit: 'count',
    doc: 'keep-alive connections to the wiki',
  }),
  upstreamProbeMs: field({
    env: 'WIKIEDGE_UPSTREAM_PROBE_MS',
    parse: int(100, 600_000),
    default: 5_000,
    unit: 'ms',
    doc: "how often the background probe asks the wiki's api.php whether it answers (`wikiedge_upstream_up`, the admin `/upstreamz`); `/readyz` never waits for the wiki",
  }),
  upstreamProbeTimeoutMs: field({
    env: 'WIKIEDGE_UPSTREAM_PROBE_TIMEOUT_MS',
    parse: int(1, 60_000),
    default: 2_000,
    unit: 'ms',
    doc: 'ms the upstream probe waits for the wiki before it counts it down (formerly `WIKIEDGE_READY_TIMEOUT_MS`, still taken with a warning)',
    formerly: 'readyTimeoutMs',
  }),
  upstreamMaxConcurrency: field({
    env: 'WIKIEDGE_UPSTREAM_MAX_CONCURRENCY',
    parse: int(1, 4096),
    default: 16,
    unit: 'count',
    doc: "requests on their way to the wiki at once (misses, passes, refreshes, streamed pages); size it to the wiki's PHP workers: more only queue inside PHP",
  }),
  upstreamQueueMax: field({
    env: 'WIKIEDGE_UPSTREAM_QUEUE_MAX',
    parse: int(0, 1_000_000),
    default: 256,
    unit: 'count',
    doc: 'requests waiting for a turn; more are refused with 503 and `Retry-After` (after `WIKIEDGE_CLIENT_REFUSAL_DELAY_MS`)',
  }),
  upstreamQueueTimeoutMs: field({
    env: 'WIKIEDGE_UPSTREAM_QUEUE_TIMEOUT_MS',
    parse: int(1, 600_000),
    default: 10_000,
    unit: 'ms',
    doc: 'longest wait for a turn before 503 (`Retry-After`); a waiter whose client has gone leaves the queue at once and never reaches the wiki',
  }),
  clientMaxConcurrency: field({
    env: 'WIKIEDGE_CLIENT_MAX_CONCURRENCY',
    parse: int(0, 100_000),
    default: 8,
    unit: 'count',
    doc: 'turns and queue places one client (a session, a user, or an anonymous address) may hold; more get 429 (`0`: no limit)',
  }),
  clientMissRate: field({
    env: 'WIKIEDGE_CLIENT_MISS_RATE',
    parse: int(0, 1_000_000),
    default: 20,
    unit: 'per-second',
    doc: "uncached requests (misses and passes) per second per client (a session, a user, or an anonymous address), a token bucket; past it a client asking in parallel gets 429 with `Retry-After`. A client in series (none of its other uncached requests under way, as MediaWiki's API etiquette asks of bots) is never refused. Hits, coalesced and stale answers are never limited; a hit in an entry's grace window starts its refresh only with a token to spend (it is served stale either way). `0`: off",
  }),
  clientMissBurst: field({
    env: 'WIKIEDGE_CLIENT_MISS_BURST',
    parse: int(1, 1_000_000),
    default: 100,
    unit: 'count',
    doc: "the bucket's size: uncached requests a client may make at once after a quiet spell",
  }),
  clientStoreBytesPerSecond: field({
    env: 'WIKIEDGE_CLIENT_STORE_BYTES_PER_SECOND',
    parse: intOrAuto(0, 2 ** 40),
    default: 'auto',
    unit: 'per-second',
    doc: 'bytes per second one client\'s misses (and the br forms its hits ask for: `WIKIEDGE_BROTLI_AFTER_HITS`) may store in the shared tier, and in the session tier, a token bucket per tier (its burst: 4 × `WIKIEDGE_CACHE_MAX_ENTRY_BYTES`, at most 1/8 of the tier); past it the client is still answered (`X-Cache: miss`) and its answer is not stored (`wikiedge_not_stored_total{reason="client-budget"}`), so that a client asking in series, never refused, cannot push every other entry out of the tier. In the session tier a user\'s sessions are charged to the user, and the sessions of one address whose user the gateway has not learned together as one client (a made-up session cookie costs nothing; an IPv6 /48 as 4 clients). `auto`: the tier\'s size (`WIKIEDGE_CACHE_SHARED_MAX_BYTES`, `WIKIEDGE_CACHE_SESSION_MAX_BYTES`) / 600, at most a tenth of the tier a minute. A grace refresh is charged to the client whose hit started it. `0`: off. See "Per-client limits"',
  }),
  clientSessionsPerAddress: field({
    env: 'WIKIEDGE_CLIENT_SESSIONS_PER_ADDRESS',
    parse: int(1, 10_000),
    default: 8,
    unit: 'count',
    doc: 'the client limits above are kept per session (per user once the gateway has seen whose the session is), per address for anonymous clients (IPv6: per /64), as MediaWiki keys its own; the sessions of one address together may use this many times one client\'s limits (a made-up session cookie costs nothing). See "Per-client limits"',
  }),
  clientRefusalDelayMs: field({
    env: 'WIKIEDGE_CLIENT_REFUSAL_DELAY_MS',
    parse: int(0, 60_000),
    default: 1_000,
    unit: 'ms',
    doc: 'how long a refused request (429: budget or share spent; 503: queue full) waits for its answer: a client that ignores `Retry-After` gets one answer per connection per delay instead of costing the gateway CPU as fast as it can ask (at most 10,000 wait at once; `0`: at once)',
  }),
  clientHeadersTimeoutMs: field({
    env: 'WIKIEDGE_CLIENT_HEADERS_TIMEOUT_MS',
    parse: int(100, 600_000),
    default: 10_000,
    unit: 'ms',
    doc: 'ms for a client to send its request headers (slowloris); past it Node answers 408 and closes',
  }),
  clientRequestTimeoutMs: field({
    env: 'WIKIEDGE_CLIENT_REQUEST_TIMEOUT_MS',
    parse: int(100, 3_600_000),
    default: 60_000,
    unit: 'ms',
    doc: 'ms for a client to send its whole request, body included; past it 408. Raise it for large uploads over slow links',
  }),
  requestBodyBufferBytes: field({
    env: 'WIKIEDGE_REQUEST_BODY_BUFFER_BYTES',
    parse: int(0, 2 ** 30),
    default: 1 * MiB,
    unit: 'bytes',
    doc: "request bodies up to this size are read whole before the request takes a turn at the wiki, so a slow sender holds a socket of ours, not the wiki's; larger ones (uploads) stream",
  }),
  trustedProxies: field({
    env: 'WIKIEDGE_TRUSTED_PROXIES',
    parse: addressList,
    default: ['127.0.0.1', '::1'],
    unit: 'list',
    doc: 'addresses or CIDR ranges (`10.0.0.0/8`) whose X-Forwarded-* are believed: the TLS terminator or load balancer in front',
  }),
  purgeAllow: field({
    env: 'WIKIEDGE_PURGE_ALLOW',
    parse: addressList,
    default: ['127.0.0.1', '::1'],
    unit: 'list',
    doc: "addresses or CIDR ranges allowed to send `PURGE` on the public port: the hosts that send the wiki's `$wgCdnServers` traffic (the wiki's servers, or its job runners), not the TLS terminator",
  }),
  identitySecret: field({
    env: 'WIKIEDGE_IDENTITY_SECRET',
    parse: hmacKey,
    default: new MadeAtStart(() => randomBytes(32), 'random at start'),
    unit: 'text',
    secret: true,
    doc: 'HMAC key for session slots (≥16 chars); required with Redis (the same on every replica)',
  }),
  adminToken: field({
    env: 'WIKIEDGE_ADMIN_TOKEN',
    parse: adminToken,
    default: '',
    unit: 'text',
    secret: true,
    doc: 'when set (≥16 characters), every mutating admin request (`POST /purge`, `POST /trace`) and every read of the cache or the configuration (`/cache`, `/cache/stats`, `/config`) needs `Authorization: Bearer <token>`; `/healthz`, `/readyz`, `/upstreamz` stay open, `/metrics` too unless `WIKIEDGE_METRICS_TOKEN` is set. Required when `WIKIEDGE_ADMIN_HOST` is not a loopback address (the gateway refuses to start without it, unless `WIKIEDGE_ADMIN_INSECURE_NO_TOKEN=true`)',
  }),
  adminInsecureNoToken: field({
    env: 'WIKIEDGE_ADMIN_INSECURE_NO_TOKEN',
    parse: bool,
    default: false,
    unit: 'boolean',
    doc: '`true`: let the admin listener start on a non-loopback `WIKIEDGE_ADMIN_HOST` without `WIKIEDGE_ADMIN_TOKEN`, so that anyone who reaches it can purge the cache (only the browser checks of "Purging" stand in the way). For a network no one else is on; never beyond',
  }),
  metricsToken: field({
    env: 'WIKIEDGE_METRICS_TOKEN',
    parse: adminToken,
    default: '',
    unit: 'text',
    secret: true,
    doc: "when set (≥16 characters), `GET /metrics` needs `Authorization: Bearer <token>` (Prometheus: the scrape config's `authorization` block with `credentials_file`); give it the admin token's file to use one token for both, or a token of its own so that Prometheus cannot purge",
  }),
  cacheSharedMaxBytes: field({
    env: 'WIKIEDGE_CACHE_SHARED_MAX_BYTES',
    parse: int(1024, 2 ** 40),
    default: 256 * MiB,
    unit: 'bytes',
    doc: 'byte budget of the shared tier',
  }),
  cacheSessionMaxBytes: field({
    env: 'WIKIEDGE_CACHE_SESSION_MAX_BYTES',
    parse: int(1024, 2 ** 40),
    default: 64 * MiB,
    unit: 'bytes',
    doc: 'byte budget of the per-session tier',
  }),
  cacheMaxEntries: field({
    env: 'WIKIEDGE_CACHE_MAX_ENTRIES',
    parse: int(1, 10_000_000),
    default: 200_000,
    unit: 'count',
    doc: 'entries per tier',
  }),
  cacheMaxEntryBytes: field({
    env: 'WIKIEDGE_CACHE_MAX_ENTRY_BYTES',
    parse: int(1, 2 ** 31),
    default: 1 * MiB,
    unit: 'bytes',
    doc: 'larger answers are not stored',
  }),
  brotliAfterHits: field({
    env: 'WIKIEDGE_BROTLI_AFTER_HITS',
    parse: int(0, 1_000_000),
    default: 4,
    unit: 'count',
    doc: 'stored answers are kept in gzip; one that clients preferring br have asked for this many times is given a br form too (quality 11, made in the background, ~19 % smaller than the gzip; its bytes charged to the store budget of the client whose hit asked for it, `WIKIEDGE_CLIENT_STORE_BYTES_PER_SECOND`); `0`: never (br clients get gzip). See "Compression"',
  }),
  ttlPublicSeconds: field({
    env: 'WIKIEDGE_TTL_PUBLIC_SECONDS',
    parse: int(1, 86_400),
    default: 60,
    unit: 'seconds',
    doc: 'shared TTL when the wiki sets no max age of its own',
  }),
  ttlSessionSeconds: field({
    env: 'WIKIEDGE_TTL_SESSION_SECONDS',
    parse: int(1, 3_600),
    default: 10,
    unit: 'seconds',
    doc: 'per-session TTL when the wiki gives no `max-age`',
  }),
  ttlFollowedSeconds: field({
    env: 'WIKIEDGE_TTL_FOLLOWED_SECONDS',
    parse: int(1, 604_800),
    default: 3_600,
    unit: 'seconds',
    doc: 'shared TTL when the wiki sets no max age of its own, while the change follower (`WIKIEDGE_RC_FOLLOW`) is healthy: answers are then invalidated when the wiki changes what they depend on',
  }),
  ttlSessionFollowedSeconds: field({
    env: 'WIKIEDGE_TTL_SESSION_FOLLOWED_SECONDS',
    parse: int(1, 86_400),
    default: 300,
    unit: 'seconds',
    doc: "per-session TTL when the wiki gives no `max-age`, while the change follower is healthy (a rights change or block of the user ends its sessions' entries at once)",
  }),
  ttlClockSeconds: field({
    env: 'WIKIEDGE_TTL_CLOCK_SECONDS',
    parse: int(1, 3_600),
    default: 2,
    unit: 'seconds',
    doc: "cap on the TTL of answers that carry the wiki's clock (`curtimestamp=1`, siteinfo's `general.time`): bot frameworks read the wiki's time from them",
  }),
  ttlMaxSeconds: field({
    env: 'WIKIEDGE_TTL_MAX_SECONDS',
    parse: int(1, 604_800),
    default: 3_600,
    unit: 'seconds',
    doc: 'cap on every TTL',
  }),
  ttlJitterRatio: field({
    env: 'WIKIEDGE_TTL_JITTER_RATIO',
    parse: fraction(0.5),
    default: 0.1,
    unit: 'ratio',
    doc: 'TTLs are shortened by a random fraction from 0 up to this ratio so hot keys do not expire together',
  }),
  rcFollow: field({
    env: 'WIKIEDGE_RC_FOLLOW',
    parse: bool,
    default: false,
    unit: 'boolean',
    doc: "follow the wiki's `list=recentchanges` (straight at the wiki) and invalidate every cached answer that depends on what changed, log events included; with Redis one replica follows at a time. While it is healthy the `*_FOLLOWED_*` TTL defaults apply",
  }),
  rcPollMs: field({
    env: 'WIKIEDGE_RC_POLL_MS',
    parse: int(100, 600_000),
    default: 1_000,
    unit: 'ms',
    doc: 'how often the change follower asks the wiki for recent changes',
  }),
  rcMaxLagSeconds: field({
    env: 'WIKIEDGE_RC_MAX_LAG_SECONDS',
    parse: int(5, 3_600),
    default: 60,
    unit: 'seconds',
    doc: "the change follower vouches for what is cached (the `*_FOLLOWED_*` TTLs) only while its cursor is at most this far behind the wiki's clock; further behind (a burst of rows it cannot read in one poll, rows coming faster than it reads them) it takes a gap (`behind`: everything cached before is refreshed at next use) and goes on from the wiki's newest row",
  }),
  reboundPurgeMs: field({
    env: 'WIKIEDGE_REBOUND_PURGE_MS',
    parse: int(0, 60_000),
    default: 1_000,
    unit: 'ms',
    doc: "a change (the wiki's PURGE, the follower's row, a write through the gateway) invalidates what it touches at once and again this long after (MediaWiki's `$wgCdnReboundPurgeDelay`, done by the gateway): MediaWiki answers a write before its post-send updates write the links tables, Wikibase's terms and sitelinks and the search index, so a read in between is answered from the old ones. Raise it for a wiki whose post-send work or database replicas lag longer; 0: off",
  }),
  articlePath: field({
    env: 'WIKIEDGE_ARTICLE_PATH',
    parse: articlePath,
    default: '/wiki/$1',
    unit: 'path',
    doc: "the wiki's `$wgArticlePath`, for mapping the PURGEs MediaWiki sends (`$wgCdnServers`) to pages; `{script}/$1` and `{script}?title=$1` are always understood",
  }),
  uploadPath: field({
    env: 'WIKIEDGE_UPLOAD_PATH',
    parse: apiPath,
    default: '/w/images',
    unit: 'path',
    doc: "the wiki's `$wgUploadPath`: a PURGE of a file's URL there invalidates its File: page",
  }),
  graceSeconds: field({
    env: 'WIKIEDGE_GRACE_SECONDS',
    parse: int(0, 86_400),
    default: 10,
    unit: 'seconds',
    doc: "serve a shared entry stale this long past its TTL while one refresh runs (a session's entry never: its TTL bounds a logout made elsewhere)",
  }),
  staleIfErrorSeconds: field({
    env: 'WIKIEDGE_STALE_IF_ERROR_SECONDS',
    parse: int(0, 86_400),
    default: 300,
    unit: 'seconds',
    doc: 'serve stale this long past the TTL when the wiki fails',
  }),
  coalesceWaitMs: field({
    env: 'WIKIEDGE_COALESCE_WAIT_MS',
    parse: int(1, 600_000),
    default: 10_000,
    unit: 'ms',
    doc: 'longest a request waits for an identical one in flight',
  }),
  maxUrlBytes: field({
    env: 'WIKIEDGE_MAX_URL_BYTES',
    parse: int(256, 1_048_576),
    default: 8_192,
    unit: 'bytes',
    doc: 'longer request targets get 414',
  }),
  debuginfo: field({
    env: 'WIKIEDGE_DEBUGINFO',
    parse: oneOf(DEBUGINFO_MODES),
    default: 'strip',
    unit: 'choice',
    doc: "`strip` (record, then remove), `pass` (record, keep, never store), `off` (never parse; a write's answer is still read, for what it changed)",
  }),
  modules: field({
    env: 'WIKIEDGE_MODULES',
    parse: moduleRules,
    default: {},
    unit: 'json',
    doc: 'per-module rules, JSON: `{"wbavailablebadges":{"ttlSeconds":600},"parse":{"pass":true},"filearchive":{"shareAnonymousPrivate":true}}`; for `action=query` the keys are the list/prop/meta/generator submodules',
  }),
  shutdownGraceMs: field({
    env: 'WIKIEDGE_SHUTDOWN_GRACE_MS',
    parse: int(0, 600_000),
    default: 10_000,
    unit: 'ms',
    doc: 'on SIGTERM, once the listener is closed, how long in-flight requests may take before their connections are closed',
  }),
  shutdownDrainMs: field({
    env: 'WIKIEDGE_SHUTDOWN_DRAIN_MS',
    parse: int(0, 600_000),
    default: 0,
    unit: 'ms',
    doc: "on SIGTERM, how long to go on serving before the listener closes: `/readyz` answers 503 at once and every answer says `Connection: close`, so a load balancer that follows `/readyz` stops sending first. Set it above the balancer's check interval × failure threshold; the whole shutdown then takes up to drain + grace",
  }),
  workers: field({
    env: 'WIKIEDGE_WORKERS',
    // 1 is one process (no cluster); more runs a node:cluster primary (admin listener, no
    // gateway) and that many workers, each with its own local tier.
    parse: workerCount(256, availableParallelism),
    default: 1,
    unit: 'count',
    doc: 'processes serving the public port: `1` is one process; a larger number, or `auto` (one per CPU, `os.availableParallelism()`), runs a node:cluster primary and that many workers (see "Using all cores")',
  }),
  ...REDIS_FIELDS,
};

/** The validated, deep-frozen configuration: one property per entry of FIELDS, typed by its parser. */
export type Config = { readonly [K in keyof typeof FIELDS]: ValueOf<(typeof FIELDS)[K]> };

type NumericKey = { [K in keyof Config]: Config[K] extends number ? K : never }[keyof Config];

/** Rules between two keys, checked once every key is valid: the first must not exceed the second. */
export const NOT_ABOVE: readonly (readonly [NumericKey, NumericKey])[] = [
  ['ttlPublicSeconds', 'ttlMaxSeconds'],
  ['ttlFollowedSeconds', 'ttlMaxSeconds'],
  ['clientHeadersTimeoutMs', 'clientRequestTimeoutMs'],
  ['cacheMaxEntryBytes', 'cacheSharedMaxBytes'],
];

export type ConfigKey = keyof Config;

/** The shared Redis tier is configured, whichever way it is reached (a URL or Sentinels). */
export function usesRedis(config: Pick<Config, 'redisUrl' | 'redisSentinels' | 'redisClusterNodes'>): boolean {
  return config.redisUrl !== '' || config.redisSentinels.length > 0 || config.redisClusterNodes.length > 0;
}

/** The table as a list, in its order: the order of loading, the README, --help and --print-config. */
export const FIELD_LIST = Object.entries(FIELDS) as unknown as readonly (readonly [ConfigKey, Field<unknown>])[];

/** Every environment variable the table defines. */
export const CONFIG_KEYS: readonly string[] = FIELD_LIST.map(([, f]) => f.env);
