// A SIGHUP that reaches the single process while it starts (here for 2 s, waiting for a Redis
// that does not answer: apps/app.ts) neither ends it (Node's default action for SIGHUP:
// https://nodejs.org/api/process.html#signal-events) nor is lost: the process comes up, then
// reloads the file as it was when the SIGHUP came (a URL limit lowered from 8192 to 4096 bytes).
// A cluster primary alike: it reloads once its workers all listen, rather than replacing workers
// that are still starting.
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { logged, logLines, untilLogged } from '../support/cluster-logs.js';
import { closedPort, type FakeUpstream, startFakeUpstream } from '../support/fake-upstream.js';
import { http } from '../support/http.js';
import { scratchDir } from '../support/scratch.js';
import { built, type SpawnedGateway, spawnGateway } from '../support/spawned.js';

describe.runIf(built).each(['1', '2'])('a SIGHUP during start-up, WIKIEDGE_WORKERS=%s', (workers) => {
  let fake: FakeUpstream;
  let gw: SpawnedGateway | undefined;

  beforeAll(async () => {
    fake = await startFakeUpstream((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'private, must-revalidate, max-age=0' });
      res.end('{"batchcomplete":true}');
    });
  });
  afterAll(async () => {
    if (gw?.child.exitCode === null) gw.child.kill('SIGKILL');
    await fake?.close();
  });

  it('is remembered, and reloads once the gateway is up', async () => {
    const file = path.join(scratchDir('wikiedge-early-sighup-'), 'wikiedge.yaml');
    writeFileSync(file, 'maxUrlBytes: 8192\n');
    const redis = `redis://127.0.0.1:${await closedPort()}`;
    gw = await spawnGateway(
      fake.url,
      { WIKIEDGE_CONFIG: file, WIKIEDGE_REDIS_URL: redis, WIKIEDGE_IDENTITY_SECRET: 'early-sighup-test-identity-secret', WIKIEDGE_WORKERS: workers },
      {
        whileStarting: async (starting) => {
          // Logged before start-up begins (main.ts); the configuration has been read by then.
          await untilLogged(starting, () => logged(starting, 'effective configuration').length === 1);
          writeFileSync(file, 'maxUrlBytes: 4096\n');
          starting.child.kill('SIGHUP');
        },
      },
    );
    const up = gw;
    await untilLogged(up, () => logged(up, /^reload (complete|failed|refused)/).length > 0);
    const msgs = logLines(up).map((l) => l['msg']);
    // The SIGHUP came while start-up waited for Redis, and its reload ran after the gateway listened.
    expect(msgs.indexOf('SIGHUP during start-up: the reload follows once start-up is over')).toBeGreaterThan(-1);
    expect(msgs.indexOf('SIGHUP during start-up: the reload follows once start-up is over')).toBeLessThan(msgs.indexOf('wikiedge listening'));
    expect(msgs.indexOf('wikiedge listening')).toBeLessThan(msgs.indexOf('reload complete'));
    expect(logged(up, 'reload complete')[0]).toMatchObject({ changed: ['WIKIEDGE_MAX_URL_BYTES'] });

    expect((await http(`${up.adminUrl}/healthz`)).status).toBe(200);
    const longUrl = `${up.url}/w/api.php?action=query&meta=siteinfo&format=json&pad=${'x'.repeat(5_000)}`;
    // A connection each, so that with two workers both answer some.
    for (let n = 0; n < 6; n++) expect((await http(longUrl, { headers: { connection: 'close' } })).status).toBe(414);

    up.child.kill('SIGTERM');
    expect(await up.exited).toBe(0);
  });
});
