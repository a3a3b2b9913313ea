// A port already in use (public or admin, one process or a cluster) stops the gateway with one
// line naming the key and the address, exit 1, no stack trace.
import { describe, expect, it } from 'vitest';
import { closedPort } from '../support/fake-upstream.js';
import { heldPort, runCli } from '../support/cli.js';
import { built } from '../support/spawned.js';

describe.runIf(built)('a port already in use', () => {
  it.each([
    ['WIKIEDGE_PORT', '1'],
    ['WIKIEDGE_ADMIN_PORT', '1'],
    ['WIKIEDGE_PORT', '2'],
    ['WIKIEDGE_ADMIN_PORT', '2'],
  ])('%s, WIKIEDGE_WORKERS=%s: one line naming the key and the address, exit 1', async (key, workers) => {
    const held = await heldPort();
    try {
      const env: Record<string, string> = {
        WIKIEDGE_UPSTREAM: 'http://127.0.0.1:9',
        WIKIEDGE_HOST: '127.0.0.1',
        WIKIEDGE_PORT: String(await closedPort()),
        WIKIEDGE_ADMIN_PORT: String(await closedPort()),
        WIKIEDGE_WORKERS: workers,
        WIKIEDGE_LOG_LEVEL: 'warn',
        [key]: String(held.port),
      };
      const run = runCli([], env);
      expect(run.status).toBe(1);
      expect(run.stderr).toBe(`wikiedge: ${key}: cannot listen on 127.0.0.1:${held.port}: the address is already in use (another process listens there)\n`);
    } finally {
      await held.release();
    }
  });
});
