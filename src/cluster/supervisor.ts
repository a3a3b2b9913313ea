/**
 * The workers' lifecycle, and nothing else: one slot per worker (WIKIEDGE_WORKERS of them), each
 * holding the worker that currently serves for it.
 *
 * - start: fork every slot's worker; resolves once all of them listen. One that exits before
 *   that means the configuration or the port is wrong: stop everything and exit 1, as a single
 *   process would.
 * - afterwards, a worker that dies is forked again in its slot after restart-backoff.ts's delay.
 * - replaceAll (a reload): slot after slot, fork a new worker, wait until it listens, make it
 *   the slot's, let the old one hand its local tier over (handOver), then SIGTERM the old one
 *   and wait for it to exit (it drains as a single process does, apps/app.ts). The shared listening socket always has a worker accepting on it, and never
 *   fewer than WIKIEDGE_WORKERS serve: capacity does not drop. A new worker that exits before it
 *   listens stops the replacement; the slot keeps its old worker.
 * - stop: SIGTERM to every worker (slot holders, replacements still starting, replaced ones still
 *   draining), SIGKILL to what is left past the limit; says whether every worker exited cleanly.
 *
 * What workers say, and that one exited, is handed to the owner (onMessage, onExit): answers,
 * metrics and configurations are not this module's business.
 *
 * A slot and its worker are apart so that a slot's worker can be replaced: the exit of a worker
 * that is no longer its slot's (replaced, or a replacement that never got its slot) is neither a
 * death nor restarted.
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
  /**
   * A reload: what `old` holds goes to `replacement`, which listens already, before `old` is
   * told to drain (cluster/tier-hand-over.ts). Bounded by its owner; never rejects.
   */
  readonly handOver?: (old: Worker, replacement: Worker) => Promise<void>;
  /** A worker is told to drain (replaced by a reload), just before its SIGTERM. */
  readonly onRetiring?: (worker: Worker) => void;
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

/** A worker forked, and whether it came to listen (false: it exited first). */
interface Forked {
  readonly worker: Worker;
  readonly listened: Promise<boolean>;
}

/** How a replacement of every worker ended. */
export interface ReplaceOutcome {
  /** Slots whose worker was replaced. */
  readonly replaced: number;
  /** A new worker exited before it listened: its slot kept its old worker, and the later slots theirs. */
  readonly failed?: { readonly slot: number; readonly code: number | null; readonly signal: string | null };
  /** Shutdown began meanwhile: the replacement stopped there. */
  readonly stopped?: boolean;
}

