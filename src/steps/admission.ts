/**
 * The one way to the wiki for a client's request: charge its budget (misses and passes only),
 * then wait for a turn at the gate. Request bodies are read before that, so a client sending its
 * body slowly holds a socket of ours, never a connection to the wiki (WIKIEDGE_CLIENT_REQUEST_TIMEOUT_MS
 * cuts it off).
 */
import type { IncomingMessage } from 'node:http';
import type { Readable } from 'node:stream';
import { readBounded } from '../http/body.js';
import { GatewayError } from '../words/errors.js';
import type { Charge, ClientBudget, UncachedUnderWay } from '../limits/client-budget.js';
import type { AddressMatcher } from '../words/address-list.js';
import type { Metrics } from '../observe/metrics.js';
import type { SessionUsers } from '../policy/session-users.js';
import { clientOfRequest } from '../limits/client-key.js';
import type { IdentityRules } from '../mediawiki/identity.js';
import type { LeaveSignal, Release, UpstreamGate } from '../limits/upstream-gate.js';

export type { Release } from '../limits/upstream-gate.js';

/** What a request costs: `uncached` spends the client's budget; a refresh is charged by its turn (refreshTurn). */
export type Admission = 'uncached' | 'refresh';

/** What admission reads: the gate, the budgets, what each client has under way, and who the client is. */
export interface Limits {
  readonly gate: UpstreamGate;
  readonly budget: ClientBudget;
  readonly groupBudget: ClientBudget;
  readonly underWay: UncachedUnderWay;
  /** WIKIEDGE_TRUSTED_PROXIES, for the client's address. */
  readonly trusted: AddressMatcher;
  readonly identityRules: IdentityRules;
  readonly sessionUsers: SessionUsers;
  readonly metrics: Metrics;
  readonly now: () => number;
}

/** What a request leaving needs: its client's count under way, and the clock. */
export type UnderWayParts = Pick<Limits, 'underWay' | 'now'>;

/**
 * A turn at the wiki for this request, its budget charged first (a refusal throws at once). A turn
 * free now is returned as it is (limits/upstream-gate.ts take); a promise only when it must wait.
 */
export function admit(limits: Limits, req: IncomingMessage, admission: Admission, signal?: LeaveSignal): Release | Promise<Release> {
  if (admission === 'refresh') return limits.gate.take('', signal);
  const state = underWay(limits, req);
  const now = limits.now();
  // A session's group is asked first, taking nothing, so that a refusal there spends nothing of the session's.
  const group = state.group ? limits.groupBudget.peek(state.group, now, inParallel(limits, state.group, state)) : OK;
  if (!group.ok) refuse(limits.metrics, group.retryAfterSeconds);
  const charge = limits.budget.charge(state.client, now, inParallel(limits, state.client, state));
  if (!charge.ok) refuse(limits.metrics, charge.retryAfterSeconds);
  if (state.group) limits.groupBudget.charge(state.group, now, inParallel(limits, state.group, state));
  const turn = limits.gate.take(state.client, signal, state.group);
  return turn instanceof Promise ? turn.then((release) => held(limits.underWay, state, release)) : held(limits.underWay, state, turn);
}

/**
 * The turn keeps the request under way until it is released, whenever the client leaves: a
 * fetch goes on for others after its client has gone.
 */
function held(underWay: UncachedUnderWay, state: UnderWayState, release: Release): Release {
  state.holds++;
  let released = false;
  return () => {
    if (released) return;
    released = true;
    release();
    letGo(underWay, state);
  };
}

/**
 * What `admit` would say of this client's budget, taking nothing: the flow asks before a miss
 * takes the Redis lock or leads the coalesced fetch, so a client whose budget is spent never
 * holds up the others waiting on that lock or fetch (admit charges the budget at the turn).
 */
export function budgetLeft(limits: Limits, req: IncomingMessage): Charge {
  const state = underWay(limits, req);
  const now = limits.now();
  const own = limits.budget.peek(state.client, now, inParallel(limits, state.client, state));
  if (!own.ok || !state.group) return own;
  return limits.groupBudget.peek(state.group, now, inParallel(limits, state.group, state));
}

