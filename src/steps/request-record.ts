/**
 * The request's record, and what becomes of it: one metrics update and one access-log line per
 * request (observe/access-log.ts; hits only as WIKIEDGE_LOG_HITS says), whichever path served it:
 * Fastify's (apps/public-app.ts) or the fresh-hit path (steps/fresh-hit.ts). The line carries the URL
 * with the values of credential parameters redacted, the client address as the gateway decides
 * it (limits/client-key.ts clientAddress: X-Forwarded-For only from WIKIEDGE_TRUSTED_PROXIES), the user
 * agent (bounded), the bytes read and written on the connection for the request, and what the
 * steps decided.
 *
 * The record is written here only: steps return what they decided and found (steps/flow.ts
 * ApiOutcome); the route notes it (noteOutcome), the error writer notes an error (noteError),
 * and the record is read once when the request ends (finishRecord). A background refresh, which
 * answers nobody, never touches it.
 */
import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { modulesOf } from '../policy/request.js';
import { type ForwardContext, headerString, upstreamRequestHeaders } from '../http/forwarding.js';
import type { Gateway } from '../gateway/gateway.js';
import { leftUnderWay } from './admission.js';
import type { LeaveSignal } from '../limits/upstream-gate.js';
import { clientAddress } from '../limits/client-key.js';
import { UNKNOWN_MODULE } from '../observe/metrics.js';
import type { Disposition, NoStoreReason, PassReason } from '../words/outcomes.js';
import type { PhpArray } from '../mediawiki/php-input.js';
import { type PostedForm, requestData } from '../mediawiki/php-post.js';
import type { RequestCell } from '../observe/request-metrics.js';
import type { RequestTarget } from '../words/target.js';
import { claimTrace, TRACE_HEADER, type Trace, traceApiRequest, traceDelivery, traceOutcome } from './trace.js';

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
  /** The admin listener traces this request (steps/trace.ts): its steps are written there too. */
  readonly trace: Trace | undefined;
  /** The client closed the connection before its answer was complete. */
  left: boolean;
  /** What a turn at the wiki waits on for that (clientLeaving), made when first asked for. */
  leaving: ClientLeaving | undefined;
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
  const startedAt = gw.now();
  request.edge = {
    startedAt,
    target: undefined,
    peerTrusted: gw.trusted.has(request.socket.remoteAddress),
    disposition: 'pass',
    module: '-',
    passReason: undefined,
    notStored: undefined,
    upstreamMs: undefined,
    errorCode: undefined,
    recorded: false,
    // Only a request carrying X-Wikiedge-Trace looks further (the header's name, never a guess of it).
    trace: request.headers[TRACE_HEADER] === undefined ? undefined : claimTrace(gw, request, startedAt),
    left: false,
    leaving: undefined,
  };
  reply.raw.once('close', () => {
    const edge = request.edge;
    if (!reply.raw.writableFinished) {
      edge.left = true;
      edge.leaving?.leave();
    }
    if (edge.recorded) return;
    if (reply.raw.writableFinished) finishRecord(gw, request, reply.raw.statusCode);
    else finishRecord(gw, request, 499, 'client-closed');
  });
}

/**
 * The request's client leaving before its answer, for a miss waiting for its turn at the wiki
 * (limits/upstream-gate.ts LeaveSignal): told by the close listener above, so a miss makes no
 * AbortController of its own.
 */
export function clientLeaving(request: FastifyRequest): LeaveSignal {
  const edge = request.edge;
  return (edge.leaving ??= new ClientLeaving(edge.left));
}

class ClientLeaving implements LeaveSignal {
  private listeners: (() => void)[] = [];

  constructor(public aborted: boolean) {}

  addEventListener(_type: 'abort', listener: () => void): void {
    // As an AbortSignal: a listener added once it has aborted is never called.
    if (!this.aborted) this.listeners.push(listener);
  }

  removeEventListener(_type: 'abort', listener: () => void): void {
    const i = this.listeners.indexOf(listener);
    if (i !== -1) this.listeners.splice(i, 1);
  }

  leave(): void {
    if (this.aborted) return;
    this.aborted = true;
    const listeners = this.listeners;
    this.listeners = [];
    for (const listener of listeners) listener();
  }
}

export function noteTarget(request: FastifyRequest, target: RequestTarget, module?: string): void {
  const edge = request.edge;
  edge.target = target;
  if (module !== undefined) {
    edge.module = module;
    // The recv step of api.php names the modules, just before its lookup (steps/flow.ts).
    if (edge.trace) traceApiRequest(edge.trace, request, target, module, edge.peerTrusted);
  }
}

/** The parameters that name a request's modules (policy/request.ts modulesOf). */
export const MODULE_PARAMETERS: ReadonlySet<string> = new Set(['action', 'generator', 'list', 'prop', 'meta']);

/**
 * A request with a body runs the modules its form names (MediaWiki reads `$_POST + $_GET`,
 * mediawiki/php-post.ts): logins, edits and logouts are POSTs whose action is in the body. The label
 * comes from the same closed set as a GET's; a form that was not read (larger than
 * WIKIEDGE_REQUEST_BODY_BUFFER_BYTES, streamed on as it came) or could not be (a multipart body
 * without its boundary) is labelled `unknown`.
 */
export function noteFormModule(gw: Gateway, request: FastifyRequest, query: PhpArray, form: PostedForm): void {
  if (form.kind === 'none') return;
  request.edge.module = form.kind === 'form' ? gw.moduleLabel(modulesOf(requestData(query, form.post))) : UNKNOWN_MODULE;
}

