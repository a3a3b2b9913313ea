/**
 * `npm start` / `node dist/main.js`: answer a command-line option and exit (apps/cli.ts: --check,
 * --print-config, --help), or validate the configuration (a bad value exits 2 naming the key),
 * listen on the public and admin addresses (a port that cannot be bound exits 1 with one line
 * naming its key, apps/listen.ts), probe the wiki in the background, reload on SIGHUP
 * (cluster/reload.ts), and shut down gracefully on SIGTERM/SIGINT (/readyz 503, drain, finish
 * in-flight requests within WIKIEDGE_SHUTDOWN_GRACE_MS, close upstream sockets, exit 0).
 *
 * WIKIEDGE_WORKERS=1 (the default) is one process (cluster/single.ts: its gateway replaced behind
 * the same listening socket at a reload). With WIKIEDGE_WORKERS > 1 this same file runs as the
 * cluster primary (cluster/primary.ts: admin listener, the upstream probe, workers' lifecycle,
 * SIGHUP reload) and as each worker (the gateway on the shared public port, without an admin
 * listener, answering the primary over IPC, running the configuration the primary hands it).
 */
// First, and alone: the listeners that keep a signal from ending the process while the rest loads.
import { type EarlySignal, takeEarlySignal } from './cluster/early-signals.js';
import type { Logger } from 'pino';
import type { Config, ConfigSources, LoadedConfig } from './config/config.js';

// The rest is loaded only now, with those listeners in place: a static import would be loaded and
// linked with the whole graph (Fastify, ioredis, prom-client, ...: ~0.3 s) before early-signals.ts
// ran, and a SIGHUP meanwhile would end the process (test/in-process/sighup-during-start-up-reloads-once-up.test.ts).
const {
  answerPrimary,
  build,
  cluster,
  CLUSTER_WORKER_MARK,
  ConfigError,
  configFromPrimary,
  configFromSources,
  createLogger,
  describeConfig,
  handOverFinalMetrics,
  ListenError,
  listenAs,
  parseCommand,
  readConfigSources,
  reopenAccessLogs,
  runCommand,
  runPrimary,
  runSingle,
  siblingsOverIpc,
  tellStartFailed,
} = await import('./cluster/process-parts.js');

/** How long a starting worker waits for its primary to send the configuration. */
const WORKER_CONFIG_WAIT_MS = 10_000;
/** How long a drained worker waits for its primary to keep its final metrics. */
const FINAL_METRICS_WAIT_MS = 2_000;

async function main(): Promise<void> {
  const command = parseCommand(process.argv.slice(2));
  if (command !== 'serve') {
    process.exitCode = runCommand(command, process.env, process.stdout, process.stderr);
    return;
  }
  if (cluster.isWorker && process.env[CLUSTER_WORKER_MARK] === '1') return runWorker(cluster.worker!.id);

  const { loaded, sources } = configOrExit();
  const { config } = loaded;
  const log = createLogger(config.logLevel, { pretty: config.logFormat === 'pretty' });
  for (const warning of loaded.warnings) log.warn(warning);
  log.info({ config: describeConfig(config) }, 'effective configuration');
  if (config.workers > 1) {
    forwardSigusr1ToWorkers(log);
    return runPrimary(loaded, sources, log);
  }
  reopenOnSigusr1(log);
  // Both handlers before start-up's first await: SIGHUP (in runSingle) reloads once the gateway is
  // up, SIGTERM/SIGINT shut it down once it is, rather than Node's default of ending the process.
  const single = runSingle(loaded, log);
  exitOnSignal(log, single);
  await single.up;
}

function configOrExit(): { loaded: LoadedConfig; sources: ConfigSources } {
  try {
    const sources = readConfigSources(process.env);
    return { loaded: configFromSources(sources), sources };
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`wikiedge: invalid configuration: ${err.message}\n`);
      process.exit(2);
    }
    throw err;
  }
}