const OK: Charge = Object.freeze({ ok: true });

/** Grace refreshes one client's hits may have under way at once (refreshTurn). */
export const REFRESHES_PER_CLIENT = 2;

/** A grace refresh's place among its client's (refreshTurn). */
export interface RefreshTurn {
  /** Takes the client's token as the refresh runs (with Redis, once this replica has the key's lock): false when there is none now. */
  charge(): boolean;
  /** The refresh has ended (or never ran). */
  done(): void;
}

/**
 * A refresh of an entry in its grace window, charged to the client whose hit starts it: one of
 * at most REFRESHES_PER_CLIENT of its own under way, and a whole token of its budget of uncached
 * requests (and of its address's sessions', for a session), taken whether it asks in series or
 * not; undefined when it has that many under way or no token (the stale entry is served, and the
 * refresh left to another client's hit, so a spent client never holds the lead or the lock).
 * Charged to nobody, a client's hits on the entries it stored made the wiki refresh them all,
 * beside its own budget and share, at once, and kept them fresh in the tier, ahead of everyone
 * else's (docs/SECURITY.md class 63,
 * test/in-process/attack-grace-refreshes-charged-to-nobody.test.ts). Its refreshes are not counted
 * as its requests under way: a bot asking in series, which a hit in grace answered at once, would
 * be asking in parallel with a refresh it never asked for, and refused. Its turn at the wiki is
 * the gateway's own (admit's `refresh`).
 */
export function refreshTurn(limits: Limits & { readonly refreshing: UncachedUnderWay }, req: IncomingMessage): RefreshTurn | undefined {
  const { key: client, group } = clientOfRequest(limits, req);
  if (limits.refreshing.of(client) >= REFRESHES_PER_CLIENT) return undefined;
  const now = limits.now();
  if (!limits.budget.peek(client, now, true).ok || (group && !limits.groupBudget.peek(group, now, true).ok)) return undefined;
  limits.refreshing.enter(client);
  let ended = false;
  return {
    charge: () => {
      const at = limits.now();
      if (!limits.budget.charge(client, at, true).ok) return false;
      if (group) limits.groupBudget.charge(group, at, true);
      return true;
    },
    done: () => {
      if (ended) return;
      ended = true;
      limits.refreshing.leave(client);
    },
  };
}

/**
 * An uncached request's place among its client's (client-budget.ts UncachedUnderWay): counted
 * from the flow's first look at the budget while its answer is not over (`answering`) or it
 * holds a turn at the wiki (`holds`, the answer included); once both are over it has `left`, for
 * good (a look at the budget after that, by a flow the client left early, counts nothing again).
 */
interface UnderWayState {
  /** Its client's key (limits/client-key.ts): a session, a user, or an anonymous address. */
  readonly client: string;
  /** A session's address, whose sessions are also charged together; '' for an anonymous client. */
  readonly group: string;
  holds: number;
  answering: boolean;
  left: boolean;
}
const UNDER_WAY = Symbol('wikiedge.uncachedUnderWay');
/** A request whose answer ended before any look at the budget (most: hits, coalesced answers). */
const ENDED_UNCOUNTED = 'ended';
/** The same, its client having left before the answer (a waiter on a coalesced fetch, say). */
const ENDED_LEFT_EARLY = 'left early';
type EndedUncounted = typeof ENDED_UNCOUNTED | typeof ENDED_LEFT_EARLY;
type NotedRequest = IncomingMessage & { [UNDER_WAY]?: UnderWayState | EndedUncounted };