export class Supervisor {
  private readonly slots: Slot[];
  private readonly now: () => number;
  /** Every worker not yet exited: slot holders, replacements still starting, replaced ones draining. */
  private readonly alive = new Set<Worker>();
  /** Replaced workers that are draining. */
  private readonly retiring = new Set<Worker>();
  /** Set once every worker has listened: from then on a worker that dies is restarted. */
  private started = false;
  /** Set by stop(): nothing is restarted or replaced any more. */
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
    // A SIGTERM came before start-up got here (shutdown.ts): nothing to fork.
    if (this.stopping) return;
    await Promise.all(this.slots.map((slot) => this.startSlot(slot)));
    this.started = true;
  }

  /** The workers that listen now, in slot order: the ones worth asking. */
  /** Every worker forked and not yet exited, starting, listening or draining. */
  live(): Worker[] {
    return [...this.alive];
  }

  listening(): Worker[] {
    return this.slots.flatMap((s) => (s.listening && s.worker ? [s.worker] : []));
  }

  /** Replaced workers still draining: they serve the connections they hold, nothing new. */
  draining(): Worker[] {
    return [...this.retiring];
  }

  /**
   * Replace every slot's worker, one at a time (a reload): fork the new one, wait until it
   * listens, give it the slot, SIGTERM the old one and wait until it has exited (SIGKILL past
   * retireLimitMs), then the next slot. New workers are forked with the same env; what they
   * run is the owner's business (they ask for their configuration over IPC, reload.ts).
   */
  async replaceAll(retireLimitMs: number): Promise<ReplaceOutcome> {
    let replaced = 0;
    for (const slot of this.slots) {
      if (this.stopping) return { replaced, stopped: true };
      const { worker, listened } = this.fork();
      const exit = exitOf(worker);
      if (!(await listened)) {
        const { code, signal } = await exit;
        return { replaced, failed: { slot: slot.index, code, signal } };
      }
      // stop() has signalled it already, with every live worker.
      if (this.stopping) return { replaced, stopped: true };
      const old = slot.worker;
      clearTimeout(slot.restart);
      slot.restart = undefined;
      this.occupy(slot, worker);
      slot.listening = true;
      slot.quickDeaths = 0;
      this.logListening(worker, slot);
      if (old && !old.isDead()) {
        // Draining from now on, not from its SIGTERM: a worker that is neither a slot's nor
        // draining is asked by no scrape, and its counts would vanish from the sums meanwhile.
        this.retiring.add(old);
        await this.options.handOver?.(old, worker);
        // The new worker died during the hand-over: the slot keeps its old one (capacity never drops).
        if (worker.isDead() && !old.isDead() && !this.stopping) {
          clearTimeout(slot.restart);
          slot.restart = undefined;
          this.occupy(slot, old);
          this.retiring.delete(old);
          slot.listening = true;
          const { code, signal } = await exit;
          return { replaced, failed: { slot: slot.index, code, signal } };
        }
        // The old one may have died meanwhile: nothing left to retire.
        if (!old.isDead()) await this.retire(old, retireLimitMs);
      }
      replaced++;
    }
    return { replaced };
  }

  /**
   * SIGTERM to every worker, SIGKILL to those still running after limitMs. Resolves once all
   * have exited: true if each exited 0 after draining, or was ended by this SIGTERM while still
   * starting (before its handler was installed: it had no request yet).
   */
  async stop(limitMs: number): Promise<boolean> {
    this.stopping = true;
    for (const slot of this.slots) clearTimeout(slot.restart);
    const exits = [...this.alive].map((w) =>
      w.isDead() ? Promise.resolve(w.process.exitCode === 0) : exitOf(w).then(({ code, signal }) => code === 0 || signal === 'SIGTERM'),
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

  /** Fork the slot's worker; resolves once it listens (or has exited before). */
  private async startSlot(slot: Slot): Promise<void> {
    const { worker, listened } = this.fork();
    this.occupy(slot, worker);
    if ((await listened) && slot.worker === worker) {
      slot.listening = true;
      this.logListening(worker, slot);
    }
  }

  private occupy(slot: Slot, worker: Worker): void {
    slot.worker = worker;
    slot.startedAt = this.now();
    slot.listening = false;
  }

  private logListening(worker: Worker, slot: Slot): void {
    this.options.log.info({ worker: worker.id, pid: worker.process.pid, slot: slot.index }, 'worker listening');
  }

  private fork(): Forked {
    const worker = cluster.fork(this.options.env);
    this.alive.add(worker);
    worker.on('message', (m: unknown) => this.options.onMessage(worker, m));
    // A send to a worker whose channel has closed (it is exiting) fails with EPIPE as an 'error'
    // event: unheard, it would end the primary (commit 9cf195d; workers-share-whose-sessions-are-whose.test.ts).
    worker.on('error', (err: Error) => this.options.log.warn({ worker: worker.id, err: String(err) }, 'IPC with a worker failed'));
    const listened = new Promise<boolean>((resolve) => {
      worker.once('listening', () => resolve(true));
      worker.once('exit', () => resolve(false));
    });
    worker.once('exit', (code: number | null, signal: string | null) => {
      this.alive.delete(worker);
      this.retiring.delete(worker);
      this.exited(worker, code, signal);
    });
    return { worker, listened };
  }

  /** SIGTERM to a replaced worker; resolves once it has exited (SIGKILL past limitMs). */
  private async retire(worker: Worker, limitMs: number): Promise<void> {
    if (worker.isDead()) return;
    this.retiring.add(worker);
    this.options.onRetiring?.(worker);
    const exit = exitOf(worker);
    const overdue = setTimeout(() => {
      this.options.log.error({ worker: worker.id, pid: worker.process.pid, limitMs }, 'reload: a replaced worker still runs past drain + grace: killing it');
      worker.process.kill('SIGKILL');
    }, limitMs);
    worker.process.kill('SIGTERM');
    try {
      await exit;
    } finally {
      clearTimeout(overdue);
    }
  }

  private exited(worker: Worker, code: number | null, signal: string | null): void {
    const { log } = this.options;
    const slot = this.slots.find((s) => s.worker === worker);
    if (!slot) {
      // Replaced (its exit is expected), or a replacement that never listened (replaceAll says so).
      this.options.onExit(worker);
      log.info({ worker: worker.id, pid: worker.process.pid, code, signal }, 'worker exited');
      return;
    }
    if (!this.started && !this.stopping) {
      process.stderr.write(`wikiedge: worker ${worker.id} exited (code ${code}, signal ${signal}) before listening\n`);
      this.signalAll('SIGTERM');
      process.exit(1);
    }
    slot.listening = false;
    slot.worker = undefined;
    this.options.onExit(worker);
    if (this.stopping) {
      log.info({ worker: worker.id, pid: worker.process.pid, code, signal }, 'worker exited');
      return;
    }
    const lived = this.now() - slot.startedAt;
    const restart = nextRestart(slot.quickDeaths, lived);
    slot.quickDeaths = restart.quickDeaths;
    log.error({ worker: worker.id, pid: worker.process.pid, code, signal, livedMs: lived, restartInMs: restart.delayMs }, 'worker died: restarting it');
    slot.restart = setTimeout(() => {
      slot.restart = undefined;
      if (!slot.worker) void this.startSlot(slot);
    }, restart.delayMs);
  }

  private signalAll(signal: NodeJS.Signals): void {
    for (const w of this.alive) if (!w.isDead()) w.process.kill(signal);
  }
}

/** The worker's exit, whenever it comes (already, if it has exited). */
function exitOf(worker: Worker): Promise<{ code: number | null; signal: string | null }> {
  if (worker.isDead()) return Promise.resolve({ code: worker.process.exitCode, signal: worker.process.signalCode });
  return new Promise((resolve) => worker.once('exit', (code: number | null, signal: string | null) => resolve({ code, signal })));
}
