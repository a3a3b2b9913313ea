/**
 * The container's health check (`node /app/dist/healthcheck.js`, the image's HEALTHCHECK): GET
 * `/healthz` on the admin listener the configuration names, exit 0 on a 200 and 1 otherwise (what
 * Docker and podman read). The address is read as the gateway reads it (config/: the environment
 * over the WIKIEDGE_CONFIG file over the defaults, each value through the key's own parser), so
 * that an admin port set in the file is the one checked: a check of the environment alone had
 * marked a healthy container unhealthy, and a restart policy on health restarted it for nothing
 * (test/in-process/image-health-check-reads-the-config-file.test.ts).
 *
 * Only `adminHost` and `adminPort` are read, and leniently: a file edited into a configuration
 * that no longer validates (a syntax error, an unknown key, a bad value elsewhere, a secret file
 * gone) is refused by a reload and the running gateway keeps the one it validated, still on the
 * address the file names. Loaded apart from the gateway (only config/): run every 30 s, it must
 * not load Fastify, ioredis and the rest (~0.3 s of CPU) to send one request.
 */
import { request } from 'node:http';
import { isIPv6 } from 'node:net';
import { type Field, isUnset } from '../config/field.js';
import { FIELDS } from '../config/fields.js';
import { readConfigDocument } from '../config/load.js';

/** Docker's exit codes for a health check: 0 healthy, 1 unhealthy. */
export const HEALTHY = 0;
export const UNHEALTHY = 1;

/**
 * Where to reach a listener bound to `host`: an unspecified address (0.0.0.0, or an IPv6 one of
 * zeros however written: `::`, `::0`, `0:0:0:0:0:0:0:0`) on loopback; any other as it is, an
 * IPv6 scope (`fe80::1%eth0`) included (node:net connects to it; a URL could not hold it).
 */
export function reachableHost(host: string): string {
  if (host === '0.0.0.0') return '127.0.0.1';
  if (isIPv6(host) && !host.includes('%') && /^[:0]+$/.test(host)) return '127.0.0.1';
  return host;
}

/** The admin listener's address, as the gateway would read it; each key apart from the others. */
export function adminAddress(env: NodeJS.ProcessEnv): { readonly host: string; readonly port: number } {
  let file: Record<string, unknown> = {};
  const path = env['WIKIEDGE_CONFIG'];
  if (path) {
    try {
      file = readConfigDocument(path);
    } catch {
      // Unreadable or not a mapping: the environment and the defaults alone.
    }
  }
  return { host: valueOf(FIELDS.adminHost, 'adminHost', env, file), port: valueOf(FIELDS.adminPort, 'adminPort', env, file) };
}

/** The environment's value, else the file's, else the default; a value its parser refuses is passed over. */
function valueOf<T>(field: Field<T>, key: string, env: NodeJS.ProcessEnv, file: Record<string, unknown>): T {
  for (const raw of [env[field.env], file[key]]) {
    if (isUnset(raw)) continue;
    try {
      return field.parse(raw, field.env);
    } catch {
      // As if unset: the gateway could not have started with it.
    }
  }
  return field.default as T;
}

/** 0 when GET /healthz answers 200 within `timeoutMs`, else 1. Port 0 (any free port) cannot be found: 1. */
export function healthcheck(env: NodeJS.ProcessEnv, timeoutMs: number): Promise<number> {
  const { host, port } = adminAddress(env);
  if (port === 0) return Promise.resolve(UNHEALTHY);
  return new Promise((resolve) => {
    const req = request({ host: reachableHost(host), port, path: '/healthz', method: 'GET', timeout: timeoutMs }, (res) => {
      res.resume();
      resolve(res.statusCode === 200 ? HEALTHY : UNHEALTHY);
    });
    req.on('timeout', () => req.destroy(new Error('timed out')));
    req.on('error', () => resolve(UNHEALTHY));
    req.end();
  });
}
