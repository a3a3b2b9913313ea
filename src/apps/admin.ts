/**
 * The admin listener: /healthz, /readyz, /metrics, POST /purge. One set of routes for both ways
 * the gateway runs: a single process answers from its own gateway (localAdmin), a cluster primary
 * from its workers over IPC (cluster/primary.ts). The routes only parse, pick the status and log; what
 * they report comes from an AdminBackend.
 */
import { timingSafeEqual } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import { isIP } from 'node:net';
import Fastify, { type FastifyBaseLogger, LogController, type FastifyInstance } from 'fastify';
import { describePurge, logPurge } from '../observe/access-log.js';
import { canonicalQuery } from '../policy/request.js';
import { answerClientError } from '../steps/error-reply.js';
import { headerString } from '../http/forwarding.js';
import { EVERY_PEER, requestIdOf } from '../words/request-id.js';
import { parsePhpQuery } from '../mediawiki/php-input.js';
import { isApiTarget, parseTarget } from '../words/target.js';
import type { Logger } from 'pino';
import type { PurgeMessage, PurgeResult } from '../cache/purge.js';
import type { Gateway } from '../gateway/gateway.js';
import type { ProbeResult, UpstreamState } from '../upstream/probe.js';

/**
 * /readyz: whether this gateway can serve. Ready = listening, and not shutting down. The cache is
 * always usable: the local tier lives in the process, and a Redis tier that is down is skipped
 * (the local tier serves; `wikiedge_redis_up` says so). The wiki is not asked: see
 * upstream/probe.ts for why, and /upstreamz for its health.
 */
export type Readiness = { readonly ready: true } | { readonly ready: false; readonly reason: 'shutting-down' | 'no-worker-listening' | 'not-listening' };

/** /upstreamz: the background probe's last result (upstream/probe.ts). */
export interface UpstreamHealth {
  readonly state: UpstreamState;
  readonly last: ProbeResult | undefined;
}

/** An admin purge's answer: what was removed, and in a cluster how many workers applied it. */
export interface AdminPurgeResult extends PurgeResult {
  /** Workers that applied the purge (cluster only). */
  readonly workers?: number;
  /** Workers that did not answer in time (cluster only): their entries may still be there. */
  readonly missedWorkers?: number;
}

export interface AdminBackend {
  /** True from the moment shutdown starts: /readyz then answers 503. */
  readonly shuttingDown: boolean;
  /** Whether the gateway can serve, from what the process knows: no I/O, so probes answer at once. */
  readiness(): Readiness;
  /** The wiki's health as the background probe last saw it: no I/O either. */
  upstream(): UpstreamHealth;
  metrics(): Promise<{ readonly contentType: string; readonly body: string }>;
  /** Apply an admin purge wherever it must go (Redis, every local tier). */
  purge(message: PurgeMessage): Promise<AdminPurgeResult>;
}

export interface AdminOptions {
  /** WIKIEDGE_ADMIN_TOKEN: every mutating request must carry `Authorization: Bearer <token>`. */
  readonly token: string;
  /** WIKIEDGE_METRICS_TOKEN: when set, `GET /metrics` needs `Authorization: Bearer <token>`. */
  readonly metricsToken?: string;
  /** WIKIEDGE_API_PATH: to turn a `url=` purge into the URL key the store files entries under. */
  readonly apiPath: string;
}

