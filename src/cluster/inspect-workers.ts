/**
 * The admin's inspection routes (apps/admin-inspect.ts) in a cluster primary, which holds no cache:
 * answered by the workers that listen now, over IPC (messages.ts), each answering from the same
 * functions as a single process (worker-side.ts).
 *
 * - GET /cache: every worker lists its local tier's variants, each marked with the worker's id (the
 *   `worker` of its log lines); the first lists the shared tier's too, so that they appear once.
 *   Sessions are numbered here, across all the answers (numberSessions): the same session has one
 *   number in every worker, and its slot never leaves the primary.
 * - GET /cache/stats: the workers' local tiers summed, and each worker's beside.
 * - GET /config: the primary's configuration, which is what every worker runs (worker-config.ts),
 *   the new one from the moment a reload validated it.
 * - POST /trace: run in the first worker, which the answer names.
 * - a title purge: the namespaces the first worker that answers learned from the wiki.
 *
 * Every ask is bounded (INSPECT_ASK_MS, TRACE_ASK_MS); a worker that does not answer in time is
 * listed under `missedWorkers` with why, never silently left out.
 */
import type { Logger } from 'pino';
import {
  cacheView,
  type CacheView,
  type HeldVariants,
  type Inspection,
  type LocalStats,
  numberSessions,
  type PartStats,
  runningConfig,
  SHARED_TIER_NOT_COUNTED,
  type SlottedVariant,
  TRACE_END_WAIT_MS,
  type TraceView,
} from '../apps/admin-inspect.js';
import type { Config } from '../config/config.js';
import { usesRedis } from '../config/config.js';
import { DEFAULT_NAMESPACES, type Namespaces } from '../mediawiki/titles.js';
import type { AnswerTo, Ask } from './messages.js';

/** How long GET /cache, /cache/stats and a title purge's namespaces wait for each worker. */
export const INSPECT_ASK_MS = 5_000;

/**
 * How long POST /trace waits for its worker: the traced request is itself bounded by the
 * worker's upstream timeouts, and its record's end by TRACE_END_WAIT_MS.
 */
export function traceAskMs(config: Config): number {
  return config.upstreamConnectTimeoutMs + config.upstreamResponseTimeoutMs + config.upstreamQueueTimeoutMs + TRACE_END_WAIT_MS + INSPECT_ASK_MS;
}

/** Ask one worker one question, bounded (ipc-asks.ts). */
export type AskWorker<W> = <A extends Ask>(worker: W, ask: A, timeoutMs: number) => Promise<AnswerTo<A>>;

export interface WorkersInspectionDeps<W extends { readonly id: number }> {
  readonly ask: AskWorker<W>;
  /** The workers to ask: those that listen now, in slot order. */
  readonly workers: () => readonly W[];
  readonly config: () => Config;
  readonly log: Logger;
}

/** A worker that did not answer, and why. */
export interface MissedWorker {
  readonly worker: number;
  readonly error: string;
}

export function workersInspection<W extends { readonly id: number }>(deps: WorkersInspectionDeps<W>): Inspection {
  const { ask, workers, config, log } = deps;
  return {
    get apiPath() {
      return config().apiPath;
    },
    async cache(urlKey) {
      const asked = workers();
      const withShared = usesRedis(config());
      const answers = await Promise.allSettled(asked.map((w, i) => ask(w, { op: 'cache', urlKey, shared: withShared && i === 0 }, INSPECT_ASK_MS)));
      return mergeCacheAnswers(
        urlKey,
        asked.map((w) => w.id),
        answers,
        withShared,
      );
    },
    async stats() {
      const asked = workers();
      const answers = await Promise.allSettled(asked.map((w) => ask(w, { op: 'stats' }, INSPECT_ASK_MS)));
      return sumStats(
        asked.map((w) => w.id),
        answers,
      );
    },
    config: () => runningConfig(config()),
    async trace(input) {
      const worker = workers()[0];
      if (!worker) throw new Error('no worker listens now: nothing to run the request through');
      const view = await ask(worker, { op: 'trace', input }, traceAskMs(config()));
      return { worker: worker.id, ...view } satisfies TraceView & { worker: number };
    },
    async namespaces() {
      for (const worker of workers()) {
        try {
          return await ask(worker, { op: 'namespaces' }, INSPECT_ASK_MS);
        } catch (err) {
          log.warn({ worker: worker.id, err: String(err) }, "title purge: a worker did not say the wiki's namespaces");
        }
      }
      log.warn("title purge: no worker said the wiki's namespaces: MediaWiki's defaults are used");
      return DEFAULT_NAMESPACES satisfies Namespaces;
    },
    operatorModules: () => Object.keys(config().modules),
  };
}

