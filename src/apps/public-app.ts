/**
 * The public listener: every request to the wiki's URL space enters here. api.php goes through
 * the cache flow (steps/flow.ts), PURGE through the purge step, everything else streams through.
 * The request's record is begun here and finished once (steps/request-record.ts): one metrics update
 * and one log line per request.
 */
import Fastify, {
  type FastifyBaseLogger,
  LogController,
  type FastifyInstance,
  type FastifyReply,
  type FastifyRequest,
  type preParsingHookHandler,
  type preValidationHookHandler,
  type RouteHandlerMethod,
} from 'fastify';
import { createServer, type IncomingMessage, type ServerOptions } from 'node:http';
import type { ChildLoggerOptions, Logger } from 'pino';
import { logPurge, type PurgeFacts } from '../observe/access-log.js';
import { lazyRequestLogger } from '../observe/logging.js';
import { serveApi } from '../steps/flow.js';
import { serveFreshHit, SHORT_PATH_METHODS } from '../steps/fresh-hit.js';
import { canonicalQuery } from '../policy/request.js';
import { changeFromPurge } from '../policy/changes.js';
import { type PurgePaths, purgedTitle } from '../mediawiki/purge-url.js';
import { answerClientError, replyWithError } from '../steps/error-reply.js';
import { GatewayError } from '../words/errors.js';
import { headerString, requestIdOf } from '../http/forwarding.js';
import { clientAddress } from '../limits/client-key.js';
import type { Gateway } from '../gateway/gateway.js';
import { streamThrough } from '../steps/passthrough.js';
import { parsePhpQuery } from '../mediawiki/php-input.js';
import { isApiTarget, originForm, parseTarget, targetTooLong } from '../words/target.js';
import { beginRecord, finishRecord, noteOutcome, noteTarget, type RequestRecord } from '../steps/request-record.js';
import type { RequestTarget } from '../words/target.js';

const ALL_METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'OPTIONS', 'PATCH', 'PURGE'];
/** The methods whose body Fastify never reads (fastify/lib/handle-request.js). */
const BODYLESS_METHODS = ['GET', 'HEAD'];
/** The methods a client may send to the wiki through the gateway (PURGE is the gateway's own). */
const FORWARDED_METHODS = ALL_METHODS.filter((m) => m !== 'PURGE').join(', ');
/** The options Fastify hands a serverFactory, defaults filled in (fastify/lib/server.js). */
interface FactoryOptions {
  readonly http?: ServerOptions;
  readonly keepAliveTimeout: number;
  readonly requestTimeout: number;
  readonly connectionTimeout: number;
  readonly maxRequestsPerSocket: number;
}

/** Content-Type headers set aside while Fastify chooses a body parser (see the preParsing hook). */
const contentTypes = new WeakMap<IncomingMessage, string>();