export function noteOutcome(request: FastifyRequest, outcome: Outcome): void {
  const edge = request.edge;
  edge.disposition = outcome.disposition;
  edge.passReason = outcome.passReason;
  edge.notStored = outcome.notStored;
  edge.upstreamMs = outcome.upstreamMs;
  if (edge.trace) traceOutcome(edge.trace, outcome);
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
  // First, whatever the record: an uncached request under way must always end (admission.ts).
  leftUnderWay(gw, request.raw, status === 499);
  const edge = request.edge;
  if (!edge || edge.recorded) return;
  edge.recorded = true;
  if (errorCode) noteError(request, errorCode);
  if (edge.trace) traceDelivery(edge.trace, status, edge.disposition, edge.errorCode);
  const raw = request.raw;
  const seconds = (gw.now() - edge.startedAt) / 1000;
  const io = connectionBytes(raw.socket);
  const requests = gw.metrics.requests;
  requests.record(requests.cell(edge.disposition, edge.module, gw.metrics.method(request.method), status), seconds, io.out);
  if (isHit(edge.disposition) && !hitLogged(gw)) return;
  gw.accessLog.request({
    reqId: request.id,
    method: request.method,
    target: edge.target?.upstreamPath ?? raw.url ?? '',
    path: edge.target?.rawPath,
    module: edge.module,
    disposition: edge.disposition,
    status,
    seconds,
    client: clientOf(gw, raw),
    userAgent: headerString(raw.headers['user-agent']),
    bytesIn: io.in,
    bytesOut: io.out,
    host: raw.headers.host,
    referer: headerString(raw.headers.referer),
    httpVersion: raw.httpVersion,
    upstreamMs: edge.upstreamMs,
    passReason: edge.passReason,
    notStored: edge.notStored,
    errorCode: edge.errorCode,
  });
}

/**
 * The fresh-hit path's record: the caller found its metrics cell once for the URL, and the
 * line is written from plain arguments and fragments serialised once per URL (observe/access-log.ts):
 * an object or a closure to gather them would be allocated on every hit.
 */
export function recordFreshHit(
  gw: Gateway,
  req: IncomingMessage,
  cell: RequestCell,
  target: RequestTarget,
  seconds: number,
  reqId: string,
  status: number,
): void {
  const io = connectionBytes(req.socket);
  gw.metrics.requests.record(cell, seconds, io.out);
  if (!hitLogged(gw)) return;
  const headers = req.headers;
  gw.accessLog.hit(
    target,
    cell,
    reqId,
    status,
    seconds,
    clientOf(gw, req),
    headers['user-agent'],
    io.in,
    io.out,
    headers.host,
    headers.referer,
    req.httpVersion,
  );
}

function isHit(disposition: Disposition): boolean {
  return disposition === 'hit' || disposition === 'hit-shared';
}

/** WIKIEDGE_LOG_HITS: none, every one, or a random share of them. */
function hitLogged(gw: Gateway): boolean {
  const share = gw.config.logHits;
  return share >= 1 || (share > 0 && gw.random() < share);
}

/** The client as the gateway decides it: the peer, or X-Forwarded-For walked past the trusted proxies. */
function clientOf(gw: Gateway, req: IncomingMessage): string {
  return clientAddress(req.socket.remoteAddress, headerString(req.headers['x-forwarded-for']), gw.trusted);
}

/** Where the previous request on a connection left its byte counts (requests on one connection come one after another). */
const READ_MARK = Symbol('wikiedge.bytesRead');
const WRITTEN_MARK = Symbol('wikiedge.bytesWritten');
type MarkedSocket = Socket & { [READ_MARK]?: number; [WRITTEN_MARK]?: number };

/** One object for every request's counts: read at once by the caller, never kept. */
const counts = { in: 0, out: 0 };

/**
 * Bytes read from and written to the connection since the previous request on it ended: the
 * request's head and body, the answer's status line, headers and body (nginx's
 * $request_length and $bytes_sent). A pipelined request's answer waits for the one before it,
 * so it is counted with the request whose record comes after it is written.
 */
function connectionBytes(socket: Socket | null): { readonly in: number; readonly out: number } {
  if (!socket) {
    counts.in = 0;
    counts.out = 0;
    return counts;
  }
  const s = socket as MarkedSocket;
  const readBefore = s[READ_MARK] ?? 0;
  const writtenBefore = s[WRITTEN_MARK] ?? 0;
  // bytesWritten is undefined once the socket is gone: nothing more was written then.
  const read = s.bytesRead ?? readBefore;
  const written = (s.bytesWritten as number | undefined) ?? writtenBefore;
  counts.in = read - readBefore;
  counts.out = written - writtenBefore;
  s[READ_MARK] = read;
  s[WRITTEN_MARK] = written;
  return counts;
}

/**
 * The headers the wiki gets for this request (http/forwarding.ts upstreamRequestHeaders), from
 * what the record knows of its connection: the peer, whether it is trusted, the request id.
 */
export function wikiRequestHeaders(
  request: FastifyRequest,
  fetch: Pick<ForwardContext, 'sharedFetch' | 'withoutCookies' | 'credentialHeaders'>,
): Record<string, string | string[]> {
  return upstreamRequestHeaders(request.headers, {
    peerAddress: request.socket.remoteAddress ?? '',
    peerTrusted: request.edge.peerTrusted,
    protocol: 'http',
    requestId: request.id,
    ...fetch,
  });
}
