// With WIKIEDGE_ACCESS_LOG_FILE, a SIGHUP reload of the default deployment builds a new gateway
// behind the same listener (cluster/generations.ts); it must write to the same open file, not
// open it a second time: SIGUSR1 afterwards reopens one file, and the requests answered before
// and after the reload are all in it, one line each.
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { logged, untilLogged } from '../support/cluster-logs.js';
import { type FakeUpstream, startFakeUpstream } from '../support/fake-upstream.js';
import { http } from '../support/http.js';
import { built, type SpawnedGateway, spawnGateway } from '../support/spawned.js';
import { scratchDir } from '../support/scratch.js';

describe.runIf(built)('the access-log file across a reload', () => {
  let fake: FakeUpstream;
  let gw: SpawnedGateway;
  let dir: string;

  beforeAll(async () => {
    fake = await startFakeUpstream((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 's-maxage=60, max-age=60, public' });
      res.end('{"batchcomplete":true}');
    });
    dir = scratchDir('wikiedge-log-reload-');
    writeFileSync(path.join(dir, 'wikiedge.yaml'), 'maxUrlBytes: 8192\n');
    gw = await spawnGateway(fake.url, {
      WIKIEDGE_CONFIG: path.join(dir, 'wikiedge.yaml'),
      WIKIEDGE_ACCESS_LOG_FILE: path.join(dir, 'access.log'),
    });
  });
  afterAll(async () => {
    if (gw?.child.exitCode === null) gw.child.kill('SIGKILL');
    await fake?.close();
  });

  it('two reloads open no second handle, and every request is one line in the file', async () => {
    const ask = (i: number) => http(`${gw.url}/w/api.php?action=query&meta=siteinfo&format=json&n=${i}`);
    for (let i = 0; i < 3; i++) await ask(i);
    for (const bytes of ['4096', '2048']) {
      const before = logged(gw, 'reload complete').length;
      writeFileSync(path.join(dir, 'wikiedge.yaml'), `maxUrlBytes: ${bytes}\n`);
      gw.child.kill('SIGHUP');
      await untilLogged(gw, () => logged(gw, 'reload complete').length === before + 1);
    }
    for (let i = 3; i < 6; i++) await ask(i);
    gw.child.kill('SIGUSR1');
    await untilLogged(gw, () => logged(gw, 'access log reopened').length === 1);
    expect(logged(gw, 'access log reopened')[0]).toMatchObject({ files: 1 });
    await vi.waitFor(
      () => {
        const lines = readFileSync(path.join(dir, 'access.log'), 'utf8').trim().split('\n');
        for (let i = 0; i < 6; i++) expect(lines.filter((l) => l.includes(`n=${i}`))).toHaveLength(1);
      },
      { timeout: 10_000 },
    );
  });
});