export function buildPublic(gw: Gateway): FastifyInstance {
  const app = Fastify({
    loggerInstance: gw.log as FastifyBaseLogger,
    // Fastify's own request logging costs ~23 µs per request: one line of ours instead.
    logController: new LogController({ disableRequestLogging: true, requestIdLogLabel: 'reqId' }),
    // request.log's child logger made only when a request logs through it.
    childLoggerFactory: (logger, bindings, options) => lazyRequestLogger(logger as Logger, bindings, options as ChildLoggerOptions) as FastifyBaseLogger,
    genReqId: (req) => requestIdOf(req.headers, req.socket.remoteAddress, gw.trusted),
    // Requests Node's parser refuses (400, 431, 408) still say X-Cache and X-Request-Id.
    clientErrorHandler: answerClientError,
    // Absolute-form targets (`PURGE http://wiki/w/index.php/X`, what $wgCdnServers senders use) route as origin-form.
    rewriteUrl: (req) => originForm(req.url ?? '/'),
    // A target Fastify cannot decode (bad percent-encoding) gets our 400, in MediaWiki's shape
    // for api.php, without echoing the URL back.
    // Fastify answers those before the onRequest hook: start the request's record here so it
    // is counted and logged like any other.
    frameworkErrors: (_err, request, reply) => {
      beginRecord(gw, request, reply);
      sendGatewayError(gw, request, reply, new GatewayError('wikiedge-bad-request', { info: 'The request URL is malformed.' }));
    },
    // Fresh local hits are answered before Fastify routes them (steps/fresh-hit.ts); the server
    // gets the settings Fastify would give the one it creates itself.
    serverFactory: (handler, options) => {
      const o = options as unknown as FactoryOptions;
      // Node refuses a head over maxHeaderSize (16 KiB) with a bare 431 before any handler: leave
      // room for a request line of WIKIEDGE_MAX_URL_BYTES, so longer targets get our 414.
      const maxHeaderSize = Math.max(16 * 1024, gw.config.maxUrlBytes + 8 * 1024);
      // Slow clients (slowloris): the headers must arrive within WIKIEDGE_CLIENT_HEADERS_TIMEOUT_MS
      // and the whole request within WIKIEDGE_CLIENT_REQUEST_TIMEOUT_MS, else Node answers 408 and
      // closes. Node looks for such connections every connectionsCheckingInterval (30 s by
      // default): often enough that a cut-off comes within a quarter of the headers timeout.
      const connectionsCheckingInterval = Math.max(250, Math.min(1_000, gw.config.clientHeadersTimeoutMs / 4));
      const server = createServer({ ...o.http, maxHeaderSize, connectionsCheckingInterval }, (req, res) => {
        if (!SHORT_PATH_METHODS.has(req.method) || !server.listening || !serveFreshHit(gw, req, res)) handler(req, res);
      });
      gw.metrics.watchClientConnections(server);
      server.keepAliveTimeout = o.keepAliveTimeout;
      server.headersTimeout = gw.config.clientHeadersTimeoutMs;
      server.requestTimeout = gw.config.clientRequestTimeoutMs;
      server.setTimeout(o.connectionTimeout);
      if (o.maxRequestsPerSocket > 0) server.maxRequestsPerSocket = o.maxRequestsPerSocket;
      return server;
    },
    return503OnClosing: false,
    forceCloseConnections: false,
    routerOptions: { ignoreDuplicateSlashes: false, maxParamLength: 10_000 },
  });
  app.addHttpMethod('PURGE');
  app.decorateRequest('edge', null as unknown as RequestRecord);
  // Bodies are never parsed: they are streamed to the wiki as they come.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', (_req, _payload, done) => done(null, undefined));
  // Nor is their Content-Type: Fastify refuses one it cannot parse (`;;;`, `a/b c`) with 415
  // before any route runs, while PHP reads such a body as no form at all and MediaWiki answers
  // (the query string decides). The header is set aside while Fastify looks for a parser and
  // put back before the route, which forwards it as it came. Hooks of the routes of methods
  // that may carry a body: Fastify looks for no parser for GET and HEAD
  // (fastify/lib/handle-request.js), whose route runs no hook of these (a bound call and two
  // hook runs fewer per miss).
  const setTypeAside: preParsingHookHandler = (request, _reply, payload, done) => {
    const type = request.raw.headers['content-type'];
    if (type !== undefined) {
      contentTypes.set(request.raw, type);
      delete request.raw.headers['content-type'];
    }
    done(null, payload);
  };
  const putTypeBack: preValidationHookHandler = (request, _reply, done) => {
    const type = contentTypes.get(request.raw);
    if (type !== undefined) request.raw.headers['content-type'] = type;
    done();
  };
  // Callback-style hooks: cheaper than async ones on the hit path.
  app.addHook('onRequest', (request, reply, done) => {
    beginRecord(gw, request, reply);
    if (targetTooLong(request.raw.url ?? '/', gw.config.maxUrlBytes)) {
      sendGatewayError(gw, request, reply, new GatewayError('wikiedge-uri-too-long'));
      return;
    }
    done();
  });

  app.addHook('onResponse', (request, reply, done) => {
    finishRecord(gw, request, reply.statusCode);
    done();
  });

  app.setErrorHandler((err, request, reply) => {
    request.log.error({ err }, 'unhandled error');
    const status = (err as { statusCode?: number }).statusCode;
    const message = err instanceof Error ? err.message : String(err);
    const gatewayError =
      status && status >= 400 && status < 500
        ? new GatewayError('wikiedge-bad-request', { cause: err, info: message })
        : new GatewayError('wikiedge-internal', { cause: err });
    return sendGatewayError(gw, request, reply, gatewayError);
  });

  // A method Node parses but no route takes (TRACE, CONNECT, WebDAV's PROPFIND, …): 405 and
  // Allow in the gateway's words (X-Cache, X-Request-Id, MediaWiki's shape on api.php), not
  // Fastify's bare 404.
  app.setNotFoundHandler((request, reply) =>
    sendGatewayError(gw, request, reply, new GatewayError('wikiedge-method-not-allowed'), { allow: FORWARDED_METHODS }),
  );

  const handler: RouteHandlerMethod = async (request, reply) => {
    const target = parseTarget(request.raw.url ?? '/');
    noteTarget(request, target);
    if (target.hasFragment) {
      const info = 'The request target holds a fragment (#), which HTTP does not allow (RFC 9112 §3.2).';
      return sendGatewayError(gw, request, reply, new GatewayError('wikiedge-bad-request', { info }));
    }
    if (request.method === 'PURGE') return purge(gw, request, reply, target);
    if (isApiTarget(target, gw.config.apiPath)) return serveApi(gw, request, reply, target);
    return streamThrough(gw, request, reply, target);
  };
  app.route({ method: BODYLESS_METHODS, url: '*', handler });
  app.route({ method: ALL_METHODS.filter((m) => !BODYLESS_METHODS.includes(m)), url: '*', preParsing: setTypeAside, preValidation: putTypeBack, handler });
  return app;
}

