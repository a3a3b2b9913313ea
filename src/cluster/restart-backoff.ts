/**
 * When to restart a worker that died: the rule alone, without timers or processes, so that it
 * can be read and tested with literal numbers (supervisor.ts applies it).
 *
 * A worker that keeps dying soon after its start (whatever kills it, a restart does not cure)
 * would otherwise be forked in a tight loop, each start-up taking a core from the workers still
 * serving. The delay doubles with each such death in a row, up to RESTART_MAX_MS; a worker that
 * lived STABLE_AFTER_MS before dying was healthy, so its death starts the count again.
 */

/** First restart delay of a worker that died; doubled for each death soon after a start. */
export const RESTART_BASE_MS = 100;
export const RESTART_MAX_MS = 10_000;
/** A worker that lived this long before dying is restarted after RESTART_BASE_MS again. */
export const STABLE_AFTER_MS = 30_000;

export interface Restart {
  /** Deaths in a row, each within STABLE_AFTER_MS of its start, this one included. */
  readonly quickDeaths: number;
  readonly delayMs: number;
}

/**
 * @param quickDeaths the slot's deaths in a row before this one
 * @param livedMs how long the worker that just died had run
 */
export function nextRestart(quickDeaths: number, livedMs: number): Restart {
  const deaths = livedMs < STABLE_AFTER_MS ? quickDeaths + 1 : 0;
  const delayMs = Math.min(RESTART_MAX_MS, RESTART_BASE_MS * 2 ** Math.max(0, deaths - 1));
  return { quickDeaths: deaths, delayMs };
}