/** A cluster worker: the configuration its primary validated, the public listener only. */
async function runWorker(id: number): Promise<void> {
  // The primary reloads; a SIGHUP that reaches a worker too (sent to the process group) must not end it.
  const late: { log?: Logger } = {};
  process.on('SIGHUP', () => late.log?.info({ signal: 'SIGHUP' }, 'SIGHUP ignored by a worker: its primary reloads'));
  takeEarlySignal('SIGHUP');
  let config: Config;
  try {
    config = configFromSources(await configFromPrimary(WORKER_CONFIG_WAIT_MS), { checkFiles: false }).config;
  } catch (err) {
    process.stderr.write(`wikiedge: worker ${id}: ${(err as Error).message}\n`);
    process.exit(2);
  }
  const log = createLogger(config.logLevel, { pretty: config.logFormat === 'pretty' }).child({ worker: id });
  late.log = log;
  reopenOnSigusr1(log);
  let built: Awaited<ReturnType<typeof build>>;
  try {
    built = await build(config, log, { siblings: siblingsOverIpc() }, { admin: false });
    answerPrimary(built);
    await listenAs(built.publicApp, { key: 'WIKIEDGE_PORT', hostKey: 'WIKIEDGE_HOST', host: config.host, port: config.port });
  } catch (err) {
    // The primary's reload line names why, and the key to set (cluster/reload.ts workersReplaced).
    await tellStartFailed(err);
    throw err;
  }
  built.learnNamespaces();
  exitOnSignal(log, built, () => handOverFinalMetrics(built.gateway, FINAL_METRICS_WAIT_MS));
}

/**
 * SIGUSR1: reopen the access-log file (WIKIEDGE_ACCESS_LOG_FILE) by its name, as nginx does,
 * for logrotate's postrotate. Without a file it changes nothing. A listener also keeps Node
 * from taking SIGUSR1 as the signal to start its inspector.
 */
function reopenOnSigusr1(log: Logger): void {
  process.on('SIGUSR1', () => {
    const files = reopenAccessLogs();
    log.info({ signal: 'SIGUSR1', files }, files > 0 ? 'access log reopened' : 'SIGUSR1: no access-log file to reopen');
  });
}

/** A cluster primary writes no access log: it passes SIGUSR1 on to its workers, which do. */
function forwardSigusr1ToWorkers(log: Logger): void {
  process.on('SIGUSR1', () => {
    const workers = Object.values(cluster.workers ?? {});
    for (const worker of workers) worker?.process.kill('SIGUSR1');
    log.info({ signal: 'SIGUSR1', workers: workers.length }, 'SIGUSR1 passed on to the workers: they reopen the access log');
  });
}

/**
 * SIGTERM or SIGINT: close (apps/app.ts), then exit 0; a second signal changes nothing. A cluster
 * worker hands its final metrics to the primary between the two (beforeExit).
 */
function exitOnSignal(log: Logger, built: { close(): Promise<void> }, beforeExit?: () => Promise<void>): void {
  let closing = false;
  const shutdown = (signal: string) => {
    if (closing) return;
    closing = true;
    log.info({ signal }, 'shutting down: draining in-flight requests');
    built.close().then(
      async () => {
        await beforeExit?.().catch(() => undefined);
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
  // One that came before these handlers (cluster/early-signals.ts): shut down now.
  for (const signal of ['SIGTERM', 'SIGINT'] as const satisfies readonly EarlySignal[]) if (takeEarlySignal(signal)) shutdown(signal);
}

main().catch((err: unknown) => {
  // A port that cannot be bound is an operator's matter: one line naming the key, no stack.
  if (err instanceof ListenError) process.stderr.write(`wikiedge: ${err.message}\n`);
  else process.stderr.write(`wikiedge: failed to start: ${(err as Error)?.stack ?? String(err)}\n`);
  process.exit(1);
});
