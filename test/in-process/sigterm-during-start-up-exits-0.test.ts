// SIGTERM (or SIGINT) while the single process starts (here for 2 s, waiting for a Redis that
// does not answer: apps/app.ts) is a shutdown like any other: once start-up is over the process
// closes and exits 0, rather than being ended by the signal (Node's default action:
// https://nodejs.org/api/process.html#signal-events), which systemd's Restart=on-failure reads
// as a failure.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { logged, untilLogged } from '../support/cluster-logs.js';
import { closedPort, type FakeUpstream, startFakeUpstream } from '../support/fake-upstream.js';
import { built, type SpawnedGateway, spawnGateway } from '../support/spawned.js';

describe.runIf(built)('SIGTERM or SIGINT during start-up', () => {
  let fake: FakeUpstream;
  const started: SpawnedGateway[] = [];

  beforeAll(async () => {
    fake = await startFakeUpstream((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"batchcomplete":true}');
    });
  });
  afterAll(async () => {
    for (const gw of started) if (gw.child.exitCode === null) gw.child.kill('SIGKILL');
    await fake?.close();
  });

  it.each(['SIGTERM', 'SIGINT'] as const)('%s: shuts down once started, exit 0', async (signal) => {
    const redis = `redis://127.0.0.1:${await closedPort()}`;
    const gw = await spawnGateway(
      fake.url,
      { WIKIEDGE_REDIS_URL: redis, WIKIEDGE_IDENTITY_SECRET: 'early-sigterm-test-identity-secret' },
      {
        untilUp: false,
        whileStarting: async (starting) => {
          // Logged before start-up begins (main.ts).
          await untilLogged(starting, () => logged(starting, 'effective configuration').length === 1);
          starting.child.kill(signal);
        },
      },
    );
    started.push(gw);
    expect(await gw.exited).toBe(0);
    expect(gw.stderr()).toBe('');
    expect(logged(gw, 'shutdown complete')).toHaveLength(1);
  });
});
