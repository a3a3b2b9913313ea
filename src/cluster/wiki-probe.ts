/**
 * The wiki's health, probed once per machine by the process that owns the admin listener (a
 * cluster primary, or a reloading single process, cluster/single.ts), with its own client, so
 * that `wikiedge_upstream_up` and /upstreamz outlive the gateways a reload replaces. Its first
 * answer from the wiki also checks WIKIEDGE_MODULES' names (upstream/module-names.ts).
 */
import type { Logger } from 'pino';
import type { Config } from '../config/config.js';
import { checkModuleNamesOnceUp } from '../upstream/module-names.js';
import { Upstream } from '../upstream/upstream.js';
import { UpstreamProbe, type UpstreamProbeMetrics } from '../upstream/probe.js';

/** A probe of the wiki with a client of its own (one connection is enough). */
export function newProbe(config: Config, metrics: UpstreamProbeMetrics, log: Logger): UpstreamProbe & { readonly upstream: Upstream } {
  const upstream = new Upstream({
    origin: config.upstream,
    connectTimeoutMs: config.upstreamConnectTimeoutMs,
    responseTimeoutMs: config.upstreamResponseTimeoutMs,
    connections: 1,
  });
  const probe = new UpstreamProbe({
    upstream,
    apiPath: config.apiPath,
    intervalMs: config.upstreamProbeMs,
    timeoutMs: config.upstreamProbeTimeoutMs,
    metrics,
    log: log.child({ component: 'upstream-probe' }),
    onChange: checkModuleNamesOnceUp({
      upstream,
      apiPath: config.apiPath,
      names: Object.keys(config.modules),
      timeoutMs: config.upstreamResponseTimeoutMs,
      log,
    }),
  });
  return Object.assign(probe, { upstream });
}
