// SIGHUP applies what changed in the WIKIEDGE_CONFIG file and in the <KEY>_FILE secrets: the new
// workers run it (a longer URL limit), the primary too (the admin token), and a worker restarted
// later runs the reloaded configuration, not whatever the file says by then.
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { logged, untilLogged } from '../support/cluster-logs.js';
import { type FakeUpstream, startFakeUpstream } from '../support/fake-upstream.js';
import { http } from '../support/http.js';
import { built, type SpawnedGateway, spawnGateway } from '../support/spawned.js';
import { scratchDir } from '../support/scratch.js';

const TOKEN_BEFORE = 'admin-token-before-0123456789';
const TOKEN_AFTER = 'admin-token-after-0123456789';

describe.runIf(built)('SIGHUP applies a new configuration', () => {
  let fake: FakeUpstream;
  let gw: SpawnedGateway;
  let file: string;
  let tokenFile: string;
  /** A 5,000-byte target, on a connection of its own (either worker may take it). */
  const longUrl = () => http(`${gw.url}/w/api.php?action=query&meta=siteinfo&format=json&pad=${'x'.repeat(5_000)}`, { headers: { connection: 'close' } });
  const purgeWith = (token: string) =>
    http(`${gw.adminUrl}/purge?all=1`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' } });

  beforeAll(async () => {
    fake = await startFakeUpstream((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'private, must-revalidate, max-age=0' });
      res.end('{"batchcomplete":true}');
    });
    const dir = scratchDir('wikiedge-reload-');
    file = path.join(dir, 'wikiedge.yaml');
    tokenFile = path.join(dir, 'admin-token');
    writeFileSync(file, 'maxUrlBytes: 8192\n');
    writeFileSync(tokenFile, `${TOKEN_BEFORE}\n`);
    gw = await spawnGateway(fake.url, { WIKIEDGE_WORKERS: '2', WIKIEDGE_CONFIG: file, WIKIEDGE_ADMIN_TOKEN_FILE: tokenFile });
    await untilLogged(gw, () => logged(gw, 'worker listening').length === 2);
  });
  afterAll(async () => {
    if (gw?.child.exitCode === null) gw.child.kill('SIGKILL');
    await fake?.close();
  });

  it('before: the old limit and token', async () => {
    for (let i = 0; i < 4; i++) expect((await longUrl()).status).toBe(200);
    expect((await purgeWith(TOKEN_BEFORE)).status).toBe(200);
  });

  it('after SIGHUP: the file’s new value in every worker, the secret file’s new token in the primary', async () => {
    writeFileSync(file, 'maxUrlBytes: 4096\n');
    writeFileSync(tokenFile, `${TOKEN_AFTER}\n`);
    gw.child.kill('SIGHUP');
    await untilLogged(gw, () => logged(gw, 'reload complete').length === 1);
    expect(logged(gw, 'reload complete')[0]).toMatchObject({ replaced: 2, changed: ['WIKIEDGE_ADMIN_TOKEN', 'WIKIEDGE_MAX_URL_BYTES'] });
    // The token itself is never logged.
    expect(gw.stdout()).not.toContain(TOKEN_AFTER);
    const workers = new Set<string>();
    for (let i = 0; i < 40 && workers.size < 2; i++) {
      const res = await longUrl();
      expect(res.status).toBe(414);
      workers.add(String(res.headers['x-request-id']).split('-')[0]!);
    }
    expect(workers.size).toBe(2);
    expect((await purgeWith(TOKEN_BEFORE)).status).toBe(401);
    expect((await purgeWith(TOKEN_AFTER)).status).toBe(200);
  });

  it('a worker restarted later runs the reloaded configuration, even with the file broken since', async () => {
    writeFileSync(file, 'maxUrlBytes: -1\n');
    const [victim] = logged(gw, 'worker listening').slice(-1);
    process.kill(victim!['pid'] as number, 'SIGKILL');
    await untilLogged(gw, () => logged(gw, 'worker listening').length === 5);
    expect(logged(gw, 'worker died: restarting it')).toHaveLength(1);
    for (let i = 0; i < 6; i++) expect((await longUrl()).status).toBe(414);
  });

  it('exits 0 on SIGTERM', async () => {
    gw.child.kill('SIGTERM');
    expect(await gw.exited).toBe(0);
    expect(gw.stderr()).toBe('');
  });
});
