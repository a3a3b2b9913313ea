/**
 * The request's record, and what becomes of it: one metrics update and (for all but quiet hits)
 * one log line per request, whichever path served it: Fastify's (public-app.ts) or the fresh-hit
 * path (api/fresh-hit.ts). Log lines carry the path, never the query (it may hold tokens).
 *
 * The record is written here only: steps return what they decided and found (api/flow.ts
 * ApiOutcome); the route notes it (noteOutcome), the error writer notes an error (noteError),
 * and the record is read once when the request ends (finishRecord). A background refresh, which
 * answers nobody, never touches it.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
import type { Disposition, NoStoreReason, PassReason } from './outcomes.js';
import type { Gateway } from './gateway.js';
import type { RequestCell } from './request-metrics.js';
import type { RequestTarget } from './target.js';

/** Per-request facts, read once when the request ends for its log line and metrics. */
export interface RequestRecord {
  readonly startedAt: number;
  target: RequestTarget | undefined;
  /** The peer is in WIKIEDGE_TRUSTED_PROXIES (its X-Forwarded-* are believed). */
  readonly peerTrusted: boolean;
  disposition: Disposition;
  module: string;
  passReason: PassReason | undefined;
  notStored: NoStoreReason | undefined;
  upstreamMs: number | undefined;
  errorCode: string | undefined;
  /** Counted and logged once, whether the response finished or the client went away first. */
  recorded: boolean;
}

declare module 'fastify' {
  interface FastifyRequest {
    edge: RequestRecord;
  }
}

/** What a served request ended with, as its steps returned it. */
export interface Outcome {
  readonly disposition: Disposition;
  readonly passReason?: PassReason | undefined;
  readonly notStored?: NoStoreReason | undefined;
  readonly upstreamMs?: number | undefined;
}

/**
 * Start the record. A client that leaves before the answer is still a request: Fastify's
 * onResponse only runs when the response finishes, so it is counted when the response closes
 * (as 499, nginx's "client closed request"). Answers Fastify sends before the hooks run (the
 * malformed-URL 400) finish without an onResponse: counted here too, with their own status.
 */
export function beginRecord(gw: Gateway, request: FastifyRequest, reply: FastifyReply): void {
  request.edge = {
    startedAt: gw.now(),
    target: undefined,
    peerTrusted: gw.trusted.has(request.socket.remoteAddress),
    disposition: 'pass',
    module: '-',
    passReason: undefined,
    notStored: undefined,
    upstreamMs: undefined,
    errorCode: undefined,
    recorded: false,
  };
  reply.raw.once('close', () => {
    if (request.edge.recorded) return;
    if (reply.raw.writableFinished) finishRecord(gw, request, reply.raw.statusCode);
    else finishRecord(gw, request, 499, 'client-closed');
  });
}

export function noteTarget(request: FastifyRequest, target: RequestTarget, module?: string): void {
  request.edge.target = target;
  if (module !== undefined) request.edge.module = module;
}

export function noteOutcome(request: FastifyRequest, outcome: Outcome): void {
  const edge = request.edge;
  edge.disposition = outcome.disposition;
  edge.passReason = outcome.passReason;
  edge.notStored = outcome.notStored;
  edge.upstreamMs = outcome.upstreamMs;
}

export function noteError(request: FastifyRequest, code: string, upstreamMs?: number): void {
  const edge = request.edge;
  if (!edge) return;
  edge.disposition = 'error';
  edge.errorCode = code;
  if (upstreamMs !== undefined) edge.upstreamMs = upstreamMs;
}

/** Counted and logged once, from the record. */
export function finishRecord(gw: Gateway, request: FastifyRequest, status: number, errorCode?: string): void {
  const edge = request.edge;
  if (!edge || edge.recorded) return;
  edge.recorded = true;
  if (errorCode) noteError(request, errorCode);
  recordRequest(gw, request.log as Logger, {
    method: request.method,
    path: edge.target?.rawPath,
    module: edge.module,
    status,
    disposition: edge.disposition,
    seconds: (gw.now() - edge.startedAt) / 1000,
    upstreamMs: edge.upstreamMs,
    passReason: edge.passReason,
    notStored: edge.notStored,
    errorCode: edge.errorCode,
  });
}

export interface RequestFacts {
  /** Only where `log` is not already a child logger bound to the request id (Fastify's request.log). */
  readonly reqId?: string;
  readonly method: string;
  readonly path: string | undefined;
  readonly module: string;
  readonly status: number;
  readonly disposition: Disposition;
  readonly seconds: number;
  readonly upstreamMs?: number | undefined;
  readonly passReason?: PassReason | undefined;
  readonly notStored?: NoStoreReason | undefined;
  readonly errorCode?: string | undefined;
}

export function recordRequest(gw: Gateway, log: Logger, facts: RequestFacts): void {
  const requests = gw.metrics.requests;
  requests.record(requests.cell(facts.disposition, facts.module, gw.metrics.method(facts.method), facts.status), facts.seconds);
  if ((facts.disposition === 'hit' || facts.disposition === 'hit-shared') && !hitLogged(gw)) return;
  logRequest(log, facts);
}

/**
 * The fresh-hit path's record: the caller found its metrics cell once for the URL, and the
 * facts for a log line are only gathered when this hit is logged (WIKIEDGE_LOG_HITS), from
 * plain arguments: a closure to build them would be allocated on every hit.
 */
export function recordFreshHit(
  gw: Gateway,
  cell: RequestCell,
  seconds: number,
  reqId: string,
  method: string,
  path: string,
  module: string,
  status: number,
): void {
  gw.metrics.requests.record(cell, seconds);
  if (hitLogged(gw)) logRequest(gw.log, { reqId, method, path, module, status, disposition: cell.labels.disposition, seconds });
}

/** WIKIEDGE_LOG_HITS: none, every one, or a random share of them. */
function hitLogged(gw: Gateway): boolean {
  const share = gw.config.logHits;
  return share >= 1 || (share > 0 && gw.random() < share);
}

function logRequest(log: Logger, facts: RequestFacts): void {
  // One fixed shape, no spreads (object spread made this line ~3x dearer); pino leaves out
  // the fields that are undefined.
  log.info(
    {
      reqId: facts.reqId,
      method: facts.method,
      path: facts.path,
      module: facts.module,
      status: facts.status,
      cache: facts.disposition,
      ms: Math.round(facts.seconds * 1e6) / 1e3,
      upstreamMs: facts.upstreamMs,
      pass: facts.passReason,
      notStored: facts.notStored,
      error: facts.errorCode,
    },
    'request',
  );
}