export function buildAdmin(log: Logger, backend: AdminBackend, options: AdminOptions): FastifyInstance {
  const app = Fastify({
    loggerInstance: log.child({ listener: 'admin' }) as FastifyBaseLogger,
    logController: new LogController({ disableRequestLogging: true }),
    genReqId: (req) => requestIdOf(req.headers, undefined, EVERY_PEER),
    clientErrorHandler: answerClientError,
    bodyLimit: 64 * 1024,
  });
  // Every answer says X-Cache and X-Request-Id, as the public listener's do (adminCacheWord).
  app.addHook('onSend', (request, reply, payload, done) => {
    reply.header('x-request-id', request.id);
    reply.header('x-cache', adminCacheWord(request.routeOptions.url, reply.statusCode));
    done(null, payload);
  });
  // JSON only (anything else is refused before it is read, adminRefusal), and an empty body is {}:
  // `curl -X POST -H 'Content-Type: application/json' '…/purge?all=1'` is the documented form.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (_req, text, done) => {
    if (text === '' || text === undefined) return done(null, {});
    try {
      done(null, JSON.parse(text as string));
    } catch {
      done(Object.assign(new Error('the body is not JSON'), { statusCode: 400 }), undefined);
    }
  });
  app.addContentTypeParser('*', (_req, _payload, done) => done(null, undefined));

  // Before anything is read: a mutating request a browser could have sent cross-site, or one
  // without the token, never reaches a route.
  app.addHook('onRequest', (request, reply, done) => {
    if (SAFE_METHODS.has(request.method)) return done();
    const refusal = adminRefusal(request.headers, options.token);
    if (!refusal) return done();
    request.log.warn({ method: request.method, path: request.url.split('?')[0], refused: refusal.reason }, 'admin request refused');
    if (refusal.status === 401) reply.header('www-authenticate', 'Bearer realm="wikiedge-admin"');
    void reply.code(refusal.status).send({ error: refusal.reason });
  });

  app.get('/healthz', async () => ({ status: 'ok' }));

  app.get('/readyz', async (_request, reply) => {
    // A load balancer following /readyz stops sending as soon as shutdown starts.
    const readiness: Readiness = backend.shuttingDown ? { ready: false, reason: 'shutting-down' } : backend.readiness();
    if (readiness.ready) return { status: 'ready' };
    return reply.code(503).send({ status: 'unready', reason: readiness.reason });
  });

  /**
   * The wiki's health for operators who want a probe of it (a monitoring check, not a Kubernetes
   * readiness probe: see upstream/probe.ts): 200 while the last background probe got a 200,
   * 503 while it did not or before the first one ended.
   */
  app.get('/upstreamz', async (_request, reply) => {
    const { state, last } = backend.upstream();
    const body = {
      upstream: state,
      ...(last && {
        result: last.result,
        ...(last.status !== undefined && { status: last.status }),
        durationMs: Math.round(last.durationMs),
        at: new Date(last.at).toISOString(),
      }),
    };
    return reply.code(state === 'up' ? 200 : 503).send(body);
  });

  // Prometheus sends the token with its scrape config's `authorization` block (credentials_file).
  app.get('/metrics', async (request, reply) => {
    const metricsToken = options.metricsToken ?? '';
    if (metricsToken !== '' && !bearerMatches(headerString(request.headers.authorization) ?? '', metricsToken)) {
      request.log.warn({ method: request.method, path: '/metrics', refused: 'no metrics token' }, 'admin request refused');
      reply.header('www-authenticate', 'Bearer realm="wikiedge-metrics"');
      return reply.code(401).send({ error: 'Authorization: Bearer <WIKIEDGE_METRICS_TOKEN> required' });
    }
    const { contentType, body } = await backend.metrics();
    reply.header('content-type', contentType);
    return body;
  });

  /**
   * Admin purges, from the query or a JSON body: `all=1`, `module=` (a MediaWiki module name, or
   * the `module` label of the metrics: `query+siteinfo`), `prefix=` (of the URL key: the api.php
   * path and the query sorted), or `url=` (an api.php URL or path in any parameter order).
   */
  app.post('/purge', async (request, reply) => {
    const given = { ...(isObject(request.body) ? request.body : {}), ...(request.query as Record<string, unknown>) };
    const message = purgeMessageOf(given, options.apiPath);
    if (typeof message === 'string') return reply.code(400).send({ error: message });
    const result = await backend.purge(message);
    const total = result.purged + (result.redisPurged ?? 0);
    logPurge(request.log as Logger, { source: 'admin', ...describePurge(message), ...result });
    // A worker that did not answer may still hold the entries: the caller should retry.
    return reply.code(result.missedWorkers ? 503 : 200).send(total === 0 ? { ...result, note: 'nothing matched: no entry was removed' } : result);
  });
  return app;
}

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * The admin listener's X-Cache, in the public listener's words (words/outcomes.ts): `purge` for an
 * answer of POST /purge, `error` for a request refused or not found, `pass` for the rest (the
 * gateway's own answers, never cached; /readyz's and /upstreamz's 503 included, which are
 * answers, not errors).
 */
export function adminCacheWord(route: string | undefined, status: number): 'purge' | 'error' | 'pass' {
  if (route === '/purge' && (status === 200 || status === 503)) return 'purge';
  if (status >= 400 && !(status === 503 && (route === '/readyz' || route === '/upstreamz'))) return 'error';
  return 'pass';
}

/**
 * Why a mutating admin request is refused, or undefined. A page open in the operator's browser
 * (or a DNS-rebound name pointing at the admin address) can send a CORS "simple request":
 * POST with a form or text/plain body, any Origin, any Host. So:
 * - a browser's cross-site marks refuse it: an `Origin` whose host is not the `Host`, or
 *   `Sec-Fetch-Site` other than same-origin/none (Fetch Metadata);
 * - with WIKIEDGE_ADMIN_TOKEN, `Authorization: Bearer <token>` is required (a header a browser
 *   only sends cross-site after a preflight, which this listener never grants);
 * - without it: the Host must be an IP literal or localhost (a rebound name is neither), and the
 *   body `application/json` (not a simple-request type: a cross-site browser must preflight).
 */
