/**
 * WIKIEDGE_WORKERS > 1: a node:cluster primary and its workers. This file composes the primary;
 * each concern is a module of cluster/ that can be read and tested alone:
 *
 * - supervisor.ts: fork the workers, restart one that dies (after restart-backoff.ts's delay),
 *   stop them all.
 * - messages.ts, ipc-asks.ts, worker-side.ts: what the primary and workers say over IPC, the
 *   primary's questions with their timeouts, and the worker's answers.
 * - metrics-aggregation.ts: /metrics is the workers' registries summed (prom-client's
 *   AggregatorRegistry), exited workers' counters kept so that sums never go down.
 * - purge-fan-out.ts: POST /purge reaches every worker (with Redis, one worker purges Redis; the
 *   others only their local tier), and a worker's own purge reaches its siblings.
 * - shutdown.ts: SIGTERM/SIGINT: /readyz 503, every worker drains as a single process does
 *   (apps/app.ts), exit 0 once all of them have exited 0.
 * - inspect-workers.ts: GET /cache, /cache/stats, /config, POST /trace and a title purge's
 *   namespaces, asked of the workers and merged.
 * - reload.ts: SIGHUP: re-read and validate the configuration, then replace the workers one at
 *   a time (supervisor.ts replaceAll), the new one listening before the old one drains.
 * - worker-config.ts: every worker runs the configuration the primary validated (over IPC).
 * - worker-env.ts: what every worker's environment carries (malloc, the worker mark).
 *
 * The primary also probes the wiki, once for all its workers (upstream/probe.ts:
 * `wikiedge_upstream_up` on its own registry, added to the workers' sums; /upstreamz).
 *
 * Each worker runs the whole gateway (apps/app.ts's build() without the admin listener) on the shared
 * public port, with its own local tier. The primary runs no gateway: it owns the admin listener
 * (apps/admin.ts's routes, the same as a single process), answered from the workers over IPC; it
 * checks a purge's module= against the module table and WIKIEDGE_MODULES itself (it has the
 * configuration), and reads a title= with the namespaces a worker learned from the wiki.
 *
 * Connections are accepted by the workers themselves from the shared listening socket
 * (SCHED_NONE: the kernel picks the worker), not dealt round-robin by the primary (SCHED_RR,
 * Node's default on Linux). Measured here with 2 workers (2 cores, wrk -t2 unpinned):
 * - keep-alive hits (wrk -c100): the same rate within noise (20.2k vs 19.5k, 17.7k vs 16.9k
 *   req/s): a kept-alive connection is handed over once, so the primary's hop costs nothing
 *   per request, and the split of connections was as uneven with both (43–63 % per worker);
 * - a connection per request (wrk -c50 -H 'Connection: close'): 3.2k req/s against 1.2k, as
 *   round-robin accepts every connection in the primary and passes it to a worker over IPC;
 * - a worker killed while the primary is handing it a connection: with round-robin that
 *   connection is never answered nor closed (Node's cluster waits for the dead worker's ack),
 *   so its client hangs until its own timeout; with the kernel's queue the other worker takes
 *   what the dead one did not accept.
 * With many workers the kernel's choice can be lopsided (Node's cluster docs);
 * NODE_CLUSTER_SCHED_POLICY=rr still selects round-robin.
 */
import cluster, { type Worker } from 'node:cluster';
import type { Logger } from 'pino';
import { Registry } from 'prom-client';
import { type AdminBackend, buildAdmin } from '../apps/admin.js';
import type { PurgeMessage } from '../cache/purge.js';
import { IpcAsks } from './ipc-asks.js';
import { workersInspection } from './inspect-workers.js';
import {
  type CarryGapMessage,
  type StartFailedKeptMessage,
  type FinalMetricsKeptMessage,
  isAnswer,
  isConfigAsk,
  isFinalMetrics,
  isOwesPurges,
  isSessionUser,
  isStartFailed,
  isSessionUsersAsk,
  isSiblingsPurge,
  type SiblingsPurgeDoneMessage,
  type SessionUsersMessage,
} from './messages.js';
import { SessionUsers } from '../policy/session-users.js';
import { liveAdminOptions } from './admin-options.js';
import { ClusterMetrics, METRICS_ASK_MS } from './metrics-aggregation.js';
import { PURGE_ASK_MS, PurgeFanOut } from './purge-fan-out.js';
import { mayHandOver, reloadOnSighup, workersReplaced } from './reload.js';
import { SHUTDOWN_MARGIN_MS, shutDownOnSignals } from './shutdown.js';
import { Supervisor } from './supervisor.js';
import { handOverLocalTier } from './tier-hand-over.js';
import { WorkerConfig } from './worker-config.js';
import { workerEnv } from './worker-env.js';
import { type Config, type ConfigSources, type LoadedConfig, readConfigSources, usesRedis } from '../config/config.js';
import { checkCanListen, listenAs } from '../apps/listen.js';
import { UpstreamProbeMetrics } from '../upstream/probe.js';
import { newProbe } from './wiki-probe.js';

