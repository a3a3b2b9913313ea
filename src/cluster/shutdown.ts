/**
 * The primary's graceful stop on SIGTERM or SIGINT, the cluster's version of main.ts's
 * exitOnSignal: from the signal on the admin /readyz answers 503, every worker drains as a
 * single process does (apps/app.ts), the admin listener closes last, and the primary exits 0 only if
 * every worker exited cleanly. A second signal changes nothing.
 */
import type { Logger } from 'pino';
import type { Config } from '../config/config.js';
import { type EarlySignal, takeEarlySignal } from './early-signals.js';

/** On shutdown, how long past drain + grace the primary waits before it kills what is left. */
export const SHUTDOWN_MARGIN_MS = 5_000;

export interface ShutdownSteps {
  /** Stop every worker, killing what is left after limitMs; true if all exited cleanly. */
  stopWorkers(limitMs: number): Promise<boolean>;
  closeAdmin(): Promise<void>;
}

/** What the admin listener reads: /readyz is 503 from the first signal on. */
export interface ShutdownState {
  readonly shuttingDown: boolean;
}

/** Install the SIGTERM and SIGINT handlers; the state says whether one has come. */
export function shutDownOnSignals(log: Logger, config: Pick<Config, 'shutdownDrainMs' | 'shutdownGraceMs'>, steps: ShutdownSteps): ShutdownState {
  const state = { shuttingDown: false };
  const shutdown = async (signal: string): Promise<void> => {
    if (state.shuttingDown) return;
    state.shuttingDown = true;
    log.info({ signal }, 'shutting down: /readyz is 503, every worker drains');
    try {
      // Each worker has its own drain and grace (apps/app.ts); the margin is for its exit itself.
      const clean = await steps.stopWorkers(config.shutdownDrainMs + config.shutdownGraceMs + SHUTDOWN_MARGIN_MS);
      await steps.closeAdmin();
      if (clean) log.info('shutdown complete');
      else log.error('shutdown: a worker did not exit cleanly');
      log.flush?.();
      process.exit(clean ? 0 : 1);
    } catch (err) {
      log.error({ err }, 'shutdown failed');
      process.exit(1);
    }
  };
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));
  // One that came before these handlers (early-signals.ts): shut down now.
  for (const signal of ['SIGTERM', 'SIGINT'] as const satisfies readonly EarlySignal[]) if (takeEarlySignal(signal)) void shutdown(signal);
  return state;
}
