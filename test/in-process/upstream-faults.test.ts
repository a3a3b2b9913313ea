// Upstream refused → 502, stalled → 504, both in MediaWiki's error shape for api.php; clients that
// abort mid-response release their upstream sockets.
import { afterEach, describe, expect, it } from 'vitest';
import { request } from 'undici';
import { MANY_CLIENTS_FROM_LOOPBACK, type RunningGateway, startGateway } from '../support/gateway.js';
import { closedPort, type FakeUpstream, startFakeUpstream } from '../support/fake-upstream.js';
import { header, http } from '../support/http.js';

describe('upstream faults', () => {
  let gw: RunningGateway | undefined;
  let fake: FakeUpstream | undefined;
  afterEach(async () => {
    await gw?.close();
    await fake?.close();
    gw = undefined;
    fake = undefined;
  });

  it('wiki not listening: 502 with a MediaWiki-shaped error in the requested format', async () => {
    gw = await startGateway(`http://127.0.0.1:${await closedPort()}`);
    const fv1 = await http(`${gw.apiUrl}?action=query&meta=siteinfo&format=json`);
    expect(fv1.status).toBe(502);
    expect(header(fv1, 'mediawiki-api-error')).toBe('wikiedge-upstream-unreachable');
    expect(header(fv1, 'content-type')).toBe('application/json; charset=utf-8');
    const body = JSON.parse(fv1.body);
    expect(body.error.code).toBe('wikiedge-upstream-unreachable');
    expect(typeof body.error.info).toBe('string');
    expect(body.error['*']).toBeTypeOf('string');

    const fv2 = await http(`${gw.apiUrl}?action=query&meta=siteinfo&format=json&formatversion=2`);
    expect(JSON.parse(fv2.body).error.docref).toBeTypeOf('string');

    const other = await http(`${gw.url}/w/index.php?title=Main_Page`);
    expect(other.status).toBe(502);
    expect(header(other, 'content-type')).toMatch(/^text\/plain/);
  });

  it('wiki that stalls: 504 after the configured response timeout', async () => {
    fake = await startFakeUpstream(() => {
      /* never answers */
    });
    gw = await startGateway(fake.url, { WIKIEDGE_UPSTREAM_RESPONSE_TIMEOUT_MS: '300' });
    const started = Date.now();
    const res = await http(`${gw.apiUrl}?action=query&meta=siteinfo&format=json`);
    const elapsed = Date.now() - started;
    expect(res.status).toBe(504);
    expect(header(res, 'mediawiki-api-error')).toBe('wikiedge-upstream-timeout');
    expect(JSON.parse(res.body).error.code).toBe('wikiedge-upstream-timeout');
    expect(elapsed).toBeGreaterThanOrEqual(250);
    const pass = await http(`${gw.url}/w/index.php`);
    expect(pass.status).toBe(504);
  });

  it('1000 clients aborting mid-response leave no upstream sockets open', async () => {
    fake = await startFakeUpstream((_req, res) => {
      // A long body trickled out until the other side goes away.
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.write('x'.repeat(1024));
      const timer = setInterval(() => res.write('y'.repeat(1024)), 20);
      res.on('close', () => clearInterval(timer));
    });
    // A small pool: a leaked socket would exhaust it and make later requests queue forever.
    gw = await startGateway(fake.url, {
      ...MANY_CLIENTS_FROM_LOOPBACK,
      WIKIEDGE_UPSTREAM_CONNECTIONS: '8',
      WIKIEDGE_UPSTREAM_MAX_CONCURRENCY: '64',
      WIKIEDGE_UPSTREAM_QUEUE_MAX: '2000',
    });
    const abortOne = async (i: number, path: string) => {
      const controller = new AbortController();
      const res = await request(`${gw!.url}${path}?n=${i}`, {
        signal: controller.signal,
        method: path.endsWith('api.php') ? 'POST' : 'GET',
        body: path.endsWith('api.php') ? 'action=edit' : null,
      });
      // Read the first chunk, then walk away.
      for await (const _chunk of res.body) break;
      controller.abort();
    };
    const round = async (from: number) => {
      for (let batch = 0; batch < 5; batch++) {
        await Promise.all(Array.from({ length: 100 }, (_, i) => abortOne(from + batch * 100 + i, i % 2 ? '/w/index.php' : '/w/load.php').catch(() => {})));
      }
      // Let the aborts reach both ends: until nothing runs or waits and every socket left open
      // is the pool's (bounded: what is still stuck then fails the checks below).
      const settled = () => {
        const stats = gw!.built.gateway.upstream.pool.stats;
        return stats.running + stats.pending === 0 && fake!.openSockets() === stats.free;
      };
      for (let i = 0; i < 300 && !settled(); i++) await new Promise((r) => setTimeout(r, 50));
      return { open: fake!.openSockets(), stats: gw!.built.gateway.upstream.pool.stats };
    };
    const first = await round(0);
    const second = await round(500);
    expect(fake.requests.length).toBe(1000);
    // Nothing is stuck: no request still running or queued, every socket left open is an idle
    // keep-alive socket of the pool (at most its 8), and the pool still serves a new request.
    expect(first.stats.running + first.stats.pending).toBe(0);
    expect(second.stats.running + second.stats.pending).toBe(0);
    expect(second.open).toBe(second.stats.free);
    expect(second.open).toBeLessThanOrEqual(8);
    const controller = new AbortController();
    const res = await request(`${gw.url}/w/index.php?after=1`, { signal: AbortSignal.timeout(2_000) });
    expect(res.statusCode).toBe(200);
    for await (const _chunk of res.body) break;
    controller.abort();
    res.body.destroy();
  });
});
