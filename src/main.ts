/**
 * `npm start`: validate the configuration (a bad value exits non-zero naming the key), listen on
 * the public and admin addresses, and shut down gracefully on SIGTERM/SIGINT: stop accepting,
 * finish in-flight requests within WIKIEDGE_SHUTDOWN_GRACE_MS, close upstream sockets, exit 0.
 */
import { build } from './app.js';
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
  log.info({ config: describeConfig(config) }, 'effective configuration');
  const gateway = await build(config, log);
  await gateway.publicApp.listen({ host: config.host, port: config.port });
  await gateway.adminApp.listen({ host: config.adminHost, port: config.adminPort });
  log.info(
    { public: gateway.publicApp.server.address(), admin: gateway.adminApp.server.address() },
    'wikiedge listening',
  );

  let closing = false;
  const shutdown = (signal: string) => {
    if (closing) return;
    closing = true;
    log.info({ signal }, 'shutting down: draining in-flight requests');
    gateway.close().then(
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
