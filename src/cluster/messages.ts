/**
 * What the primary and its workers say to each other over node:cluster's IPC channel, in one
 * place: the shapes of the messages, what each question is answered with, and the type guards
 * that recognise them. Every message carries `wikiedge`, so that anything else on the channel
 * (Node's own cluster messages reach 'message' listeners too) is ignored.
 *
 * Three conversations:
 * - ask / answer: the primary asks one worker for its metrics, a purge, what it holds for a URL or
 *   in all (the admin's GET /cache and /cache/stats), a traced request (POST /trace), the wiki's
 *   namespaces as it learned them (a title purge), or (a reload) a chunk of its entries to hand
 *   over or to take; the worker answers with the same id (ipc-asks.ts waits for it, worker-side.ts
 *   answers).
 * - siblings-purge / siblings-purge-done: a worker that applied a purge by itself (PURGE, a
 *   logout, a session holder's write) without Redis tells the primary, which hands it to every
 *   other worker (purge-fan-out.ts); when the purge carries an id (a session holder's write,
 *   whose answer waits), the primary says when every other worker has applied it.
 * - session-user / session-users-ask / session-users: a worker that learned whose session a slot
 *   is (steps/session-lifecycle.ts) tells the primary, which keeps it and hands it to every other
 *   worker; a worker that starts (a reload's replacement among them) asks for all the primary
 *   knows. Otherwise each worker knew only the logins it served, and a session holder's write
 *   taken by another worker left the user's other sessions cached there (commit 7a908ee).
 * - config-ask / config: a worker that starts asks the primary for its configuration, and gets
 *   the sources the primary validated (config/load.ts ConfigSources; reload.ts says why).
 * - final-metrics / final-metrics-kept: a worker that has drained (shutdown, or replaced by a
 *   reload) hands the primary its last figures and waits for them to be kept before it exits,
 *   so that what it counted since the last scrape is not lost (metrics-aggregation.ts).
 *
 * The channel uses the 'advanced' serialization (structured clone, cluster/primary.ts): metric values
 * may be NaN or Infinity, which JSON would turn into null.
 */
import type { Registry } from 'prom-client';
import type { HeldVariants, LocalStats, TraceInput, TraceView } from '../apps/admin-inspect.js';
import type { Namespaces } from '../mediawiki/titles.js';
import type { PurgeMessage, PurgeResult } from '../cache/purge.js';
import type { ConfigSources } from '../config/config.js';

/** What one registry exports (Registry.getMetricsAsJSON()), as it travels over IPC. */
export type MetricsJson = Awaited<ReturnType<Registry['getMetricsAsJSON']>>;

/** A question from the primary to one worker. */
export type Ask =
  | { readonly op: 'metrics' }
  /** everywhere: Redis and this worker's local tier (the leader); otherwise the local tier only. */
  | { readonly op: 'purge'; readonly message: PurgeMessage; readonly everywhere: boolean }
  /** A reload: the next chunk of this (replaced) worker's shared entries (cache/hand-over.ts). */
  | { readonly op: 'hand-over' }
  /** A reload: entries of the worker this one replaces, to adopt (cache/hand-over.ts). */
  | { readonly op: 'take-over'; readonly chunk: Uint8Array }
  /** GET /cache: this worker's variants of the URL key, and the shared tier's when `shared` (asked of one worker only). */
  | { readonly op: 'cache'; readonly urlKey: string; readonly shared: boolean }
  /** GET /cache/stats: this worker's local tier. */
  | { readonly op: 'stats' }
  /** POST /trace: run this request through this worker's public app (its headers are never echoed). */
  | { readonly op: 'trace'; readonly input: TraceInput }
  /** A title purge: the wiki's namespaces as this worker learned them (upstream/site-namespaces.ts). */
  | { readonly op: 'namespaces' };

/** What a worker answers to each question. */
export interface Answers {
  readonly metrics: MetricsJson;
  readonly purge: PurgeResult;
  /** null: every entry went. */
  readonly 'hand-over': { readonly chunk: Uint8Array | null };
  readonly 'take-over': { readonly offered: number; readonly taken: number };
  /** Session slots travel here (numbered by the primary before anything is shown: admin-inspect.ts numberSessions). */
  readonly cache: HeldVariants;
  readonly stats: LocalStats;
  readonly trace: TraceView;
  /** Maps cross the channel as Maps: it uses the 'advanced' serialization. */
  readonly namespaces: Namespaces;
}

export type AnswerTo<A extends Ask> = Answers[A['op']];

export interface AskMessage {
  readonly wikiedge: 'ask';
  readonly id: number;
  readonly ask: Ask;
}

/** The answer to the ask with the same id: its value, or why there is none. */
export interface AnswerMessage {
  readonly wikiedge: 'answer';
  readonly id: number;
  readonly value?: unknown;
  readonly error?: string;
}

/** From a worker: a purge it applied locally, for the primary to hand to every other worker. */
export interface SiblingsPurgeMessage {
  readonly wikiedge: 'siblings-purge';
  readonly message: PurgeMessage;
  /** Set when the worker waits to hear that every other worker applied it. */
  readonly id?: number;
}