function underWay(limits: Limits, req: IncomingMessage): UnderWayState {
  const noted = req as NotedRequest;
  const noting = noted[UNDER_WAY];
  if (typeof noting === 'object') return noting;
  const { key: client, group } = clientOfRequest(limits, req);
  if (noting === undefined) {
    const state: UnderWayState = { client, group, holds: 1, answering: true, left: false };
    noted[UNDER_WAY] = state;
    limits.underWay.enter(client);
    if (group) limits.underWay.enter(group);
    return state;
  }
  // Ended already: its client left while it waited (on a coalesced fetch, a Redis round trip)
  // and the flow still goes on to the wiki. It asks as this client, never as nobody (the
  // gateway's own turns have no share and no budget), and counts nothing again; its client
  // left a request that now costs the wiki: it counts as asking in parallel for a while. (One
  // whose wait ended with an answer for it never comes here, and costs its client nothing.)
  if (noting === ENDED_LEFT_EARLY) abandon(limits, client, group);
  const state: UnderWayState = { client, group, holds: 0, answering: false, left: true };
  noted[UNDER_WAY] = state;
  return state;
}

/**
 * Whether the client asks in parallel: another of its uncached requests is under way, or it has
 * lately left one before its answer (UncachedUnderWay.abandoned): a client that closes each
 * connection once its request is sent leaves the wiki working on it (PHP runs on after the
 * gateway stops waiting) and is no client in series.
 */
function inParallel(limits: UnderWayParts, key: string, state: UnderWayState): boolean {
  const others = limits.underWay.of(key) - (state.left ? 0 : 1);
  return others > 0 || limits.underWay.abandoned(key, limits.now());
}

function letGo(underWay: UncachedUnderWay, state: UnderWayState): void {
  if (state.left || --state.holds > 0) return;
  state.left = true;
  underWay.leave(state.client);
  if (state.group) underWay.leave(state.group);
}

function abandon(limits: UnderWayParts, client: string, group: string): void {
  limits.underWay.abandon(client, limits.now());
  if (group) limits.underWay.abandon(group, limits.now());
}

/**
 * The request's answer has ended (steps/request-record.ts finishRecord), `closedEarly` when its client
 * left before it: the request is no longer under way once its turn at the wiki is released too.
 * A request that was never under way is marked so that a late look at the budget counts nothing.
 */
export function leftUnderWay(limits: UnderWayParts, req: IncomingMessage, closedEarly: boolean): void {
  const noted = req as NotedRequest;
  const state = noted[UNDER_WAY];
  if (state === ENDED_UNCOUNTED || state === ENDED_LEFT_EARLY) return;
  if (state === undefined) {
    // A client that left while its request waited counts as asking in parallel if that request
    // goes on to the wiki (underWay).
    noted[UNDER_WAY] = closedEarly ? ENDED_LEFT_EARLY : ENDED_UNCOUNTED;
    return;
  }
  if (!state.answering) return;
  state.answering = false;
  // Left early while the wiki still held its turn: the client went away. Not when the wiki cut
  // its answer off first (the stream let go of the turn before the answer was destroyed).
  if (closedEarly && !state.left && state.holds > 1) abandon(limits, state.client, state.group);
  letGo(limits.underWay, state);
}

/** 429 with Retry-After, answered after the refusal delay (refusal-delay.ts says why). */
export function refuse(metrics: Metrics, retryAfterSeconds: number): never {
  metrics.upstreamRejected.inc({ reason: 'client-budget' });
  throw new GatewayError('wikiedge-rate-limited', { retryAfterSeconds, answerAfterDelay: true });
}

/**
 * The request's body as it will be sent: read whole when it fits WIKIEDGE_REQUEST_BODY_BUFFER_BYTES,
 * else (uploads) what was read followed by the rest as it comes; null without a body.
 */
export async function requestBodyOf(req: IncomingMessage, maxBufferBytes: number): Promise<Buffer | Readable | null> {
  const length = req.headers['content-length'];
  if (req.headers['transfer-encoding'] === undefined && (length === undefined || length === '0')) return null;
  // A request body the wiki stopped reading (it failed, or answered early) leaves the client's
  // socket open: it still carries our answer.
  const read = await readBounded(req, maxBufferBytes, 'keep');
  return read.complete ? read.body : read.stream;
}

/** Release once `stream` has ended, failed or been dropped. */
export function releaseWith(stream: NodeJS.ReadableStream, release: Release): void {
  const done = () => release();
  stream.once('end', done);
  stream.once('error', done);
  stream.once('close', done);
}
