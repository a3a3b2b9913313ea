/**
 * The one way to the wiki for a client's request: charge its budget (misses and passes only),
 * then wait for a turn at the gate. Request bodies are read before that, so a client sending its
 * body slowly holds a socket of ours, never a connection to the wiki (WIKIEDGE_CLIENT_REQUEST_TIMEOUT_MS
 * cuts it off).
 */
import type { IncomingMessage } from 'node:http';
import type { Readable } from 'node:stream';
import { readBounded } from '../body.js';
import { GatewayError } from '../errors.js';
import { headerString } from '../forwarding.js';
import type { Gateway } from '../gateway.js';
import { clientAddress } from './client-address.js';
import type { Charge } from './client-budget.js';
import type { Release } from './upstream-gate.js';

export type { Release } from './upstream-gate.js';

/** What a request costs: `uncached` spends the client's budget; the gateway's own refreshes do not. */
export type Admission = 'uncached' | 'refresh';

export async function admit(gw: Gateway, req: IncomingMessage, admission: Admission, signal?: AbortSignal): Promise<Release> {
  if (admission === 'refresh') return gw.gate.acquire('', signal);
  const client = underWay(gw, req);
  const charge = gw.budget.charge(client, gw.now(), gw.underWay.of(client) > 1);
  if (!charge.ok) refuse(gw, charge.retryAfterSeconds);
  return gw.gate.acquire(client, signal);
}

/**
 * What `admit` would say of this client's budget, taking nothing: the flow asks before a miss
 * takes the Redis lock or leads the coalesced fetch, so a client whose budget is spent never
 * holds up the others waiting on that lock or fetch (admit charges the budget at the turn).
 */
export function budgetLeft(gw: Gateway, req: IncomingMessage): Charge {
  const client = underWay(gw, req);
  return gw.budget.peek(client, gw.now(), gw.underWay.of(client) > 1);
}

/** The client an uncached request is under way for, noted on the request (UNDER_WAY). */
const UNDER_WAY = Symbol('wikiedge.uncachedUnderWay');
type NotedRequest = IncomingMessage & { [UNDER_WAY]?: string };

/** The request's client, counted under way once (client-budget.ts UncachedUnderWay); leftUnderWay ends it. */
function underWay(gw: Gateway, req: IncomingMessage): string {
  const noted = req as NotedRequest;
  let client = noted[UNDER_WAY];
  if (client === undefined) {
    client = clientOf(gw, req);
    noted[UNDER_WAY] = client;
    gw.underWay.enter(client);
  }
  return client;
}

/** The request's answer has ended (request-record.ts finishRecord): it is no longer under way. */
export function leftUnderWay(gw: Gateway, req: IncomingMessage): void {
  const noted = req as NotedRequest;
  const client = noted[UNDER_WAY];
  if (client === undefined) return;
  noted[UNDER_WAY] = undefined;
  gw.underWay.leave(client);
}

function clientOf(gw: Gateway, req: IncomingMessage): string {
  return clientAddress(req.socket.remoteAddress, headerString(req.headers['x-forwarded-for']), gw.trusted);
}

/** 429 with Retry-After, answered after the refusal delay (refusal-delay.ts says why). */
export function refuse(gw: Gateway, retryAfterSeconds: number): never {
  gw.metrics.upstreamRejected.inc({ reason: 'client-budget' });
  throw new GatewayError('wikiedge-rate-limited', { retryAfterSeconds, answerAfterDelay: true });
}

/**
 * The request's body as it will be sent: read whole when it fits WIKIEDGE_REQUEST_BODY_BUFFER_BYTES,
 * else (uploads) what was read followed by the rest as it comes; null without a body.
 */
export async function requestBodyOf(gw: Gateway, req: IncomingMessage): Promise<Buffer | Readable | null> {
  const length = req.headers['content-length'];
  if (req.headers['transfer-encoding'] === undefined && (length === undefined || length === '0')) return null;
  const read = await readBounded(req, gw.config.requestBodyBufferBytes);
  return read.complete ? read.body : read.stream;
}

/** Release once `stream` has ended, failed or been dropped. */
export function releaseWith(stream: NodeJS.ReadableStream, release: Release): void {
  const done = () => release();
  stream.once('end', done);
  stream.once('error', done);
  stream.once('close', done);
}
