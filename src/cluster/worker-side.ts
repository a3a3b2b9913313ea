/**
 * A worker's end of the IPC channel (messages.ts): it answers the primary's questions from its
 * own gateway, tells the primary about the purges it applied by itself (relayed to the other
 * workers when Redis cannot carry them), whose sessions are whose, and whether it owes the
 * shared tier purges.
 * This is all a worker knows of the cluster; the gateway it runs is the single process's
 * (apps/app.ts's build() without the admin listener, main.ts).
 */
import { heldVariants, type Inspection, localInspection, localStats } from '../apps/admin-inspect.js';
import type { BuiltPublic } from '../apps/app.js';
import { HandOverChunks, handedOverEntries } from '../cache/hand-over.js';
import type { PurgeSiblings } from '../cache/purge.js';
import type { Gateway } from '../gateway/gateway.js';
import {
  type AnswerMessage,
  type Answers,
  type Ask,
  type FinalMetricsMessage,
  type OwesPurgesMessage,
  isAsk,
  isCarryGap,
  isFinalMetricsKept,
  isSessionUser,
  isSessionUsers,
  isSiblingsPurgeDone,
  isStartFailedKept,
  type SessionUserMessage,
  type SessionUsersAskMessage,
  type SiblingsPurgeMessage,
  type StartFailedMessage,
} from './messages.js';

/**
 * In a worker: its purges (PURGE, logouts, a session holder's writes) reach the other workers
 * through the primary when Redis, whose channel reaches every worker, cannot carry them (or
 * there is no Redis).
 */
export function siblingsOverIpc(): PurgeSiblings {
  const waiting = new Map<number, () => void>();
  let lastId = 0;
  process.on('message', (m: unknown) => {
    if (isSiblingsPurgeDone(m)) waiting.get(m.id)?.();
  });
  return {
    publish: (message) => {
      process.send?.({ wikiedge: 'siblings-purge', message } satisfies SiblingsPurgeMessage);
    },
    publishAndWait: (message) =>
      new Promise<void>((resolve) => {
        const id = ++lastId;
        const done = () => {
          clearTimeout(bound);
          waiting.delete(id);
          resolve();
        };
        // A primary slow to relay, or a sibling slow to answer, delays the client's answer by
        // this much at most; the purge still reaches the siblings after it.
        const bound = setTimeout(done, SIBLINGS_PURGE_WAIT_MS);
        waiting.set(id, done);
        // No channel (a worker whose primary is gone): nobody to wait for.
        if (!process.send) return done();
        process.send({ wikiedge: 'siblings-purge', message, id } satisfies SiblingsPurgeMessage, (err: Error | null) => {
          if (err) done();
        });
      }),
    sessionUser: (slot, user) => {
      // A primary gone (the worker exits soon): nothing to tell.
      process.send?.({ wikiedge: 'session-user', slot, user } satisfies SessionUserMessage, noError);
    },
    owesPurges: (owes) => {
      process.send?.({ wikiedge: 'owes-purges', owes } satisfies OwesPurgesMessage, noError);
    },
  };
}

/** How long a session holder's write waits for the other workers to apply its purge. */
export const SIBLINGS_PURGE_WAIT_MS = 1_000;

/** In a worker: answer the primary's questions about this worker's gateway. */
export function answerPrimary(built: BuiltPublic): void {
  const gw = built.gateway;
  const handOver = { chunks: undefined as HandOverChunks | undefined };
  const inspection = localInspection(gw, built.publicApp);
  process.on('message', (m: unknown) => {
    // Whose sessions the other workers learned (messages.ts): known here too.
    if (isSessionUser(m)) return gw.sessionUsers.note(m.slot, m.user);
    if (isSessionUsers(m)) {
      for (const [slot, user] of m.pairs) gw.sessionUsers.note(slot, user);
      return;
    }
    // A worker exited owing purges to the shared tier: they are carried as a gap from here.
    if (isCarryGap(m)) return gw.storage.adoptOwed({ messages: [], overflow: true });
    if (!isAsk(m)) return;
    answer(gw, inspection, m.ask, handOver).then(
      (value) => sendAnswer({ wikiedge: 'answer', id: m.id, value }),
      (err: unknown) => sendAnswer({ wikiedge: 'answer', id: m.id, error: String(err) }),
    );
  });
  // Ready to hear now: what the primary knows of whose sessions are whose (a reload's
  // replacement would otherwise start knowing nobody); pairs learned meanwhile are told to it.
  process.send?.({ wikiedge: 'session-users-ask' } satisfies SessionUsersAskMessage, noError);
}

