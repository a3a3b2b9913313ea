/**
 * `node dist/healthcheck.js`: the image's HEALTHCHECK (apps/healthcheck.ts). Exit 0 when the admin
 * listener's `/healthz` answers 200 within 4 s (Docker's timeout for it is 5 s), 1 otherwise.
 */
import { healthcheck } from './apps/healthcheck.js';

process.exitCode = await healthcheck(process.env, 4_000);
