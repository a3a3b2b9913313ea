/**
 * WIKIEDGE_WORKERS=1, the default: one process, the public and admin listeners, reloading on
 * SIGHUP without refusing a connection or failing a request (reload.ts; generations.ts says how).
 *
 * Why in the process rather than a primary with one worker (what WIKIEDGE_WORKERS=2 does): a new
 * worker costs a second Node process (its heap, a second copy of the local tier while it takes
 * over), seconds to start, and every client connection, since a retired worker must close its
 * own. Here the listening socket and the client connections belong to the process; only the
 * gateway behind them changes, its local tier handed over in memory, its counters kept.
 *
 * The admin listener is the process's too, answered from whichever gateway is current: /metrics
 * sums the live gateways and the retired ones' counters, /purge reaches the current gateway and
 * those still draining, and the wiki is probed once for all of them (wiki-probe.ts).
 */
import type { Logger } from 'pino';
import { Registry } from 'prom-client';
import { type AdminBackend, buildAdmin } from '../apps/admin.js';
import { localInspection } from '../apps/admin-inspect.js';
import { listenAs } from '../apps/listen.js';
import { type Config, type LoadedConfig, readConfigSources } from '../config/config.js';
import { UpstreamProbeMetrics } from '../upstream/probe.js';
import { type Generation, Generations } from './generations.js';
import { liveAdminOptions } from './admin-options.js';
import { ClusterMetrics, GENERATION_AGGREGATORS } from './metrics-aggregation.js';
import { gatewayNotBuilt, reloadOnSighup } from './reload.js';
import { newProbe } from './wiki-probe.js';

/** The running single process: what SIGTERM closes (main.ts exitOnSignal), even while it starts. */
export interface Single {
  /** Settles once it listens on both addresses (rejects if it cannot start). */
  readonly up: Promise<void>;
  /** Shut down: at once if it is up, else as soon as start-up is over (/readyz is 503 meanwhile). */
  close(): Promise<void>;
}

/**
 * Build the first gateway, listen on both addresses, reload on SIGHUP. `loaded` is validated
 * (main.ts). The SIGHUP handler is installed before anything is awaited (reload.ts
 * reloadOnSighup): start-up can take seconds (apps/app.ts waits up to 2 s for Redis), and a
 * SIGHUP meanwhile must reload once the gateway is up, not end the process.
 */
export function runSingle(loaded: LoadedConfig, log: Logger): Single {
  const first = loaded;
  let current = loaded;
  const config = (): Config => current.config;
  const state = { shuttingDown: false };

  const own = new Registry();
  const probeMetrics = new UpstreamProbeMetrics(own);
  let probe = newProbe(config(), probeMetrics, log);
  const metrics = new ClusterMetrics<Generation>((g) => g.built.gateway.registry.getMetricsAsJSON(), log, own, GENERATION_AGGREGATORS);
  // Assigned by start() before `sighup.started()`: no reload reads them earlier.
  let gens!: Generations;
  let next: LoadedConfig | undefined;
  const sighup = reloadOnSighup(log, {
    read: () => readConfigSources(process.env),
    current: () => current,
    apply: (loaded) => {
      next = loaded;
    },
    replacing: 'building the new gateway behind the same listener',
    replace: async (changed) => {
      const loaded = next!;
      const nextConfig = keepDrawnSecret(first, loaded);
      try {
        const { handedOver, ms } = await gens.replace(nextConfig);
        current = { ...loaded, config: nextConfig };
        log.level = nextConfig.logLevel;
        // The new probe (its target or timing may have changed) also checks the new module names.
        const old = probe;
        void old.stop().then(() => old.upstream.close());
        probe = newProbe(nextConfig, probeMetrics, log);
        probe.start();
        return { level: 'info', fields: { changed, handedOver, ms }, msg: 'reload complete' };
      } catch (err) {
        return gatewayNotBuilt(err, changed);
      }
    },
    get shuttingDown() {
      return state.shuttingDown;
    },
  });

  const start = async (): Promise<ReturnType<typeof buildAdmin>> => {
    gens = await Generations.start(config(), log, metrics, own);
    const backend: AdminBackend = {
      get shuttingDown() {
        return state.shuttingDown;
      },
      readiness: () => (gens.front.listening ? { ready: true } : { ready: false, reason: 'not-listening' }),
      upstream: () => ({ state: probe.state, last: probe.last }),
      metrics: () => metrics.exposition(gens.live()),
      purge: (message) => gens.purge(message),
      // Asked per request, so /cache, /config and /trace always see the gateway current now.
      get inspection() {
        const { gateway, publicApp } = gens.gateway;
        return localInspection(gateway, publicApp);
      },
    };
    const admin = buildAdmin(log, backend, liveAdminOptions(config));
    await admin.ready();
    await listenAs(gens.front, { key: 'WIKIEDGE_PORT', hostKey: 'WIKIEDGE_HOST', host: config().host, port: config().port });
    await listenAs(admin, { key: 'WIKIEDGE_ADMIN_PORT', hostKey: 'WIKIEDGE_ADMIN_HOST', host: config().adminHost, port: config().adminPort });
    probe.start();
    gens.gateway.learnNamespaces();
    log.info({ public: gens.front.address(), admin: admin.server.address() }, 'wikiedge listening');
    // A SIGHUP that came while starting reloads now (unless a SIGTERM came too).
    sighup.started();
    return admin;
  };
  const starting = start();
  return {
    up: starting.then(() => undefined),
    async close() {
      state.shuttingDown = true;
      const admin = await starting;
      await gens.close(config());
      await admin.close();
      await probe.stop();
      await probe.upstream.close().catch(() => undefined);
    },
  };
}

/**
 * Without a configured WIKIEDGE_IDENTITY_SECRET each load draws one: a reload keeps the one drawn
 * at start, or every session's entries (here, handed over, and in Redis) would be orphaned.
 */
function keepDrawnSecret(first: LoadedConfig, loaded: LoadedConfig): Config {
  if (loaded.origins.identitySecret !== 'default' || first.origins.identitySecret !== 'default') return loaded.config;
  return Object.freeze({ ...loaded.config, identitySecret: first.config.identitySecret });
}
