/**
 * vcl_backend_fetch for api.php: one request to the wiki and what its answer holds.
 *
 * - askWiki: a turn at the wiki first (steps/admission.ts), then the request, then the body read
 *   as far as a limit (whole while debuginfo may need stripping; an answer above the limit
 *   streams on). Failures are mapped once (words/errors.ts) and counted; a request whose client has
 *   left ends as ClientClosedError.
 * - inspect: debuginfo recorded and stripped (or kept, or refused), and the nets behind it: an
 *   answer that still holds a credential value of the request, or the requester's own address.
 * - setCookies: what the client may be told of the wiki's Set-Cookie lines (mediawiki/set-cookie.ts), and
 *   whether they ended its session.
 *
 * Nothing here writes the request's record: the caller gets the facts back (upstreamMs, what was
 * found), and a background refresh, which answers nobody, simply drops them.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { decodeContent, type ReadBodyResult, readBounded } from '../http/body.js';
import { DebuginfoStripError, mayCarryDebuginfo, stripDebuginfo } from '../mediawiki/debuginfo/strip.js';
import { ClientClosedError, GatewayError, failureKind, fromUpstreamFailure } from '../words/errors.js';
import { headerString } from '../http/forwarding.js';
import { mayEchoAny, requestCookieNames } from '../mediawiki/identity.js';
import { admit, type Limits, releaseWith } from './admission.js';
import type { LeaveSignal } from '../limits/upstream-gate.js';
import type { Logger } from 'pino';
import type { Metrics } from '../observe/metrics.js';
import type { DebuginfoMetrics } from '../mediawiki/debuginfo/record.js';
import type { DebuginfoMode } from '../config/config.js';
import type { CookieNames } from '../mediawiki/set-cookie.js';
import { normalizeSetCookies } from '../mediawiki/set-cookie.js';
import { AnswerTooLargeError, type Upstream, type UpstreamHead, type UpstreamRequest, type UpstreamResponse, type WholeAnswer } from '../upstream/upstream.js';
import type { ApiRequest } from './recv.js';
import { echoesRequester, mentionsAny, requesterAddressForms } from '../mediawiki/requester-address.js';

/** Upper bound for reading an api.php answer to strip debuginfo from it (not a cache limit). */
export const MAX_INSPECT_BYTES = 64 * 1024 * 1024;

export type FetchReason = 'miss' | 'refresh' | 'pass';

export interface WikiAnswer {
  readonly res: UpstreamHead;
  /** Whole (Buffer), or what was read followed by the rest as it comes (a stream past the limit). */
  readonly body: Buffer | NodeJS.ReadableStream;
  readonly complete: boolean;
  /** The wiki encoded the body and it was decoded for inspection. */
  readonly decoded: boolean;
  readonly upstreamMs: number;
}

/** What asking the wiki takes: a turn (admission's limits), the upstream client, its metrics, and whether debuginfo is read. */
export interface WikiParts extends Limits {
  readonly upstream: Upstream;
  readonly config: { readonly debuginfo: DebuginfoMode };
}

