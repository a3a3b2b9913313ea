// With WIKIEDGE_WORKERS=2 the primary probes the wiki once for all its workers:
// `wikiedge_upstream_up` is 1 (not the sum of two probers), every probe the wiki sees is counted
// once, and with the wiki gone /readyz stays 200 (workers listen) while the probe says 0.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeUpstream, startFakeUpstream } from '../support/fake-upstream.js';
import { http } from '../support/http.js';
import { built, type SpawnedGateway, spawnGateway } from '../support/spawned.js';

async function until(check: () => Promise<boolean>, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe.runIf(built)('the upstream probe in cluster mode', () => {
  let wiki: FakeUpstream;
  let gw: SpawnedGateway;
  const probes = () => wiki.requests.filter((r) => r.headers['user-agent'] === 'wikiedge-upstream-probe').length;
  const metrics = async () => (await http(`${gw.adminUrl}/metrics`)).body;
  const value = async (line: RegExp) => Number(line.exec(await metrics())?.[1] ?? NaN);

  beforeAll(async () => {
    wiki = await startFakeUpstream((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'private, must-revalidate, max-age=0' });
      res.end('{"batchcomplete":true}');
    });
    gw = await spawnGateway(wiki.url, { WIKIEDGE_WORKERS: '2', WIKIEDGE_UPSTREAM_PROBE_MS: '200', WIKIEDGE_UPSTREAM_PROBE_TIMEOUT_MS: '5000' });
  });
  afterAll(async () => {
    if (gw?.child.exitCode === null) gw.child.kill('SIGKILL');
    await wiki?.close();
  });

  it('runs once, in the primary', async () => {
    await until(async () => (await value(/^wikiedge_upstream_probes_total\{result="up"\} (\d+)$/m)) >= 3);
    expect(await metrics()).toMatch(/^wikiedge_upstream_up 1$/m);
    // Every probe request the wiki saw is one the primary counted (none from the workers).
    await until(async () => (await value(/^wikiedge_upstream_probes_total\{result="up"\} (\d+)$/m)) === probes());
    const upstreamz = await http(`${gw.adminUrl}/upstreamz`);
    expect(upstreamz.status).toBe(200);
    expect(JSON.parse(upstreamz.body)).toMatchObject({ upstream: 'up', result: 'up', status: 200 });
  });

  it('with the wiki gone, /readyz stays 200 and wikiedge_upstream_up is 0', async () => {
    await wiki.close();
    await until(async () => /^wikiedge_upstream_up 0$/m.test(await metrics()));
    expect((await http(`${gw.adminUrl}/readyz`)).status).toBe(200);
    expect((await http(`${gw.adminUrl}/upstreamz`)).status).toBe(503);
  });

  it('exits 0 on SIGTERM', async () => {
    gw.child.kill('SIGTERM');
    expect(await gw.exited).toBe(0);
    expect(gw.stderr()).toBe('');
  });
});
