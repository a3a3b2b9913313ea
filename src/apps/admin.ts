/**
 * The admin listener: /healthz, /readyz, /upstreamz, /metrics, POST /purge (what it asks for:
 * admin-purge-request.ts), and seeing into the cache: /cache, /cache/stats, /config, POST /trace
 * (admin-inspect.ts). One set of routes for both ways
 * the gateway runs: a single process answers from its own gateway (localAdmin), a cluster primary
 * from its workers over IPC (cluster/primary.ts, cluster/inspect-workers.ts). The routes only parse, pick the status and log; what
 * they report comes from an AdminBackend.
 */
import { timingSafeEqual } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import { isIP } from 'node:net';
import Fastify, { type FastifyBaseLogger, LogController, type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import { describePurge, logPurge } from '../observe/access-log.js';
import { answerClientError } from '../steps/error-reply.js';
import { EVERY_PEER, headerString, requestIdOf } from '../http/forwarding.js';
import type { Logger } from 'pino';
import type { PurgeMessage, PurgeResult } from '../cache/purge.js';
import type { Gateway } from '../gateway/gateway.js';
import type { ProbeResult, UpstreamState } from '../upstream/probe.js';
import { type Inspection, localInspection, traceInputOf, urlKeyOf } from './admin-inspect.js';
import { purgeMessageOf } from './admin-purge-request.js';

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

/**
 * An admin purge's answer: what was removed, in a cluster how many workers applied it, and with
 * Redis what the other replicas said they removed (`replicas`, with then the `total` of all).
 */
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
  /** GET /cache, /cache/stats, /config, POST /trace (apps/admin-inspect.ts); absent (501) only for a gateway built without its public app. */
  readonly inspection?: Inspection | undefined;
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

  // Reading the cache, the configuration or a trace needs what a purge needs: the token (or,
  // without one, a literal Host), and no browser's cross-site marks (adminRefusal).
  const guarded = {
    onRequest: (request: FastifyRequest, reply: FastifyReply, done: () => void) => {
      const refusal = adminRefusal(request.headers, options.token, true);
      if (!refusal) return done();
      request.log.warn({ method: request.method, path: request.url.split('?')[0], refused: refusal.reason }, 'admin request refused');
      if (refusal.status === 401) reply.header('www-authenticate', 'Bearer realm="wikiedge-admin"');
      void reply.code(refusal.status).send({ error: refusal.reason });
    },
  };
  const inspection = (reply: FastifyReply): Inspection | undefined => {
    if (!backend.inspection) void reply.code(501).send({ error: 'no public listener to inspect' });
    return backend.inspection;
  };

  app.get('/cache', guarded, async (request, reply) => {
    const seen = inspection(reply);
    if (!seen) return reply;
    const urlKey = urlKeyOf((request.query as Record<string, unknown>)['url'], seen.apiPath);
    if (typeof urlKey !== 'string') return reply.code(400).send(urlKey);
    return seen.cache(urlKey);
  });

  app.get('/cache/stats', guarded, async (_request, reply) => {
    const seen = inspection(reply);
    return seen ? seen.stats() : reply;
  });

  app.get('/config', guarded, async (_request, reply) => {
    const seen = inspection(reply);
    return seen ? { config: seen.config() } : reply;
  });

  app.post('/trace', async (request, reply) => {
    const seen = inspection(reply);
    if (!seen) return reply;
    const given = { ...(isObject(request.body) ? request.body : {}), ...(request.query as Record<string, unknown>) };
    const input = traceInputOf(given);
    if ('error' in input) return reply.code(400).send(input);
    try {
      return await seen.trace(input);
    } catch (err) {
      // A cluster's worker that did not answer in time, or none listening (cluster/inspect-workers.ts).
      return reply.code(503).send({ error: `the trace could not be run: ${err instanceof Error ? err.message : String(err)}` });
    }
  });

  /**
   * Admin purges, from the query or a JSON body: one of `all=1`, `module=`, `url=`, `prefix=`,
   * `pattern=`, `title=`, `tag=` (apps/admin-purge-request.ts). What cannot be done is a 400 that
   * says why; a purge that removed nothing a 200 that says so.
   */
  app.post('/purge', async (request, reply) => {
    const given = { ...(isObject(request.body) ? request.body : {}), ...(request.query as Record<string, unknown>) };
    const seen = backend.inspection;
    // The namespaces only for a title (a cluster asks a worker for them: cluster/inspect-workers.ts).
    const namespaces = seen && given['title'] !== undefined ? await seen.namespaces() : undefined;
    const message = purgeMessageOf(given, {
      apiPath: options.apiPath,
      ...(namespaces && { namespaces }),
      ...(seen && { operatorModules: seen.operatorModules() }),
    });
    if (typeof message === 'string') return reply.code(400).send({ error: message });
    const result = await backend.purge(message);
    const total = result.purged + (result.redisPurged ?? 0) + (result.replicas?.purged ?? 0);
    const title = typeof given['title'] === 'string' ? given['title'] : undefined;
    logPurge(request.log as Logger, { source: 'admin', ...(title !== undefined ? { kind: 'title', what: title } : describePurge(message)), ...result });
    // A worker that did not answer may still hold the entries: the caller should retry.
    // With the other replicas' count, the total of every copy removed; a replica that did not
    // answer in time is named (replicas.missing), not a 503: the purge reached Redis and its
    // channel, and a replica that lost the channel takes a gap when it is back (tiered-storage.ts).
    const answer = result.replicas ? { ...result, total } : result;
    return reply.code(result.missedWorkers ? 503 : 200).send(total === 0 ? { ...answer, note: 'nothing matched: no entry was removed' } : answer);
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
export function adminRefusal(headers: IncomingHttpHeaders, token: string, reading = false): { status: number; reason: string } | undefined {
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
  // A read changes nothing a cross-site page could want changed; what it could want is the answer,
  // which a browser gives it only for its own origin: a rebound name, refused above.
  if (reading) return undefined;
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

/** What the single process's admin listener reads of its own state. */
export interface LocalState {
  readonly shuttingDown: boolean;
  /** The public listener is listening. */
  readonly listening: boolean;
}

/** The single process's admin backend: its own gateway, and its own upstream probe. */
export function localAdmin(gw: Gateway, state: LocalState, probe: UpstreamHealth, publicApp?: FastifyInstance): AdminBackend {
  return {
    inspection: publicApp && localInspection(gw, publicApp),
    get shuttingDown() {
      return state.shuttingDown;
    },
    readiness: () => (state.listening ? { ready: true } : { ready: false, reason: 'not-listening' }),
    upstream: () => ({ state: probe.state, last: probe.last }),
    metrics: async () => ({ contentType: gw.registry.contentType, body: await gw.registry.metrics() }),
    // With Redis: removed there too, and on every replica through the purge channel, whose
    // counts the answer waits for (bounded: cache/redis/replica-acks.ts).
    purge: (message) => {
      gw.metrics.purgeRequested('admin');
      return gw.storage.purge(message, { countReplicas: true });
    },
  };
}
