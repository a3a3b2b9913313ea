// A SIGHUP that comes while a reload runs is not lost, nor does it start a second reload beside
// the first: one more reload follows the first (the file may have changed again meanwhile).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { logged, untilLogged } from '../support/cluster-logs.js';
import { type FakeUpstream, startFakeUpstream } from '../support/fake-upstream.js';
import { built, type SpawnedGateway, spawnGateway } from '../support/spawned.js';

describe.runIf(built)('SIGHUP during a reload', () => {
  let fake: FakeUpstream;
  let gw: SpawnedGateway;

  beforeAll(async () => {
    fake = await startFakeUpstream((_req, res) => res.end('{}'));
    // A drain delay makes every replaced worker take a second to leave: the second SIGHUP surely
    // comes while the first reload runs (log lines reach stdout within 250 ms).
    gw = await spawnGateway(fake.url, { WIKIEDGE_WORKERS: '2', WIKIEDGE_SHUTDOWN_DRAIN_MS: '1000' });
    await untilLogged(gw, () => logged(gw, 'worker listening').length === 2);
  });
  afterAll(async () => {
    if (gw?.child.exitCode === null) gw.child.kill('SIGKILL');
    await fake?.close();
  });

  it('runs one more reload after the one under way', async () => {
    gw.child.kill('SIGHUP');
    await untilLogged(gw, () => logged(gw, /^reload: configuration valid/).length === 1);
    gw.child.kill('SIGHUP');
    await untilLogged(gw, () => logged(gw, 'reload complete').length === 2);
    expect(logged(gw, /^SIGHUP during a reload/)).toHaveLength(1);
    // Two reloads of two workers each, one after the other: never more than one replacement at a time.
    expect(logged(gw, 'worker listening')).toHaveLength(6);
    expect(logged(gw, 'worker exited').map((l) => l['code'])).toEqual([0, 0, 0, 0]);
    const order = gw
      .stdout()
      .split('\n')
      .filter((l) => /"msg":"(worker listening|worker exited)"/.test(l))
      .map((l) => (l.includes('worker listening') ? 'L' : 'X'));
    expect(order.join('')).toBe('LLLXLXLXLX');
  });

  it('exits 0 on SIGTERM', async () => {
    gw.child.kill('SIGTERM');
    expect(await gw.exited).toBe(0);
    expect(gw.stderr()).toBe('');
  });
});
