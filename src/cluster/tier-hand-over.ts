/**
 * A reload's hand-over of the local tier, from the primary's side: ask the replaced worker for
 * its shared entries a chunk at a time (cache/hand-over.ts) and hand each chunk to the worker
 * that replaces it, until it has none left or the time is up. Both workers serve meanwhile; a
 * purge that reaches either is applied by both (the new one refuses what was purged since it
 * started, store.ts adopt). With Redis the new worker would refill from there too (`hit-shared`),
 * at a Redis round trip per entry; without Redis this is all that keeps the cache across a reload.
 */
import type { Logger } from 'pino';
import type { AskPeer, IpcAsks } from './ipc-asks.js';

/** One chunk's round trip (encode, two IPC hops, adopt): far more than a few MiB need. */
export const HAND_OVER_ASK_MS = 5_000;
/** A whole hand-over: past it, the rest stays behind (the reload must not stall on a huge tier). */
export const HAND_OVER_LIMIT_MS = 30_000;

export interface HandOverOutcome {
  readonly chunks: number;
  readonly offered: number;
  readonly taken: number;
  /** Why it stopped before the end: a worker did not answer, or the time was up. */
  readonly stopped?: string;
}

export async function handOverLocalTier<W extends AskPeer>(
  asks: IpcAsks<W>,
  old: W,
  replacement: W,
  log: Logger,
  { limitMs = HAND_OVER_LIMIT_MS, now = Date.now }: { limitMs?: number; now?: () => number } = {},
): Promise<HandOverOutcome> {
  const t0 = now();
  let chunks = 0;
  let offered = 0;
  let taken = 0;
  let stopped: string | undefined;
  try {
    for (;;) {
      if (now() - t0 > limitMs) {
        stopped = `not done within ${limitMs} ms`;
        break;
      }
      const { chunk } = await asks.ask(old, { op: 'hand-over' }, HAND_OVER_ASK_MS);
      if (chunk === null) break;
      const took = await asks.ask(replacement, { op: 'take-over', chunk }, HAND_OVER_ASK_MS);
      chunks++;
      offered += took.offered;
      taken += took.taken;
    }
  } catch (err) {
    stopped = String((err as Error).message ?? err);
  }
  const outcome = { chunks, offered, taken, ...(stopped !== undefined && { stopped }) };
  const fields = { from: old.id, to: replacement.id, ...outcome, ms: now() - t0 };
  if (stopped === undefined) log.info(fields, 'reload: local tier handed over');
  else log.warn(fields, 'reload: local tier handed over in part');
  return outcome;
}
