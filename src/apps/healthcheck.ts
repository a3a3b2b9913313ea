/**
 * The container's health check (`node dist/healthcheck.js`, the image's HEALTHCHECK): GET
 * `/healthz` on the admin listener the configuration names, exit 0 on a 200 and 1 otherwise (what
 * Docker and podman read). The address comes from the same sources the gateway reads at start
 * (config/load.ts: the environment over the WIKIEDGE_CONFIG file over the defaults), so that an
 * admin port set in the file is the one checked: a check of the environment alone had marked a
 * healthy container unhealthy, and a restart policy on health restarted it for nothing
 * (test/in-process/image-health-check-reads-the-config-file.test.ts).
 *
 * Loaded apart from the gateway (only config/): run every 30 s, it must not load Fastify, ioredis
 * and the rest (~0.3 s of CPU) to send one request.
 */
import { ConfigError } from '../config/field.js';
import { configFromSources, type ConfigSources, readConfigSources } from '../config/load.js';

/** Docker's exit codes for a health check: 0 healthy, 1 unhealthy. */
export const HEALTHY = 0;
export const UNHEALTHY = 1;

/** The URL of `/healthz` on a listener bound to `host`: an unspecified address is reached on loopback. */
export function healthzUrl(host: string, port: number): string {
  const reach = host === '' || host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host;
  return `http://${reach.includes(':') ? `[${reach}]` : reach}:${port}/healthz`;
}

/**
 * The admin listener's address: the configuration's, or, when the configuration no longer
 * validates (a file edited and not yet reloaded: the running gateway keeps the one it
 * validated), each of the two keys as the environment or the file gives it.
 */
export function adminAddress(env: NodeJS.ProcessEnv): { host: string; port: number } {
  let sources: ConfigSources | undefined;
  try {
    sources = readConfigSources(env);
    const { config } = configFromSources(sources, { checkFiles: false });
    return { host: config.adminHost, port: config.adminPort };
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    const raw = (envName: string, fileKey: string): unknown => env[envName] ?? sources?.file[fileKey];
    const port = Number(raw('WIKIEDGE_ADMIN_PORT', 'adminPort') ?? 8081);
    const host = raw('WIKIEDGE_ADMIN_HOST', 'adminHost');
    return { host: typeof host === 'string' ? host : '127.0.0.1', port: Number.isInteger(port) ? port : 8081 };
  }
}

export async function healthcheck(env: NodeJS.ProcessEnv, timeoutMs: number): Promise<number> {
  const { host, port } = adminAddress(env);
  try {
    const res = await fetch(healthzUrl(host, port), { signal: AbortSignal.timeout(timeoutMs) });
    await res.body?.cancel();
    return res.status === 200 ? HEALTHY : UNHEALTHY;
  } catch {
    return UNHEALTHY;
  }
}