/**
 * In the primary: fork the workers, serve the admin listener, probe the wiki, restart, reload
 * and stop the workers. `loaded` is what `sources` gave (main.ts validated them).
 */
export async function runPrimary(loaded: LoadedConfig, sources: ConfigSources, log: Logger): Promise<void> {
  if (!process.env['NODE_CLUSTER_SCHED_POLICY']) cluster.schedulingPolicy = cluster.SCHED_NONE;
  // Structured clone over IPC: metric values may be NaN or Infinity, which JSON would turn into null.
  cluster.setupPrimary({ serialization: 'advanced' });

  /** The configuration in force; a reload replaces it (the listeners' keys never change). */
  let current = loaded;
  const config = (): Config => current.config;
  const fixed = loaded.config;
  const workerConfig = new WorkerConfig(loaded, sources);

  const asks = new IpcAsks<Worker>();
  const ownRegistry = new Registry();
  const probeMetrics = new UpstreamProbeMetrics(ownRegistry);
  let probe = newProbe(config(), probeMetrics, log);
  const metrics = new ClusterMetrics<Worker>((w) => asks.ask(w, { op: 'metrics' }, METRICS_ASK_MS), log, ownRegistry);
  const newPurges = () =>
    new PurgeFanOut<Worker>((w, message, everywhere) => asks.ask(w, { op: 'purge', message, everywhere }, PURGE_ASK_MS), usesRedis(config()), log);
  let purges = newPurges();
  /** Whose sessions are whose, as the workers learned them: for every worker, those to come too. */
  const sessionUsers = new SessionUsers();
  /** Workers that owe the shared tier purges it could not take (messages.ts OwesPurgesMessage). */
  const owing = new Set<Worker>();
  /** A worker exited owing purges while no other was up: the next that starts carries a gap. */
  let gapOwed = false;
  /** Why the last worker that failed to start said it failed (a reload's line names it). */
  let startFailure: { readonly key?: string; readonly err: string } | undefined;
  /**
   * A worker exited owing purges (a crash, a reload while Redis was down): what they removed
   * there is still in Redis and on the other replicas, and nobody is left to carry them. Another
   * worker carries a gap once Redis answers: nothing stored before it is vouched for.
   */
  const carryGap = (heir: Worker, exited?: Worker) => {
    log.warn(
      { redisPurge: 'gap', exitedWorker: exited?.id, heir: heir.id },
      'a worker exited owing purges to the shared tier: another carries a gap for them once it answers',
    );
    tell(heir, { wikiedge: 'carry-gap' } satisfies CarryGapMessage);
  };
  /** A worker has exited and its channel closed: if it owed purges, a gap from another (or the next to start). */
  const exitedOwing = (worker: Worker) => {
    if (!owing.delete(worker)) return;
    const heir = supervisor.listening().find((w) => w !== worker && w.isConnected() && !w.isDead());
    if (heir) carryGap(heir, worker);
    else gapOwed = true;
  };
  const supervisor: Supervisor = new Supervisor({
    workers: fixed.workers,
    env: workerEnv(),
    log,
    onMessage: (worker, m) => {
      if (isAnswer(m)) asks.answered(m);
      else if (isConfigAsk(m)) workerConfig.answer(worker);
      else if (isFinalMetrics(m)) {
        metrics.keepFinal(worker, m.metrics);
        worker.send({ wikiedge: 'final-metrics-kept' } satisfies FinalMetricsKeptMessage);
      } else if (isSiblingsPurge(m)) {
        const relayed = purges.relay(serving(), worker, m.message);
        const id = m.id;
        if (id !== undefined) void relayed.then(() => tell(worker, { wikiedge: 'siblings-purge-done', id } satisfies SiblingsPurgeDoneMessage));
      } else if (isSessionUser(m)) {
        // Kept for workers to come, and told to every other live one, a starting one too: noted
        // here before it is told, a pair is in the answer to a later ask if not heard (messages.ts).
        sessionUsers.note(m.slot, m.user);
        for (const other of supervisor.live()) if (other !== worker) tell(other, m);
      } else if (isSessionUsersAsk(m)) {
        tell(worker, { wikiedge: 'session-users', pairs: sessionUsers.entries() } satisfies SessionUsersMessage);
        // Its gateway is up: it carries the gap no worker was left to carry.
        if (gapOwed) {
          gapOwed = false;
          carryGap(worker);
        }
      } else if (isStartFailed(m)) {
        startFailure = { ...(m.key !== undefined && { key: m.key }), err: m.err };
        tell(worker, { wikiedge: 'start-failed-kept' } satisfies StartFailedKeptMessage);
      } else if (isOwesPurges(m)) {
        if (m.owes) owing.add(worker);
        else owing.delete(worker);
      }
    },
    onExit: (worker) => {
      asks.abandon(worker);
      metrics.retire(worker);
      // Whether it still owed purges is known once its channel has closed: a message it sent
      // before exiting may still be on its way (an `owes-purges` of false after its last carry).
      if (worker.isConnected()) worker.once('disconnect', () => exitedOwing(worker));
      else exitedOwing(worker);
    },
    handOver: async (old, replacement) => {
      if (handOverAllowed) await handOverLocalTier(asks, old, replacement, log);
    },
    onRetiring: (worker) => metrics.leaving(worker),
  });
  /** A message to a worker, unless its channel has closed (an exiting worker: nothing to tell it). */
  const tell = (worker: Worker, m: unknown) => {
    if (!worker.isConnected()) return;
    worker.send(m as Parameters<Worker['send']>[0], (err: Error | null) => {
      if (err) log.debug({ worker: worker.id, err: String(err) }, 'a message to an exiting worker was not sent');
    });
  };
  /** Every worker that may hold cached entries: the slots' workers and the replaced ones still draining. */
  const serving = () => [...supervisor.listening(), ...supervisor.draining()];

  const admin = buildAdmin(log, adminBackend(), liveAdminOptions(config));
  const state = shutDownOnSignals(
    log,
    {
      get shutdownDrainMs() {
        return config().shutdownDrainMs;
      },
      get shutdownGraceMs() {
        return config().shutdownGraceMs;
      },
    },
    {
      stopWorkers: (limitMs) => supervisor.stop(limitMs),
      closeAdmin: async () => {
        await admin.close();
        await probe.stop();
        await probe.upstream.close().catch(() => undefined);
      },
    },
  );
  // Installed before start-up's first await; a SIGHUP while the workers start reloads once they
  // all listen (reload.ts reloadOnSighup), rather than replacing workers that are still starting.
  /** A reload's configuration, validated, while its workers are being replaced; adopted once all are. */
  let pending: { readonly loaded: LoadedConfig; readonly sources: ConfigSources } | undefined;
  /** The sources `current` came from: what workers get again when a reload stops halfway. */
  let currentSources = sources;
  const sighup = reloadOnSighup(log, {
    read: () => readConfigSources(process.env),
    current: () => current,
    apply: (next, nextSources) => {
      // Only the new workers get it while they replace the old ones; the primary adopts it
      // once every worker runs it (replace), so that a reload stopped halfway leaves workers
      // restarted after it on the configuration that is known to start.
      pending = { loaded: next, sources: nextSources };
      workerConfig.set(next, nextSources);
      retireLimitMs = Math.max(drainAndGrace(current.config), drainAndGrace(next.config)) + SHUTDOWN_MARGIN_MS;
      // Not to workers of another wiki (reload.ts mayHandOver): their entries would be served as
      // fresh. Until a reload has replaced every worker, some may still hold the other wiki's:
      // a reload stopped halfway and tried again compares the same two configurations.
      if (!mayHandOver(log, current.config, next.config)) handOverAllowed = false;
    },
    replacing: 'replacing the workers one at a time',
    replace: async (changed) => {
      startFailure = undefined;
      const outcome = await supervisor.replaceAll(retireLimitMs);
      const next = pending!;
      pending = undefined;
      if (outcome.failed || outcome.stopped) {
        // Put back what the workers not replaced run: a worker that dies from now on (one of
        // theirs, or one replaced already) is restarted with it, not with a configuration
        // whose worker just exited before it listened (again and again: restart-backoff.ts).
        workerConfig.set(current, currentSources);
        return workersReplaced(outcome, changed, startFailure);
      }
      adopt(next.loaded, next.sources);
      handOverAllowed = true;
      return workersReplaced(outcome, changed);
    },
    get shuttingDown() {
      return state.shuttingDown;
    },
  });
  /** Every worker runs `next`: the primary's own parts follow (its log, purges, probe, admin). */
  const adopt = (next: LoadedConfig, nextSources: ConfigSources): void => {
    current = next;
    currentSources = nextSources;
    log.level = next.config.logLevel;
    purges = newPurges();
    // The new probe (its target or timing may have changed) also checks the new module names.
    const old = probe;
    void old.stop().then(() => old.upstream.close());
    probe = newProbe(next.config, probeMetrics, log);
    probe.start();
  };
  let retireLimitMs = drainAndGrace(fixed) + SHUTDOWN_MARGIN_MS;
  /**
   * Whether replaced workers hand their local tier over: false from a reload that changed the wiki
   * until one has replaced every worker (false: a worker may hold another wiki's cache).
   */
  let handOverAllowed = true;

  // A port in use is said in one line before any worker starts (apps/listen.ts).
  await checkCanListen({ key: 'WIKIEDGE_PORT', hostKey: 'WIKIEDGE_HOST', host: fixed.host, port: fixed.port });
  await checkCanListen({ key: 'WIKIEDGE_ADMIN_PORT', hostKey: 'WIKIEDGE_ADMIN_HOST', host: fixed.adminHost, port: fixed.adminPort });
  // Every worker must be listening before the admin listener says so; one that exits first
  // means the configuration or the port is wrong, and the primary exits 1 (supervisor.ts).
  await supervisor.start();
  // A SIGTERM while the workers started: shutdown.ts stops them and exits; nothing more to open.
  if (state.shuttingDown) return;
  await listenAs(admin, { key: 'WIKIEDGE_ADMIN_PORT', hostKey: 'WIKIEDGE_ADMIN_HOST', host: fixed.adminHost, port: fixed.adminPort });
  probe.start();
  log.info({ workers: supervisor.size, public: `${fixed.host}:${fixed.port}`, admin: admin.server.address() }, 'wikiedge listening');
  sighup.started();

  /** The admin routes (apps/admin.ts), answered from what the primary knows and by the workers that listen now. */
  function adminBackend(): AdminBackend {
    return {
      get shuttingDown() {
        return state.shuttingDown;
      },
      // No I/O: a worker listens, or none does (all dead and restarting).
      readiness: () => (supervisor.listening().length > 0 ? { ready: true } : { ready: false, reason: 'no-worker-listening' }),
      upstream: () => ({ state: probe.state, last: probe.last }),
      metrics: () => metrics.exposition(serving()),
      // Asked of the workers that listen (a replaced one still draining handed its entries over).
      inspection: workersInspection<Worker>({ ask: (w, a, ms) => asks.ask(w, a, ms), workers: () => supervisor.listening(), config, log }),
      purge: async (message) => {
        const result = await purges.purge(supervisor.listening(), message);
        purgeDraining(message);
        return result;
      },
    };
  }

  /** Replaced workers still serve their open connections from their local tier: purge it too. */
  function purgeDraining(message: PurgeMessage): void {
    for (const w of supervisor.draining()) {
      asks.ask(w, { op: 'purge', message, everywhere: false }, PURGE_ASK_MS).catch(() => undefined);
    }
  }
}

function drainAndGrace(config: Config): number {
  return config.shutdownDrainMs + config.shutdownGraceMs;
}
