/**
 * The workers' lifecycle, and nothing else: one slot per worker (WIKIEDGE_WORKERS of them), each
 * holding the worker that currently serves for it.
 *
 * - start: fork every slot's worker; resolves once all of them listen. One that exits before
 *   that means the configuration or the port is wrong: stop everything and exit 1, as a single
 *   process would.
 * - afterwards, a worker that dies is forked again in its slot after restart-backoff.ts's delay.
 * - stop: SIGTERM to every worker (each drains as a single process does, app.ts), SIGKILL to
 *   what is left past the limit; says whether every worker exited cleanly.
 *
 * What workers say, and that one exited, is handed to the owner (onMessage, onExit): answers
 * and metrics are not this module's business.
 *
 * A slot and its worker are apart so that a slot's worker can be replaced one at a time (a
 * rolling reload): startSlot forks a slot's worker and resolves when it listens, and the exit of
 * a worker that is no longer its slot's (replaced) is neither a death nor restarted.
 */
import cluster, { type Worker } from 'node:cluster';
import type { Logger } from 'pino';
import { nextRestart } from './restart-backoff.js';

export interface SupervisorOptions {
  readonly workers: number;
  /** Added to each worker's environment (which is otherwise the primary's). */
  readonly env: Readonly<Record<string, string>>;
  readonly log: Logger;
  /** Anything a worker sent (node:cluster's own messages included). */
  readonly onMessage: (worker: Worker, message: unknown) => void;
  /** A worker exited, for whatever reason (called before its slot is restarted). */
  readonly onExit: (worker: Worker) => void;
  /** Clock for how long a worker lived (ms). */
  readonly now?: () => number;
}

interface Slot {
  readonly index: number;
  worker: Worker | undefined;
  startedAt: number;
  listening: boolean;
  /** Deaths in a row, each soon after its start (restart-backoff.ts). */
  quickDeaths: number;
  restart: NodeJS.Timeout | undefined;
}

export class Supervisor {
  private readonly slots: Slot[];
  private readonly now: () => number;
  /** Set once every worker has listened: from then on a worker that dies is restarted. */
  private started = false;
  /** Set by stop(): nothing is restarted any more. */
  private stopping = false;

  constructor(private readonly options: SupervisorOptions) {
    this.now = options.now ?? Date.now;
    this.slots = Array.from({ length: options.workers }, (_, index) => ({
      index,
      worker: undefined,
      startedAt: 0,
      listening: false,
      quickDeaths: 0,
      restart: undefined,
    }));
  }

  get size(): number {
    return this.slots.length;
  }

  /** Fork every worker; resolves once all of them listen. */
  async start(): Promise<void> {
    await Promise.all(this.slots.map((slot) => this.startSlot(slot)));
    this.started = true;
  }

  /** The workers that listen now, in slot order: the ones worth asking. */
  listening(): Worker[] {
    return this.slots.flatMap((s) => (s.listening && s.worker ? [s.worker] : []));
  }

  /**
   * SIGTERM to every worker, SIGKILL to those still running after limitMs. Resolves once all
   * have exited: true if each exited 0 after draining, or was ended by this SIGTERM while still
   * starting (before its handler was installed: it had no request yet).
   */
  async stop(limitMs: number): Promise<boolean> {
    this.stopping = true;
    for (const slot of this.slots) clearTimeout(slot.restart);
    const workers = this.slots.flatMap((s) => (s.worker ? [s.worker] : []));
    const exits = workers.map(
      (w) => new Promise<boolean>((resolve) => {
        if (w.isDead()) resolve(w.process.exitCode === 0);
        else w.once('exit', (code, signal) => resolve(code === 0 || signal === 'SIGTERM'));
      }),
    );
    this.signalAll('SIGTERM');
    const overdue = setTimeout(() => {
      this.options.log.error({ limitMs }, 'shutdown: workers still running past drain + grace: killing them');
      this.signalAll('SIGKILL');
    }, limitMs);
    try {
      return (await Promise.all(exits)).every(Boolean);
    } finally {
      clearTimeout(overdue);
    }
  }

  /** Fork the slot's worker; resolves once it listens. */
  private startSlot(slot: Slot): Promise<void> {
    const { log } = this.options;
    const worker = cluster.fork(this.options.env);
    slot.worker = worker;
    slot.startedAt = this.now();
    slot.listening = false;
    return new Promise<void>((resolve) => {
      worker.on('message', (m: unknown) => this.options.onMessage(worker, m));
      worker.once('listening', () => {
        slot.listening = true;
        log.info({ worker: worker.id, pid: worker.process.pid }, 'worker listening');
        resolve();
      });
      worker.once('exit', (code, signal) => {
        if (!this.started && !this.stopping) {
          process.stderr.write(`wikiedge: worker ${worker.id} exited (code ${code}, signal ${signal}) before listening\n`);
          this.signalAll('SIGTERM');
          process.exit(1);
        }
        this.exited(slot, worker, code, signal);
      });
    });
  }

  private exited(slot: Slot, worker: Worker, code: number | null, signal: string | null): void {
    const { log } = this.options;
    // A worker that was replaced in its slot is not its slot's any more: its exit is expected.
    const died = slot.worker === worker;
    if (died) {
      slot.listening = false;
      slot.worker = undefined;
    }
    this.options.onExit(worker);
    if (this.stopping) {
      log.info({ worker: worker.id, pid: worker.process.pid, code, signal }, 'worker exited');
      return;
    }
    if (!died) return;
    const lived = this.now() - slot.startedAt;
    const restart = nextRestart(slot.quickDeaths, lived);
    slot.quickDeaths = restart.quickDeaths;
    log.error(
      { worker: worker.id, pid: worker.process.pid, code, signal, livedMs: lived, restartInMs: restart.delayMs },
      'worker died: restarting it',
    );
    slot.restart = setTimeout(() => {
      slot.restart = undefined;
      void this.startSlot(slot);
    }, restart.delayMs);
  }

  private signalAll(signal: NodeJS.Signals): void {
    for (const slot of this.slots) {
      const w = slot.worker;
      if (w && !w.isDead()) w.process.kill(signal);
    }
  }
}