/** A send whose failure (the primary's channel closed: this worker is ending) needs no answer. */
const noError = (): void => undefined;

/**
 * An answer to the primary. A value the channel cannot carry (the serializer throws at once) is
 * answered as an error, so the primary hears why rather than waiting for its timeout.
 */
function sendAnswer(message: AnswerMessage): void {
  try {
    process.send?.(message, noError);
  } catch (err) {
    process.send?.({ wikiedge: 'answer', id: message.id, error: `the answer could not be sent: ${String(err)}` } satisfies AnswerMessage, noError);
  }
}

async function answer(gw: Gateway, inspection: Inspection, ask: Ask, handOver: { chunks: HandOverChunks | undefined }): Promise<Answers[Ask['op']]> {
  switch (ask.op) {
    case 'hand-over':
      // Asked once per worker, at its replacement: the chunks go on from where the last one ended.
      handOver.chunks ??= new HandOverChunks(gw.store.oldestFirst('shared'));
      return { chunk: handOver.chunks.next() ?? null };
    case 'take-over': {
      const records = handedOverEntries(ask.chunk);
      let taken = 0;
      for (const r of records) if (r.tier === 'shared' && gw.store.adopt('shared', r.key, r.entry)) taken++;
      return { offered: records.length, taken };
    }
    case 'metrics':
      return gw.registry.getMetricsAsJSON();
    case 'purge':
      // The leader purges Redis too; every other worker only its local tier (purge-fan-out.ts).
      // An admin purge is counted once, by the leader.
      if (ask.everywhere) gw.metrics.purgeRequested('admin');
      return ask.everywhere ? gw.storage.purge(ask.message, { tellSiblings: false, countReplicas: true }) : { purged: gw.storage.purgeHere(ask.message) };
    case 'cache':
      return heldVariants(gw, ask.urlKey, ask.shared);
    case 'stats':
      return localStats(gw);
    case 'trace':
      return inspection.trace(ask.input);
    case 'namespaces':
      return inspection.namespaces();
  }
}

/**
 * In a worker that has drained, before it exits: hand the primary everything it counted, and wait
 * (at most timeoutMs) until the primary has kept it. Without this, what a worker counted after
 * the last scrape would vanish with it at every reload.
 */
export async function handOverFinalMetrics(gw: Gateway, timeoutMs: number): Promise<void> {
  const metrics = await gw.registry.getMetricsAsJSON();
  await new Promise<void>((resolve) => {
    const done = () => {
      clearTimeout(timer);
      process.off('message', onMessage);
      resolve();
    };
    const onMessage = (m: unknown) => {
      if (isFinalMetricsKept(m)) done();
    };
    const timer = setTimeout(done, timeoutMs);
    process.on('message', onMessage);
    process.send?.({ wikiedge: 'final-metrics', metrics } satisfies FinalMetricsMessage, (err: Error | null) => {
      if (err) done();
    });
  });
}

/**
 * In a worker whose start failed, before it exits: tell the primary why, and the configuration key
 * to set when the failure names one (a RedisRefusal, a ListenError), so that a reload's line names
 * it (reload.ts workersReplaced). Settled once the primary has kept it (its reload reads it when
 * this worker has exited: exiting first, the message could still be on its way), at most
 * START_FAILED_WAIT_MS, or at once without a channel.
 */
export function tellStartFailed(err: unknown): Promise<void> {
  const key = (err as { key?: unknown } | null)?.key;
  const message: StartFailedMessage = { wikiedge: 'start-failed', ...(typeof key === 'string' && { key }), err: String(err) };
  return new Promise((resolve) => {
    if (!process.send) return resolve();
    const done = () => {
      clearTimeout(timer);
      process.off('message', onMessage);
      resolve();
    };
    const onMessage = (m: unknown) => {
      if (isStartFailedKept(m)) done();
    };
    // Not unref'd: the worker has nothing else left to keep it alive while it waits.
    const timer = setTimeout(done, START_FAILED_WAIT_MS);
    process.on('message', onMessage);
    process.send(message, (e: Error | null) => {
      if (e) done();
    });
  });
}

/** How long a worker whose start failed waits for the primary to keep why. */
const START_FAILED_WAIT_MS = 1_000;