export function adminRefusal(headers: IncomingHttpHeaders, token: string): { status: number; reason: string } | undefined {
  const host = headerString(headers.host) ?? '';
  const fetchSite = headerString(headers['sec-fetch-site']);
  if (fetchSite !== undefined && fetchSite !== 'same-origin' && fetchSite !== 'none') return { status: 403, reason: 'cross-site request (Sec-Fetch-Site)' };
  const origin = headerString(headers.origin);
  if (origin !== undefined && originHost(origin) !== host.toLowerCase()) return { status: 403, reason: 'cross-origin request (Origin is not this host)' };
  if (token) {
    const given = headerString(headers.authorization) ?? '';
    return bearerMatches(given, token) ? undefined : { status: 401, reason: 'Authorization: Bearer <WIKIEDGE_ADMIN_TOKEN> required' };
  }
  if (!isLiteralHost(host)) return { status: 403, reason: 'Host must be an IP address or localhost (or set WIKIEDGE_ADMIN_TOKEN)' };
  const type = (headerString(headers['content-type']) ?? '').split(';', 1)[0]!.trim().toLowerCase();
  if (type !== 'application/json') return { status: 415, reason: 'Content-Type: application/json required' };
  return undefined;
}

function bearerMatches(given: string, token: string): boolean {
  const expected = Buffer.from(`Bearer ${token}`);
  const actual = Buffer.from(given);
  return actual.length === expected.length && timingSafeEqual(actual, expected);
}

function originHost(origin: string): string | undefined {
  try {
    return new URL(origin).host.toLowerCase();
  } catch {
    return undefined;
  }
}

/** `127.0.0.1:8081`, `[::1]:8081`, `localhost:8081`: names a DNS answer cannot rebind. */
function isLiteralHost(host: string): boolean {
  const h = host.toLowerCase();
  if (h.startsWith('[')) return isIP(h.slice(1, h.indexOf(']'))) === 6;
  const name = h.includes(':') ? h.slice(0, h.lastIndexOf(':')) : h;
  return name === 'localhost' || isIP(name) === 4;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** The purge a request asks for, or why it is not one. */
export function purgeMessageOf(given: Record<string, unknown>, apiPath: string): PurgeMessage | string {
  const text = (k: string) => (typeof given[k] === 'string' && given[k] !== '' ? (given[k] as string) : undefined);
  if (given['all'] === '1' || given['all'] === true || given['all'] === 'true') return { kind: 'all' };
  const module = text('module');
  if (module !== undefined) {
    // The metrics' label for a query submodule is `query+<name>` (its `+` arrives as a space when
    // the query string was not percent-encoded): the same entries.
    const label = /^query[+ ]/.exec(module);
    const name = label ? module.slice(label[0].length) : module;
    if (name === 'multiple' || name === 'other' || name === '') return `module=${module} is a folded metrics label, not one module`;
    return { kind: 'module', module: name };
  }
  const prefix = text('prefix');
  if (prefix !== undefined) return { kind: 'prefix', prefix };
  const url = text('url');
  if (url !== undefined) {
    const target = parseTarget(url);
    if (!isApiTarget(target, apiPath)) return `url= must be an api.php URL (${apiPath}?…)`;
    return { kind: 'url', urlKey: `${apiPath}?${canonicalQuery(parsePhpQuery(target.rawQuery))}` };
  }
  return 'give one of all=1, module=, prefix= or url=';
}

/** What the single process's admin listener reads of its own state. */
export interface LocalState {
  readonly shuttingDown: boolean;
  /** The public listener is listening. */
  readonly listening: boolean;
}

/** The single process's admin backend: its own gateway, and its own upstream probe. */
export function localAdmin(gw: Gateway, state: LocalState, probe: UpstreamHealth): AdminBackend {
  return {
    get shuttingDown() {
      return state.shuttingDown;
    },
    readiness: () => (state.listening ? { ready: true } : { ready: false, reason: 'not-listening' }),
    upstream: () => ({ state: probe.state, last: probe.last }),
    metrics: async () => ({ contentType: gw.registry.contentType, body: await gw.registry.metrics() }),
    // With Redis: removed there too, and on every replica through the purge channel.
    purge: (message) => {
      gw.metrics.purgeRequested('admin');
      return gw.storage.purge(message);
    },
  };
}