/** GET /cache in a cluster: one answer per asked worker (the first also listed the shared tier when withShared). */
export function mergeCacheAnswers(
  urlKey: string,
  workerIds: readonly number[],
  answers: readonly PromiseSettledResult<HeldVariants>[],
  withShared: boolean,
): CacheView & { readonly workers: number; readonly missedWorkers?: readonly MissedWorker[] } {
  const local: (SlottedVariant & { extra: { worker: number } })[] = [];
  let shared: readonly SlottedVariant[] = [];
  let sharedUnlisted = false as boolean;
  const missed: MissedWorker[] = [];
  answers.forEach((a, i) => {
    const worker = workerIds[i]!;
    if (a.status === 'rejected') {
      missed.push({ worker, error: errorText(a.reason) });
      if (i === 0 && withShared) sharedUnlisted = true;
      return;
    }
    for (const v of a.value.local) local.push({ ...v, extra: { worker } });
    if (Array.isArray(a.value.shared)) shared = a.value.shared;
    else if (a.value.shared === 'unlisted') sharedUnlisted = true;
  });
  // Each worker's copies first (marked with the worker), then the shared tier's once.
  const variants = numberSessions<{ worker: number }>([...local, ...shared]);
  return {
    ...cacheView(urlKey, variants, sharedUnlisted),
    workers: answers.length - missed.length,
    ...(missed.length > 0 && { missedWorkers: missed }),
  };
}

/** GET /cache/stats in a cluster: the workers' local tiers summed, and each worker's. */
export function sumStats(
  workerIds: readonly number[],
  answers: readonly PromiseSettledResult<LocalStats>[],
): LocalStats & { readonly workers: readonly (LocalStats & { readonly worker: number })[]; readonly missedWorkers?: readonly MissedWorker[] } {
  const zero = (): PartStats => ({ entries: 0, bytes: 0, budgetBytes: 0, bodyBytes: 0 });
  const local = { shared: zero(), session: zero() };
  const byModule: Record<string, Record<'shared' | 'session', number>> = {};
  const each: (LocalStats & { worker: number })[] = [];
  const missed: MissedWorker[] = [];
  let sharedTier = false as boolean;
  answers.forEach((a, i) => {
    const worker = workerIds[i]!;
    if (a.status === 'rejected') return void missed.push({ worker, error: errorText(a.reason) });
    const { sharedTier: said, ...stats } = a.value;
    sharedTier ||= said !== undefined;
    each.push({ worker, ...stats });
    for (const part of ['shared', 'session'] as const) {
      const sum = local[part];
      const add = stats.local[part];
      local[part] = {
        entries: sum.entries + add.entries,
        bytes: sum.bytes + add.bytes,
        budgetBytes: sum.budgetBytes + add.budgetBytes,
        bodyBytes: sum.bodyBytes + add.bodyBytes,
      };
    }
    for (const [label, counts] of Object.entries(stats.byModule)) {
      const row = (byModule[label] ??= { shared: 0, session: 0 });
      row.shared += counts.shared;
      row.session += counts.session;
    }
  });
  return {
    local,
    byModule: Object.fromEntries(Object.entries(byModule).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))),
    ...(sharedTier && { sharedTier: SHARED_TIER_NOT_COUNTED }),
    workers: each,
    ...(missed.length > 0 && { missedWorkers: missed }),
  };
}

function errorText(reason: unknown): string {
  return reason instanceof Error ? reason.message : String(reason);
}
