// A WIKIEDGE_ACCESS_LOG_FILE that cannot be opened (a directory that is not there, a read-only
// container) is a bad value like any other (src/config/load.ts checkAccessLogFile): --check names
// the key and exits 2 (systemd's ExecReload then stops the reload), the start is refused naming
// it, and a SIGHUP to it is refused before anything changes: the single process keeps serving
// with the old configuration. Without the check, --check said OK and the reload ended the process
// (sonic-boom's unhandled 'error', observe/logging.ts).
import { execFileSync } from 'node:child_process';
import { existsSync, symlinkSync, writeFileSync } from 'node:fs';
import { configFromSources } from '../../src/config/load.js';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { offlineGatewayEnv, runCli } from '../support/cli.js';
import { logged, untilLogged } from '../support/cluster-logs.js';
import { type FakeUpstream, startFakeUpstream } from '../support/fake-upstream.js';
import { http } from '../support/http.js';
import { built, type SpawnedGateway, spawnGateway } from '../support/spawned.js';
import { scratchDir } from '../support/scratch.js';

describe.runIf(built)('an access-log file that cannot be opened', () => {
  const env = offlineGatewayEnv();
  const dir = scratchDir('wikiedge-bad-log-');
  const missingDir = path.join(dir, 'not-there', 'access.log');
  const underAFile = path.join(dir, 'a-file', 'access.log');
  writeFileSync(path.join(dir, 'a-file'), '');

  it.each([
    ['in a directory that is not there', missingDir, /cannot create .*not-there\/access\.log: ENOENT/],
    ['under a file', underAFile, /cannot append to .*a-file\/access\.log: ENOTDIR/],
  ])('%s: --check names WIKIEDGE_ACCESS_LOG_FILE and exits 2, creating nothing', (_what, file, rule) => {
    const run = runCli(['--check'], { ...env, WIKIEDGE_ACCESS_LOG_FILE: file });
    expect(run.status).toBe(2);
    expect(run.stdout).toBe('');
    expect(run.stderr).toMatch(/^wikiedge: invalid configuration: WIKIEDGE_ACCESS_LOG_FILE: /);
    expect(run.stderr).toMatch(rule);
  });

  it('--check takes a file that can be created, and creates nothing', () => {
    const file = path.join(dir, 'new.log');
    expect(runCli(['--check'], { ...env, WIKIEDGE_ACCESS_LOG_FILE: file })).toMatchObject({ status: 0, stdout: 'wikiedge: configuration OK\n' });
    expect(existsSync(file)).toBe(false);
  });

  it('a link to a file in a directory that is not there: refused, as the path it names would be', () => {
    const link = path.join(dir, 'dangling.log');
    symlinkSync(path.join(dir, 'nowhere', 'access.log'), link);
    const run = runCli(['--check'], { ...env, WIKIEDGE_ACCESS_LOG_FILE: link });
    expect(run.status).toBe(2);
    expect(run.stderr).toMatch(/cannot create .*dangling\.log: ENOENT/);
  });

  it('a FIFO is taken as it is, never opened by the check (its reader would get an end of file)', () => {
    const fifo = path.join(dir, 'access.fifo');
    execFileSync('mkfifo', [fifo]);
    expect(runCli(['--check'], { ...env, WIKIEDGE_ACCESS_LOG_FILE: fifo })).toMatchObject({ status: 0 });
  });

  it('a cluster worker does not look at it (its primary did): a file that fails later never keeps a worker from restarting', () => {
    const sources = { env: { WIKIEDGE_UPSTREAM: 'http://wiki.invalid', WIKIEDGE_ACCESS_LOG_FILE: missingDir }, file: {}, secretFiles: {} };
    expect(() => configFromSources(sources)).toThrow(/WIKIEDGE_ACCESS_LOG_FILE/);
    expect(configFromSources(sources, { checkFiles: false }).config.accessLogFile).toBe(missingDir);
  });

  it('the start is refused naming the key (exit 2)', () => {
    const run = runCli([], { ...env, WIKIEDGE_ACCESS_LOG_FILE: missingDir });
    expect(run.status).toBe(2);
    expect(run.stderr).toMatch(/^wikiedge: invalid configuration: WIKIEDGE_ACCESS_LOG_FILE: cannot create /);
  });

  describe('a reload to it (the single process)', () => {
    let fake: FakeUpstream;
    let gw: SpawnedGateway;
    const config = path.join(dir, 'wikiedge.yaml');

    beforeAll(async () => {
      fake = await startFakeUpstream((_req, res) => {
        res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 's-maxage=600, max-age=600, public' });
        res.end('{"batchcomplete":true}');
      });
      writeFileSync(config, 'maxUrlBytes: 8192\n');
      gw = await spawnGateway(fake.url, { WIKIEDGE_CONFIG: config });
    });
    afterAll(async () => {
      if (gw?.child.exitCode === null) gw.child.kill('SIGKILL');
      await fake?.close();
    });

    it('is refused naming the key; the process lives on and answers', async () => {
      const ask = () => http(`${gw.url}/w/api.php?action=query&meta=siteinfo&format=json`);
      expect((await ask()).status).toBe(200);
      writeFileSync(config, `maxUrlBytes: 4096\naccessLogFile: ${missingDir}\n`);
      gw.child.kill('SIGHUP');
      await untilLogged(gw, () => logged(gw, /^reload refused/).length === 1);
      const line = logged(gw, /^reload refused/)[0]!;
      expect(line['key']).toBe('WIKIEDGE_ACCESS_LOG_FILE');
      expect(String(line['msg'])).toContain('the old configuration keeps serving');
      expect(logged(gw, /^reload: configuration valid/)).toHaveLength(0);
      // Given time to die, as it did: sonic-boom's open fails within milliseconds.
      await new Promise((r) => setTimeout(r, 500));
      expect(gw.child.exitCode).toBeNull();
      expect((await ask()).status).toBe(200);
      expect(gw.stderr()).not.toContain("Unhandled 'error' event");
    });
  });
});