/** To a worker: every other worker has applied (or failed to answer for) its purge `id`. */
export interface SiblingsPurgeDoneMessage {
  readonly wikiedge: 'siblings-purge-done';
  readonly id: number;
}

/** Both ways: `slot` is `user`'s session (policy/session-users.ts). */
export interface SessionUserMessage {
  readonly wikiedge: 'session-user';
  readonly slot: string;
  readonly user: string;
}
/** From a worker whose gateway is up: every session the primary knows the user of, please. */
export interface SessionUsersAskMessage {
  readonly wikiedge: 'session-users-ask';
}
/** The primary's answer: [slot, user] pairs, the least recently learned first. */
export interface SessionUsersMessage {
  readonly wikiedge: 'session-users';
  readonly pairs: readonly (readonly [string, string])[];
}
/**
 * From a worker: it now keeps purges its shared tier could not take (`owes`), or no longer does.
 * A worker that exits owing them (a crash, a reload while Redis is down) leaves them to nobody:
 * the primary has another worker carry a gap instead (CarryGapMessage).
 */
export interface OwesPurgesMessage {
  readonly wikiedge: 'owes-purges';
  readonly owes: boolean;
}
/** To a worker: carry a gap to the shared tier once it answers (a worker that exited owed purges). */
export interface CarryGapMessage {
  readonly wikiedge: 'carry-gap';
}
/**
 * From a worker whose start failed (its gateway could not be built, or it could not listen), just
 * before it exits: why, and the configuration key to set when there is one (a RedisRefusal, a
 * ListenError), so that a reload's line names it as a refused configuration's does (reload.ts).
 */
export interface StartFailedMessage {
  readonly wikiedge: 'start-failed';
  readonly key?: string;
  readonly err: string;
}
/** The primary's answer: kept; the worker may exit (its exit then comes after the message was read). */
export interface StartFailedKeptMessage {
  readonly wikiedge: 'start-failed-kept';
}
/** From a worker that starts: what configuration should it run? */
export interface ConfigAskMessage {
  readonly wikiedge: 'config-ask';
}

/** The primary's answer: the sources it validated, to be validated again to the same result. */
export interface ConfigMessage {
  readonly wikiedge: 'config';
  readonly sources: ConfigSources;
}

/** From a worker that has drained, just before it exits: everything it counted. */
export interface FinalMetricsMessage {
  readonly wikiedge: 'final-metrics';
  readonly metrics: MetricsJson;
}

/** The primary's answer: the figures are kept; the worker may exit. */
export interface FinalMetricsKeptMessage {
  readonly wikiedge: 'final-metrics-kept';
}

function tagged(m: unknown, tag: string): boolean {
  return typeof m === 'object' && m !== null && (m as { wikiedge?: unknown }).wikiedge === tag;
}

export function isAsk(m: unknown): m is AskMessage {
  return tagged(m, 'ask');
}
export function isAnswer(m: unknown): m is AnswerMessage {
  return tagged(m, 'answer');
}
export function isSiblingsPurge(m: unknown): m is SiblingsPurgeMessage {
  return tagged(m, 'siblings-purge');
}
export function isSiblingsPurgeDone(m: unknown): m is SiblingsPurgeDoneMessage {
  return tagged(m, 'siblings-purge-done') && typeof (m as SiblingsPurgeDoneMessage).id === 'number';
}
export function isSessionUser(m: unknown): m is SessionUserMessage {
  return tagged(m, 'session-user') && typeof (m as SessionUserMessage).slot === 'string' && typeof (m as SessionUserMessage).user === 'string';
}
export function isSessionUsersAsk(m: unknown): m is SessionUsersAskMessage {
  return tagged(m, 'session-users-ask');
}
export function isSessionUsers(m: unknown): m is SessionUsersMessage {
  return tagged(m, 'session-users') && Array.isArray((m as SessionUsersMessage).pairs);
}
export function isConfigAsk(m: unknown): m is ConfigAskMessage {
  return tagged(m, 'config-ask');
}
export function isConfig(m: unknown): m is ConfigMessage {
  return tagged(m, 'config');
}
export function isFinalMetrics(m: unknown): m is FinalMetricsMessage {
  return tagged(m, 'final-metrics');
}
export function isFinalMetricsKept(m: unknown): m is FinalMetricsKeptMessage {
  return tagged(m, 'final-metrics-kept');
}
export function isOwesPurges(m: unknown): m is OwesPurgesMessage {
  return tagged(m, 'owes-purges') && typeof (m as OwesPurgesMessage).owes === 'boolean';
}
export function isCarryGap(m: unknown): m is CarryGapMessage {
  return tagged(m, 'carry-gap');
}
export function isStartFailed(m: unknown): m is StartFailedMessage {
  return tagged(m, 'start-failed') && typeof (m as StartFailedMessage).err === 'string';
}
export function isStartFailedKept(m: unknown): m is StartFailedKeptMessage {
  return tagged(m, 'start-failed-kept');
}