export async function askWiki(
  parts: WikiParts,
  request: FastifyRequest,
  reason: FetchReason,
  upstreamRequest: UpstreamRequest,
  readLimit: number,
  /** Stop waiting for a turn when this aborts (the client left); the upstream request's own signal by default. */
  waitSignal: LeaveSignal | undefined = upstreamRequest.signal,
): Promise<WikiAnswer> {
  // A turn at the wiki first: 429/503 without one, nothing sent.
  const turn = admit(parts, request.raw, reason === 'refresh' ? 'refresh' : 'uncached', waitSignal);
  const release = turn instanceof Promise ? await turn : turn;
  let streaming = false;
  try {
    const started = parts.now();
    parts.metrics.upstreamRequests.inc({ reason });
    if (upstreamRequest.signal === undefined && parts.config.debuginfo !== 'off') {
      // Read whole, as below, without a body stream (upstream.ts fetchWhole): what a miss asks.
      // A try around the await, not a .catch(): one promise and one closure fewer per miss.
      let whole: WholeAnswer;
      try {
        whole = await parts.upstream.fetchWhole(upstreamRequest, readLimit);
      } catch (err) {
        throw err instanceof AnswerTooLargeError ? tooLargeToInspect() : upstreamFailed(parts.metrics, err);
      }
      const upstreamMs = parts.now() - started;
      parts.metrics.upstreamDuration.observe({ outcome: 'ok' }, upstreamMs / 1000);
      return decoded(whole, whole.body, upstreamMs);
    }
    const failed = (err: unknown): Error => (upstreamRequest.signal?.aborted ? new ClientClosedError() : upstreamFailed(parts.metrics, err));
    let res: UpstreamResponse;
    try {
      res = await parts.upstream.request(upstreamRequest);
    } catch (err) {
      throw failed(err);
    }
    const read = await readAll(res, readLimit).catch((err: unknown) => {
      throw failed(err);
    });
    if (!read.complete) {
      if (parts.config.debuginfo !== 'off') {
        res.body.destroy();
        throw tooLargeToInspect();
      }
      // The rest streams to the client: the turn ends with it.
      releaseWith(read.stream, release);
      streaming = true;
    }
    const upstreamMs = parts.now() - started;
    parts.metrics.upstreamDuration.observe({ outcome: 'ok' }, upstreamMs / 1000);
    if (!read.complete) return { res, body: read.stream, complete: false, decoded: false, upstreamMs };
    return parts.config.debuginfo !== 'off' ? decoded(res, read.body, upstreamMs) : { res, body: read.body, complete: true, decoded: false, upstreamMs };
  } finally {
    if (!streaming) release();
  }
}

/**
 * A whole answer, for inspection: debuginfo hides in compressed answers too, so one the wiki
 * compressed anyway is decoded. One it did not (what the gateway asks for) is returned as it is,
 * not through a promise of its own.
 */
function decoded(res: UpstreamHead, body: Buffer, upstreamMs: number): WikiAnswer | Promise<WikiAnswer> {
  const encoding = headerString(res.headers['content-encoding']);
  if (!encoding) return { res, body, complete: true, decoded: false, upstreamMs };
  return decodeContent(body, encoding, MAX_INSPECT_BYTES).then((plain) => ({ res, body: plain, complete: true, decoded: true, upstreamMs }));
}

function tooLargeToInspect(): GatewayError {
  return new GatewayError('wikiedge-upstream-bad-response', { info: 'The answer is too large to inspect.' });
}

/**
 * The answer's body, read as far as `limit` (http/body.ts readBounded). One whose Content-Length
 * says it fits is taken whole by undici's own consumer (BodyReadable.arrayBuffer): no async
 * iterator and no await per chunk; undici fails it if fewer or more bytes come than it said.
 */
async function readAll(res: UpstreamResponse, limit: number): Promise<ReadBodyResult> {
  const length = res.headers['content-length'];
  if (typeof length === 'string' && length.length > 0 && length.length <= 15 && Number(length) <= limit) {
    return { complete: true, body: Buffer.from(await res.body.arrayBuffer()) };
  }
  return readBounded(res.body, limit);
}

function upstreamFailed(metrics: Metrics, err: unknown): GatewayError {
  const gatewayError = fromUpstreamFailure(err);
  metrics.upstreamFailure(failureKind(gatewayError));
  return gatewayError;
}

/** Aborts when the client goes away before its answer is complete. */
export function clientGone(reply: FastifyReply): AbortSignal {
  const controller = new AbortController();
  reply.raw.once('close', () => {
    if (!reply.raw.writableFinished) controller.abort();
  });
  return controller.signal;
}

// ----------------------------------------------------------------------------------- inspect

export interface Inspected {
  readonly body: Buffer | NodeJS.ReadableStream;
  /** debuginfo is still in the body (WIKIEDGE_DEBUGINFO=pass, or `off` with a body that may hold it). */
  readonly debuginfoKept: boolean;
  /** The body holds one of the request's credential values. */
  readonly echoesCredentials: boolean;
  /** The body would print the requester's own address (mediawiki/requester-address.ts). */
  readonly holdsRequesterAddress: boolean;
}

/**
 * strip: record, then remove; pass: record and keep (never stored); off: never parsed.
 * Then the nets: an answer that still holds one of the request's credential values is never
 * stored, and refused (502) if it carried debuginfo (a copy the stripper did not remove); an
 * answer that prints the requester's address (a module known to, or the address itself in the
 * body) is flagged so that it is never shared.
 */
