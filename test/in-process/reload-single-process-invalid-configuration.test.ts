// SIGHUP to a single process (WIKIEDGE_WORKERS=1) does not kill it (Node's default): it logs one
// warning saying that nothing changed and how to reload (a restart, or workers), with whether the
// configuration as it now stands would start, and serves on.
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { logged, untilLogged } from '../support/cluster-logs.js';
import { type FakeUpstream, startFakeUpstream } from '../support/fake-upstream.js';
import { http } from '../support/http.js';
import { built, type SpawnedGateway, spawnGateway } from '../support/spawned.js';
import { scratchDir } from '../support/scratch.js';

describe.runIf(built)('SIGHUP to a single process', () => {
  let fake: FakeUpstream;
  let gw: SpawnedGateway;
  let file: string;
  const warnings = () => logged(gw, /^SIGHUP: a single process/);

  beforeAll(async () => {
    fake = await startFakeUpstream((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 's-maxage=60, max-age=60, public' });
      res.end('{"batchcomplete":true}');
    });
    file = path.join(scratchDir('wikiedge-hup-'), 'wikiedge.yaml');
    writeFileSync(file, 'maxUrlBytes: 8192\n');
    gw = await spawnGateway(fake.url, { WIKIEDGE_CONFIG: file });
  });
  afterAll(async () => {
    if (gw?.child.exitCode === null) gw.child.kill('SIGKILL');
    await fake?.close();
  });

  it('warns, changes nothing, and serves on', async () => {
    const q = `${gw.url}/w/api.php?action=query&meta=siteinfo&format=json`;
    expect((await http(q)).headers['x-cache']).toBe('miss');
    writeFileSync(file, 'maxUrlBytes: 4096\n');
    gw.child.kill('SIGHUP');
    await untilLogged(gw, () => warnings().length === 1);
    expect(warnings()[0]).toMatchObject({ level: 40, signal: 'SIGHUP', configuration: 'valid' });
    expect(String(warnings()[0]!['msg'])).toContain('nothing changed');
    expect(String(warnings()[0]!['msg'])).toContain('WIKIEDGE_WORKERS=2');
    // Still the same process, with its cache and its old configuration.
    expect(gw.child.exitCode).toBeNull();
    expect((await http(q)).headers['x-cache']).toBe('hit');
    expect((await http(`${q}&pad=${'x'.repeat(5_000)}`)).status).toBe(200);
  });

  it('says which key would stop a restart', async () => {
    writeFileSync(file, 'maxUrlBytes: 10\n');
    gw.child.kill('SIGHUP');
    await untilLogged(gw, () => warnings().length === 2);
    expect(warnings()[1]).toMatchObject({ configuration: 'invalid', key: 'WIKIEDGE_MAX_URL_BYTES' });
    expect(gw.child.exitCode).toBeNull();
  });

  it('exits 0 on SIGTERM', async () => {
    gw.child.kill('SIGTERM');
    expect(await gw.exited).toBe(0);
    expect(gw.stderr()).toBe('');
  });
});
