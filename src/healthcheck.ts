/**
 * `node /app/dist/healthcheck.js`: the image's HEALTHCHECK (apps/healthcheck.ts). Exit 0 when the
 * admin listener's `/healthz` answers 200, 1 otherwise, within 4 s of the process's start whatever
 * holds it (a slow name lookup of a host-name `adminHost`): Docker's timeout for it is 5 s.
 */
import { performance } from 'node:perf_hooks';
import { healthcheck, UNHEALTHY } from './apps/healthcheck.js';

const DEADLINE_MS = 4_000;
setTimeout(() => process.exit(UNHEALTHY), Math.max(0, DEADLINE_MS - performance.now())).unref();
process.exit(await healthcheck(process.env, Math.max(100, DEADLINE_MS - performance.now())));