/**
 * PURGE <url> from WIKIEDGE_PURGE_ALLOW removes every variant of that URL (what MediaWiki's
 * CdnCacheUpdate::naivePurge sends through $wgCdnServers). Anyone else: 405, as Varnish answers.
 */
/**
 * Whether a PURGE comes from where WIKIEDGE_PURGE_ALLOW says PURGEs come from: the connection's
 * peer, and, when the request says it was relayed, the client it names too. A TLS terminator on
 * the same host (the README's setup) relays its clients' PURGEs from loopback, which the default
 * allow list names: any client on the internet could evict any URL (commit 59f80cf,
 * test/integration/purge-trust.test.ts). A relayed PURGE is taken only from a trusted proxy that
 * names its client in X-Forwarded-For, and only when that client may purge: a proxy in the allow
 * list but not trusted (a front nginx given an address in the range of the wiki's network that
 * compose.yaml allows) relayed any client's PURGE as its own, and one that names its client only
 * in another header (RELAY_HEADERS) did too. A proxy that says nothing of its relaying is
 * indistinguishable from the wiki: docs/OPERATIONS.md says not to give one an allowed address
 * (test/in-process/attack-purge-relayed-by-a-proxy-not-trusted.test.ts). MediaWiki sends its
 * PURGEs straight to the gateway, with none of these headers (CdnCacheUpdate::naivePurge).
 */
/** Headers with which a proxy says it relayed a request (RFC 7239 Forwarded, RFC 9110 §7.6.3 Via) or names its client. */
const RELAY_HEADERS = ['forwarded', 'via', 'x-real-ip', 'true-client-ip', 'cf-connecting-ip', 'x-client-ip'] as const;

function purgeAllowed(gw: Gateway, request: FastifyRequest): boolean {
  const peer = request.socket.remoteAddress;
  if (!gw.purgeAllowed.has(peer)) return false;
  const headers = request.headers;
  const forwardedFor = headerString(headers['x-forwarded-for']);
  if (forwardedFor === undefined) return !RELAY_HEADERS.some((name) => headers[name] !== undefined);
  if (!gw.trusted.has(peer)) return false;
  return gw.purgeAllowed.has(clientAddress(peer, forwardedFor, gw.trusted));
}

async function purge(gw: Gateway, request: FastifyRequest, reply: FastifyReply, target: RequestTarget) {
  if (!purgeAllowed(gw, request)) {
    return replyWithError(gw, request, reply, new GatewayError('wikiedge-purge-forbidden'), {
      headers: { allow: FORWARDED_METHODS },
    });
  }
  noteOutcome(request, { disposition: 'purge' });
  let result: { purged: number; redisPurged?: number | null; page?: string } = { purged: 0 };
  let purged: PurgeFacts;
  if (target.rawPath === gw.config.apiPath) {
    // An api.php URL: every variant of it.
    const urlKey = `${gw.config.apiPath}?${canonicalQuery(parsePhpQuery(target.rawQuery))}`;
    result = await gw.storage.purge({ kind: 'url', urlKey });
    purged = { source: 'http-purge', kind: 'url', what: urlKey, ...result };
  } else {
    // A page's URL (what MediaWiki sends, mediawiki/purge-url.ts): every answer that depends
    // on the page now; on its namespace's lists, its entity type's searches or any change only
    // once the wiki confirms the page changed (invalidation/purge-confirmation.ts).
    const page = purgedTitle(request.raw.url ?? target.upstreamPath, purgePaths(gw));
    if (page !== undefined) {
      result = { purged: await gw.changes.apply([changeFromPurge(page, gw.changes.namespaces)]), page };
      await gw.purgeConfirmations.note(page);
    }
    purged = { source: 'page-url', kind: 'page', what: page ?? target.rawPath, purged: result.purged };
  }
  gw.metrics.purgeRequested(purged.source);
  logPurge(request.log as Logger, purged);
  return reply.code(200).header('content-type', 'application/json').header('x-cache', 'purge').header('x-request-id', request.id).send(result);
}

/** Where the wiki's index.php, articles and uploads live, for PURGE URLs (purge-url.ts). */
function purgePaths(gw: Gateway): PurgePaths {
  const api = gw.config.apiPath;
  return { script: `${api.slice(0, api.lastIndexOf('/'))}/index.php`, articlePath: gw.config.articlePath, uploadPath: gw.config.uploadPath };
}

/** Errors answered before a route (a bad or long target): MediaWiki's shape when it is api.php. */
function sendGatewayError(gw: Gateway, request: FastifyRequest, reply: FastifyReply, err: GatewayError, headers?: Record<string, string>) {
  const target = parseTarget(request.raw.url ?? '/');
  return replyWithError(gw, request, reply, err, { ...(isApiTarget(target, gw.config.apiPath) && { api: {} }), ...(headers && { headers }) });
}
