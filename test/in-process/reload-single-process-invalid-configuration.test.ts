// SIGHUP to the default deployment (WIKIEDGE_WORKERS=1) with a configuration it cannot apply (an
// invalid value, a key only a restart changes): one error line naming the key, and the old
// configuration keeps serving, with its cache; the process never dies of the signal (Node's
// default for SIGHUP). A valid configuration afterwards applies.
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { logged, untilLogged } from '../support/cluster-logs.js';
import { type FakeUpstream, startFakeUpstream } from '../support/fake-upstream.js';
import { http } from '../support/http.js';
import { built, type SpawnedGateway, spawnGateway } from '../support/spawned.js';
import { scratchDir } from '../support/scratch.js';

describe.runIf(built)('SIGHUP to the default deployment with a configuration it cannot apply', () => {
  let fake: FakeUpstream;
  let gw: SpawnedGateway;
  let file: string;
  const refusals = () => logged(gw, /^reload refused/);
  const q = () => `${gw.url}/w/api.php?action=query&meta=siteinfo&format=json`;
  const long = () => http(`${q()}&pad=${'x'.repeat(5_000)}`);

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

  it.each([
    ['an invalid value', 'maxUrlBytes: 10\n', 'WIKIEDGE_MAX_URL_BYTES', 'WIKIEDGE_MAX_URL_BYTES'],
    ['a file that is not YAML', 'maxUrlBytes: [1,\n', 'WIKIEDGE_CONFIG', 'is not valid YAML'],
    // Not one the environment sets (spawnGateway sets the ports): the environment wins over the file.
    ['a listener’s address', 'maxUrlBytes: 4096\nadminHost: 127.0.0.2\n', 'WIKIEDGE_ADMIN_HOST', 'WIKIEDGE_ADMIN_HOST cannot change without a restart'],
    ['the number of workers', 'maxUrlBytes: 4096\nworkers: 2\n', 'WIKIEDGE_WORKERS', 'WIKIEDGE_WORKERS cannot change without a restart'],
  ])('%s: one line naming the key; the old configuration and its cache serve on', async (_what, content, key, words) => {
    expect((await http(q())).headers['x-cache']).toMatch(/^(miss|hit)$/);
    writeFileSync(file, content);
    const before = refusals().length;
    gw.child.kill('SIGHUP');
    await untilLogged(gw, () => refusals().length === before + 1);
    const line = refusals().at(-1)!;
    expect(line).toMatchObject({ level: 50, key });
    expect(String(line['msg'])).toContain('the old configuration keeps serving');
    expect(String(line['msg'])).toContain(words);
    expect(logged(gw, 'reload complete')).toEqual([]);
    expect(gw.child.exitCode).toBeNull();
    expect((await http(q())).headers['x-cache']).toBe('hit');
    expect((await long()).status).toBe(200);
  });

  it('a valid configuration afterwards applies', async () => {
    writeFileSync(file, 'maxUrlBytes: 4096\n');
    gw.child.kill('SIGHUP');
    await untilLogged(gw, () => logged(gw, 'reload complete').length === 1);
    expect(logged(gw, 'reload complete')[0]).toMatchObject({ changed: ['WIKIEDGE_MAX_URL_BYTES'] });
    expect((await http(q())).headers['x-cache']).toBe('hit');
    expect((await long()).status).toBe(414);
  });

  it('exits 0 on SIGTERM', async () => {
    gw.child.kill('SIGTERM');
    expect(await gw.exited).toBe(0);
    expect(gw.stderr()).toBe('');
  });
});
