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
 *   (app.ts), exit 0 once all of them have exited 0.
 * - worker-env.ts: what every worker's environment carries (the session HMAC key, malloc).
 *
 * Each worker runs the whole gateway (app.ts's build() without the admin listener) on the shared
 * public port, with its own local tier. The primary runs no gateway: it owns the admin listener
 * (admin.ts's routes, the same as a single process), answered from the workers over IPC.
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
import { type AdminBackend, type Readiness, buildAdmin } from './admin.js';
import { IpcAsks } from './cluster/ipc-asks.js';
import { isAnswer, isSiblingsPurge } from './cluster/messages.js';
import { ClusterMetrics, METRICS_ASK_MS } from './cluster/metrics-aggregation.js';
import { PURGE_ASK_MS, PurgeFanOut } from './cluster/purge-fan-out.js';
import { shutDownOnSignals } from './cluster/shutdown.js';
import { Supervisor } from './cluster/supervisor.js';
import { workerEnv } from './cluster/worker-env.js';
import type { Config } from './config.js';

/** In the primary: fork the workers, serve the admin listener, restart and stop the workers. */
export async function runPrimary(config: Config, log: Logger): Promise<void> {
  if (!process.env['NODE_CLUSTER_SCHED_POLICY']) cluster.schedulingPolicy = cluster.SCHED_NONE;
  // Structured clone over IPC: metric values may be NaN or Infinity, which JSON would turn into null.
  cluster.setupPrimary({ serialization: 'advanced' });

  const asks = new IpcAsks<Worker>();
  const metrics = new ClusterMetrics<Worker>((w) => asks.ask(w, { op: 'metrics' }, METRICS_ASK_MS), log);
  const purges = new PurgeFanOut<Worker>(
    (w, message, everywhere) => asks.ask(w, { op: 'purge', message, everywhere }, PURGE_ASK_MS),
    Boolean(config.redisUrl),
    log,
  );
  const supervisor: Supervisor = new Supervisor({
    workers: config.workers,
    env: workerEnv(config),
    log,
    onMessage: (worker, m) => {
      if (isAnswer(m)) asks.answered(m);
      else if (isSiblingsPurge(m)) purges.relay(supervisor.listening(), worker, m.message);
    },
    onExit: (worker) => {
      asks.abandon(worker);
      metrics.retire(worker);
    },
  });
  const admin = buildAdmin(log, adminBackend(), { token: config.adminToken, apiPath: config.apiPath });
  const state = shutDownOnSignals(log, config, {
    stopWorkers: (limitMs) => supervisor.stop(limitMs),
    closeAdmin: () => admin.close(),
  });

  // Every worker must be listening before the admin listener says so; one that exits first
  // means the configuration or the port is wrong, and the primary exits 1 (supervisor.ts).
  await supervisor.start();
  await admin.listen({ host: config.adminHost, port: config.adminPort });
  log.info(
    { workers: supervisor.size, public: `${config.host}:${config.port}`, admin: admin.server.address() },
    'wikiedge listening',
  );

  /** The admin routes (admin.ts), answered by the workers that listen now. */
  function adminBackend(): AdminBackend {
    return {
      get shuttingDown() {
        return state.shuttingDown;
      },
      readiness: () => askReady(supervisor.listening()[0]),
      metrics: () => metrics.exposition(supervisor.listening()),
      purge: (message) => purges.purge(supervisor.listening(), message),
    };
  }

  /** One worker probes the wiki for all: they share its address and its configuration. */
  async function askReady(worker: Worker | undefined): Promise<Readiness> {
    if (!worker) return { ready: false, reason: 'no-worker-listening' };
    try {
      // The worker's probe gives up after readyTimeoutMs; a second more for its answer to come back.
      return await asks.ask(worker, { op: 'ready' }, config.readyTimeoutMs + 1_000);
    } catch (err) {
      return { ready: false, error: (err as Error).message };
    }
  }
}
