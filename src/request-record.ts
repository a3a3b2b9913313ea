/**
 * One metrics update and (for all but quiet hits) one log line per request, whichever path
 * served it: Fastify's (public-app.ts) or the fresh-hit path (api/fresh-hit.ts).
 * Log lines carry the path, never the query (it may hold tokens).
 */
import type { Logger } from 'pino';
import type { Disposition, NoStoreReason, PassReason } from './outcomes.js';
import type { Gateway } from './gateway.js';
import type { RequestCell } from './request-metrics.js';

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
): void {
  gw.metrics.requests.record(cell, seconds);
  if (hitLogged(gw))
    logRequest(gw.log, { reqId, method, path, module, status: 200, disposition: 'hit', seconds });
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
