// A listen address that is none of this machine's (or a host name that does not resolve) stops
// the gateway with one line naming the address's key, not the port's: the port was never the
// cause, and an operator who reads `WIKIEDGE_PORT` looks in the wrong place.
import { describe, expect, it } from 'vitest';
import { closedPort } from '../support/fake-upstream.js';
import { runCli } from '../support/cli.js';
import { built } from '../support/spawned.js';

// TEST-NET-1 (RFC 5737): never an address of this machine.
const ELSEWHERE = '192.0.2.1';

describe.runIf(built)('a listen address that is not this machine`s', () => {
  it.each([
    ['WIKIEDGE_HOST', 'WIKIEDGE_PORT', '1'],
    ['WIKIEDGE_ADMIN_HOST', 'WIKIEDGE_ADMIN_PORT', '1'],
    ['WIKIEDGE_HOST', 'WIKIEDGE_PORT', '2'],
    ['WIKIEDGE_ADMIN_HOST', 'WIKIEDGE_ADMIN_PORT', '2'],
  ])('%s (the listener of %s), WIKIEDGE_WORKERS=%s: one line naming it, exit 1', async (hostKey, portKey, workers) => {
    const env: Record<string, string> = {
      WIKIEDGE_UPSTREAM: 'http://127.0.0.1:9',
      WIKIEDGE_HOST: '127.0.0.1',
      WIKIEDGE_PORT: String(await closedPort()),
      WIKIEDGE_ADMIN_PORT: String(await closedPort()),
      WIKIEDGE_WORKERS: workers,
      WIKIEDGE_LOG_LEVEL: 'warn',
      // A non-loopback admin address needs a token.
      WIKIEDGE_ADMIN_TOKEN: 'a-token-of-at-least-sixteen-characters',
      [hostKey]: ELSEWHERE,
    };
    const run = runCli([], env);
    expect(run.status).toBe(1);
    expect(run.stderr).toBe(`wikiedge: ${hostKey}: cannot listen on ${ELSEWHERE}:${env[portKey]}: the address is not one of this machine\n`);
  });
});
