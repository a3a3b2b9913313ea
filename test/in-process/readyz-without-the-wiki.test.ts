// /readyz says whether this gateway can serve (listening, not shutting down), never whether the
// wiki answers: with the wiki down it stays 200 while stale answers are served within the
// stale-if-error window, the background probe says `wikiedge_upstream_up 0` and /upstreamz 503,
// and neither probe waits on the wiki (a wiki that never answers does not slow them). From the
// start of a shutdown /readyz is 503.
import { describe, expect, it } from 'vitest';
import type { ServerResponse } from 'node:http';
import { type FakeUpstream, startFakeUpstream } from '../support/fake-upstream.js';
import { type RunningGateway, startGateway } from '../support/gateway.js';
import { header, http } from '../support/http.js';

type Mode = 'up' | 'hang' | 'error';

/** A wiki whose behaviour the test switches (wiki.mode): public answers, none at all, or 503s. */
async function switchableWiki(): Promise<{ fake: FakeUpstream; mode: Mode; hanging: ServerResponse[] }> {
  const wiki = { mode: 'up' as Mode, hanging: [] as ServerResponse[] };
  const fake = await startFakeUpstream((_req, res) => {
    if (wiki.mode === 'hang') return void wiki.hanging.push(res);
    if (wiki.mode === 'error') {
      res.writeHead(503, { 'content-type': 'text/plain' });
      return void res.end('down for maintenance');
    }
    res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 's-maxage=5, max-age=5, public' });
    res.end('{"batchcomplete":true}');
  });
  return Object.assign(wiki, { fake });
}

async function metric(gw: RunningGateway, name: string): Promise<number | undefined> {
  const body = (await http(`${gw.adminUrl}/metrics`)).body;
  const m = new RegExp(`^${name} (\\S+)$`, 'm').exec(body);
  return m ? Number(m[1]) : undefined;
}

async function until(check: () => Promise<boolean>, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('/readyz does not depend on the wiki', () => {
  it('stays 200 with the wiki down, while the probe says it is down and stale answers are served', async () => {
    const wiki = await switchableWiki();
    let clock = Date.now();
    const gw = await startGateway(
      wiki.fake.url,
      {
        WIKIEDGE_UPSTREAM_PROBE_MS: '100',
        WIKIEDGE_UPSTREAM_PROBE_TIMEOUT_MS: '3000',
        WIKIEDGE_UPSTREAM_RESPONSE_TIMEOUT_MS: '300',
        WIKIEDGE_GRACE_SECONDS: '0',
        WIKIEDGE_STALE_IF_ERROR_SECONDS: '300',
      },
      { now: () => clock },
    );
    try {
      gw.built.upstreamProbe.start();
      await until(async () => (await metric(gw, 'wikiedge_upstream_up')) === 1);
      expect((await http(`${gw.adminUrl}/upstreamz`)).status).toBe(200);
      const q = `${gw.apiUrl}?action=query&meta=siteinfo&format=json`;
      expect(header(await http(q), 'x-cache')).toBe('miss');

      // The wiki stops answering at all: the probes in flight hang, /readyz and /upstreamz do not.
      wiki.mode = 'hang';
      await until(async () => wiki.hanging.length > 0);
      for (let i = 0; i < 5; i++) {
        const started = performance.now();
        const ready = await http(`${gw.adminUrl}/readyz`);
        expect(ready.status).toBe(200);
        expect(JSON.parse(ready.body)).toEqual({ status: 'ready' });
        await http(`${gw.adminUrl}/upstreamz`);
        // Far inside Kubernetes' 1 s probe timeout, though the wiki holds every request (a probe
        // that waited for it would take the 3 s of WIKIEDGE_UPSTREAM_PROBE_TIMEOUT_MS).
        expect(performance.now() - started).toBeLessThan(1_000);
      }
      await until(async () => (await metric(gw, 'wikiedge_upstream_up')) === 0);
      const down = await http(`${gw.adminUrl}/upstreamz`);
      expect(down.status).toBe(503);
      expect(JSON.parse(down.body)).toMatchObject({ upstream: 'down', result: 'timeout' });

      // It answers 503s: still down, still ready; the cached answer is served stale.
      wiki.mode = 'error';
      await until(async () => JSON.parse((await http(`${gw.adminUrl}/upstreamz`)).body).result === 'status');
      expect(await metric(gw, 'wikiedge_upstream_up')).toBe(0);
      expect((await http(`${gw.adminUrl}/readyz`)).status).toBe(200);
      clock += 10_000; // past the TTL (5 s), inside the stale-if-error window
      const stale = await http(q);
      expect(stale.status).toBe(200);
      expect(header(stale, 'x-cache')).toBe('stale');

      // It comes back: up again.
      wiki.mode = 'up';
      await until(async () => (await metric(gw, 'wikiedge_upstream_up')) === 1);
      expect((await http(`${gw.adminUrl}/upstreamz`)).status).toBe(200);
      expect(gw.logs.filter((l) => l['component'] === 'upstream-probe').map((l) => l['upstream'])).toEqual(['up', 'down', 'up']);
    } finally {
      for (const res of wiki.hanging) res.destroy();
      await gw.close();
      await wiki.fake.close();
    }
  });

  it('is 503 from the start of a shutdown, while requests are still served during the drain', async () => {
    const wiki = await switchableWiki();
    const gw = await startGateway(wiki.fake.url, { WIKIEDGE_SHUTDOWN_DRAIN_MS: '1500' });
    try {
      expect((await http(`${gw.adminUrl}/readyz`)).status).toBe(200);
      const closing = gw.close();
      const unready = await http(`${gw.adminUrl}/readyz`);
      expect(unready.status).toBe(503);
      expect(JSON.parse(unready.body)).toEqual({ status: 'unready', reason: 'shutting-down' });
      expect((await http(`${gw.apiUrl}?action=query&meta=siteinfo&format=json`)).status).toBe(200);
      await closing;
    } finally {
      await wiki.fake.close();
    }
  });
});
