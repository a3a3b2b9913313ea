/**
 * The first module main.ts imports, evaluated before any other (ECMAScript modules evaluate their
 * imports in order: https://tc39.es/ecma262/#sec-innermoduleevaluation), so before the ~0.5 s it
 * takes to load Fastify, ioredis, prom-client and the rest. From here on SIGHUP, SIGTERM and SIGINT
 * no longer end the process by Node's default action
 * (https://nodejs.org/api/process.html#signal-events), which systemd takes for a clean exit
 * (deploy/systemd/wikiedge.service: Type=exec accepts `systemctl reload` as soon as it has started
 * the process). A signal that comes is remembered until its real handler is installed
 * (cluster/reload.ts, cluster/shutdown.ts, main.ts exitOnSignal), which then acts on it.
 *
 * Node builtins only: nothing may be loaded before these listeners are.
 */
export type EarlySignal = 'SIGHUP' | 'SIGTERM' | 'SIGINT';

const came = new Set<EarlySignal>();
const remember = (signal: EarlySignal): void => void came.add(signal);
for (const signal of ['SIGHUP', 'SIGTERM', 'SIGINT'] as const) process.on(signal, remember);

/** Its real handler is installed: stop remembering `signal`, and say whether it came meanwhile. */
export function takeEarlySignal(signal: EarlySignal): boolean {
  process.off(signal, remember);
  return came.delete(signal);
}
