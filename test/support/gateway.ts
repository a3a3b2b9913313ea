// Start the real gateway (build() + listen on port 0) in this process, against any upstream.
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import { type Built, build } from '../../src/apps/app.js';
import { loadConfig } from '../../src/config/config.js';
import type { GatewayDeps } from '../../src/gateway/gateway.js';
import { createLogger } from '../../src/observe/logging.js';
import { until } from './until.js';

/**
 * For tests that play many clients from one loopback address (floods, crowds of sessions,
 * shutdown under load): the per-client limits are off, since every request looks like the same
 * client. The limits have their own tests (attack-slow-and-flooding-clients).
 */
export const MANY_CLIENTS_FROM_LOOPBACK: Readonly<Record<string, string>> = Object.freeze({
  WIKIEDGE_CLIENT_MAX_CONCURRENCY: '0',
  WIKIEDGE_CLIENT_MISS_RATE: '0',
  WIKIEDGE_CLIENT_STORE_BYTES_PER_SECOND: '0',
});

export interface RunningGateway {
  readonly url: string;
  readonly apiUrl: string;
  readonly adminUrl: string;
  readonly built: Built;
  /** Every log line written, parsed. */
  readonly logs: Record<string, unknown>[];
  /**
   * Resolves once no change's rebound is pending (src/invalidation/signals.ts reboundLater): an
   * answer cached within WIKIEDGE_REBOUND_PURGE_MS of a change to what it reads is fetched once
   * more when the rebound comes, so a test that caches an answer and expects hits from it after a
   * write caches it after this.
   */
  reboundsDone(): Promise<void>;
  close(): Promise<void>;
}

export async function startGateway(upstream: string, env: Record<string, string> = {}, deps: GatewayDeps = {}): Promise<RunningGateway> {
  const config = loadConfig({
    WIKIEDGE_UPSTREAM: upstream,
    WIKIEDGE_HOST: '127.0.0.1',
    WIKIEDGE_PORT: '0',
    WIKIEDGE_ADMIN_PORT: '0',
    WIKIEDGE_LOG_LEVEL: 'info',
    // Deterministic TTLs in tests; jitter is tested in the policy unit tests.
    WIKIEDGE_TTL_JITTER_RATIO: '0',
    ...env,
  });
  const logs: Record<string, unknown>[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const line of chunk.toString('utf8').split('\n')) if (line) logs.push(JSON.parse(line));
      done();
    },
  });
  const built = await build(config, createLogger(config.logLevel, { destination: sink }), deps);
  await built.publicApp.listen({ host: '127.0.0.1', port: 0 });
  await built.adminApp.listen({ host: '127.0.0.1', port: 0 });
  const port = (built.publicApp.server.address() as AddressInfo).port;
  const adminPort = (built.adminApp.server.address() as AddressInfo).port;
  const url = `http://127.0.0.1:${port}`;
  return {
    url,
    apiUrl: `${url}${config.apiPath}`,
    adminUrl: `http://127.0.0.1:${adminPort}`,
    built,
    logs,
    reboundsDone: async () => {
      await until(
        async () => built.gateway.changes.pendingRebounds,
        (n) => n === 0,
      );
    },
    close: () => built.close(),
  };
}
