/**
 * `npm start`: validate the configuration (a bad value exits non-zero naming the key), listen on
 * the public and admin addresses, and shut down gracefully on SIGTERM/SIGINT (app.ts: /readyz
 * 503, drain, finish in-flight requests within WIKIEDGE_SHUTDOWN_GRACE_MS, close upstream
 * sockets, exit 0).
 *
 * With WIKIEDGE_WORKERS > 1 this same file runs as the cluster primary (cluster.ts: admin
 * listener, workers' lifecycle) and as each worker (the gateway on the shared public port,
 * without an admin listener, answering the primary over IPC).
 */
import cluster from 'node:cluster';
import type { Logger } from 'pino';
import { type BuiltPublic, build } from './app.js';
import { runPrimary } from './cluster.js';
import { answerPrimary, siblingsOverIpc } from './cluster/worker-side.js';
import { ConfigError, describeConfig, loadConfig } from './config.js';
import { createLogger } from './logging.js';

async function main(): Promise<void> {
  let config: ReturnType<typeof loadConfig>;
  try {
    config = loadConfig();
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`wikiedge: invalid configuration: ${err.message}\n`);
      process.exit(2);
    }
    throw err;
  }
  const log = createLogger(config.logLevel, { pretty: config.logFormat === 'pretty' });
  // Only WIKIEDGE_WORKERS makes this a cluster: under another cluster manager (pm2's cluster
  // mode forks its workers with node:cluster too) a single-worker gateway stays a whole one.
  const worker = config.workers > 1 && cluster.isWorker ? cluster.worker : undefined;
  if (!worker) log.info({ config: describeConfig(config) }, 'effective configuration');
  if (config.workers > 1 && cluster.isPrimary) return runPrimary(config, log);

  if (worker) {
    const workerLog = log.child({ worker: worker.id });
    const built = await build(config, workerLog, { siblings: siblingsOverIpc() }, { admin: false });
    answerPrimary(built);
    await built.publicApp.listen({ host: config.host, port: config.port });
    exitOnSignal(workerLog, built);
    return;
  }
  const built = await build(config, log);
  await built.publicApp.listen({ host: config.host, port: config.port });
  await built.adminApp.listen({ host: config.adminHost, port: config.adminPort });
  log.info(
    { public: built.publicApp.server.address(), admin: built.adminApp.server.address() },
    'wikiedge listening',
  );
  exitOnSignal(log, built);
}

/** SIGTERM or SIGINT: close (app.ts), then exit 0; a second signal changes nothing. */
function exitOnSignal(log: Logger, built: BuiltPublic): void {
  let closing = false;
  const shutdown = (signal: string) => {
    if (closing) return;
    closing = true;
    log.info({ signal }, 'shutting down: draining in-flight requests');
    built.close().then(
      () => {
        log.info('shutdown complete');
        log.flush?.();
        process.exit(0);
      },
      (err: unknown) => {
        log.error({ err }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGINT', () => shutdown('SIGINT'));
}

main().catch((err: unknown) => {
  process.stderr.write(`wikiedge: failed to start: ${(err as Error)?.stack ?? String(err)}\n`);
  process.exit(1);
});