/** What inspecting an answer takes: the debuginfo mode, its metrics and module label, a log for the toolbar warning. */
export interface InspectParts {
  readonly config: { readonly debuginfo: DebuginfoMode };
  readonly debuginfoMetrics: DebuginfoMetrics;
  readonly moduleLabel: (modules: readonly string[]) => string;
  readonly log: Logger;
}

export function inspect(parts: InspectParts, answer: WikiAnswer, api: ApiRequest, forwardedFor: string): Inspected {
  const body = answer.body;
  if (!Buffer.isBuffer(body)) return { body, debuginfoKept: false, echoesCredentials: false, holdsRequesterAddress: false };
  const holdsRequesterAddress = echoesRequester(api.query) || mentionsAny(body, requesterAddressForms(forwardedFor));
  if (!mayCarryDebuginfo(body)) return { body, debuginfoKept: false, echoesCredentials: mayEchoAny(body, api.credentialValues), holdsRequesterAddress };
  // `off` parses nothing, but an answer that may carry debuginfo (the requester's own cookies)
  // is still never stored: the cheap check above costs ~15 µs per 100 KB.
  if (parts.config.debuginfo === 'off') return { body, debuginfoKept: true, echoesCredentials: false, holdsRequesterAddress };
  let result: ReturnType<typeof stripDebuginfo>;
  try {
    result = stripDebuginfo(body, headerString(answer.res.headers['content-type']));
  } catch (err) {
    if (err instanceof DebuginfoStripError) throw uncleanable(err);
    throw err;
  }
  if (result.debuginfo) {
    parts.debuginfoMetrics.record(result.debuginfo, parts.moduleLabel(api.modules));
    warnDebugToolbarOnce(parts.log);
  }
  if (parts.config.debuginfo === 'pass') return { body, debuginfoKept: result.debuginfo !== undefined, echoesCredentials: false, holdsRequesterAddress };
  if (result.format) parts.debuginfoMetrics.countStripped(result.format);
  // Fail closed: what carried debuginfo and still holds the request's credentials is never sent.
  if (mayEchoAny(result.body, api.credentialValues)) throw uncleanable(new DebuginfoStripError('a credential of the request is left'));
  return { body: result.body, debuginfoKept: false, echoesCredentials: false, holdsRequesterAddress };
}

function uncleanable(cause: Error): GatewayError {
  // An answer that may echo the request's cookies is never sent half-understood.
  return new GatewayError('wikiedge-upstream-bad-response', { cause, info: 'The answer could not be cleaned of debuginfo.' });
}

const toolbarWarned = new WeakSet<Logger>();

/**
 * The gateway removes debuginfo from api.php answers only: with $wgDebugToolbar on, every
 * index.php page the wiki renders carries the toolbar's copy (the request's Cookie header, every
 * SQL query) and is streamed through as it is. Said once per process, loudly.
 */
function warnDebugToolbarOnce(log: Logger): void {
  if (toolbarWarned.has(log)) return;
  toolbarWarned.add(log);
  log.warn(
    { wikiSetting: '$wgDebugToolbar' },
    "the wiki runs with $wgDebugToolbar on: api.php answers are cleaned, but every index.php page passing through carries the visitor's cookies and all SQL; turn it off in production",
  );
}

// ------------------------------------------------------------------------------- Set-Cookie

/** Set-Cookie lines to relay (mediawiki/set-cookie.ts), and whether they ended the client's session. */
export function setCookies(
  cookieNames: CookieNames,
  metrics: Metrics,
  request: FastifyRequest,
  raw: string | string[] | undefined,
): { relay: string[]; sessionEnded: boolean } {
  if (raw === undefined) return { relay: [], sessionEnded: false };
  const lines = Array.isArray(raw) ? raw : [raw];
  const outcome = normalizeSetCookies(lines, requestCookieNames(request.headers.cookie), cookieNames, Date.now());
  for (const e of outcome.events) metrics.cookie(e.event, e.cookie);
  return { relay: outcome.relay, sessionEnded: outcome.sessionEnded };
}
