// Malformed requests get a clear 4xx (MediaWiki's error shape for api.php) and never crash the process.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeUpstream, startFakeUpstream } from '../support/fake-upstream.js';
import { type RunningGateway, startGateway } from '../support/gateway.js';
import { header, http, rawTarget } from '../support/http.js';

describe('malformed requests', () => {
  let fake: FakeUpstream;
  let gw: RunningGateway;
  beforeAll(async () => {
    fake = await startFakeUpstream((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'private, must-revalidate, max-age=0' });
      res.end('{}');
    });
    gw = await startGateway(fake.url);
  });
  afterAll(async () => {
    await gw.close();
    await fake.close();
  });

  it('bad percent-encoding in the api.php path: 400 in MediaWiki’s shape, the URL not echoed', async () => {
    const res = await rawTarget(gw.url, '/w/api.php/%zz<script>');
    expect(res.status).toBe(400);
    expect(header(res, 'mediawiki-api-error')).toBe('wikiedge-bad-request');
    expect(JSON.parse(res.body).error.code).toBe('wikiedge-bad-request');
    expect(res.body).not.toContain('<script>');
  });

  it('bad percent-encoding elsewhere: a plain 400', async () => {
    const res = await rawTarget(gw.url, '/w/%E0%A4%A/x');
    expect(res.status).toBe(400);
    expect(header(res, 'content-type')).toMatch(/^text\/plain/);
  });

  it('bad percent-encoding in the query is left to MediaWiki, as PHP reads it', async () => {
    const res = await rawTarget(gw.url, '/w/api.php?action=%zz&format=json');
    expect(res.status).toBe(200);
    expect(fake.requests.at(-1)?.url).toContain('action=%zz');
  });

  it('is counted and logged like any other request (Fastify answers it before onRequest)', async () => {
    const res = await rawTarget(gw.url, '/w/api.php/%zz', { headers: { 'x-request-id': 'malformed-1' } });
    expect(res.status).toBe(400);
    expect(header(res, 'x-request-id')).toBe('malformed-1');
    const line = gw.logs.find((l) => l['reqId'] === 'malformed-1' && l['msg'] === 'request');
    expect(line).toMatchObject({ status: 400, cache: 'error', error: 'wikiedge-bad-request' });
    const metrics = (await http(`${gw.adminUrl}/metrics`)).body;
    expect(metrics).toMatch(/^wikiedge_requests_total\{disposition="error",module="-",method="GET",status_class="4xx",code="400"\} [1-9]/m);
  });

  it('the process keeps serving', async () => {
    expect((await http(`${gw.apiUrl}?action=query&format=json`)).status).toBe(200);
  });
});
