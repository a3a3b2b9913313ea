// Malformed requests get a clear 4xx (MediaWiki's error shape for api.php) and never crash the process.
import { describe, expect, it } from 'vitest';
import { answerPrivateEmptyJson, gatewayOnFake } from '../support/gateway-on-fake.js';
import { header, http, rawTarget } from '../support/http.js';

describe('malformed requests', () => {
  const t = gatewayOnFake(answerPrivateEmptyJson);

  it('bad percent-encoding in the api.php path: 400 in MediaWiki’s shape, the URL not echoed', async () => {
    const res = await rawTarget(t.gw.url, '/w/api.php/%zz<script>');
    expect(res.status).toBe(400);
    expect(header(res, 'mediawiki-api-error')).toBe('wikiedge-bad-request');
    expect(JSON.parse(res.body).error.code).toBe('wikiedge-bad-request');
    expect(res.body).not.toContain('<script>');
  });

  it('bad percent-encoding elsewhere: a plain 400', async () => {
    const res = await rawTarget(t.gw.url, '/w/%E0%A4%A/x');
    expect(res.status).toBe(400);
    expect(header(res, 'content-type')).toMatch(/^text\/plain/);
  });

  it('bad percent-encoding in the query is left to MediaWiki, as PHP reads it', async () => {
    const res = await rawTarget(t.gw.url, '/w/api.php?action=%zz&format=json');
    expect(res.status).toBe(200);
    expect(t.fake.requests.at(-1)?.url).toContain('action=%zz');
  });

  // Fastify refused a Content-Type it could not parse with 415 (and an error-level log line);
  // PHP reads such a body as no form, and MediaWiki answers from the query string.
  for (const type of [';;;', 'a/b c', 'text/plain; charset']) {
    it(`a POST whose Content-Type no parser reads (${type}) goes to the wiki with it, as it came`, async () => {
      const res = await http(`${t.gw.url}/w/api.php?action=query&format=json`, { method: 'POST', headers: { 'content-type': type }, body: 'a=1' });
      expect(res.status).toBe(200);
      expect(t.fake.requests.at(-1)?.headers['content-type']).toBe(type);
    });
  }

  it('is counted and logged like any other request (Fastify answers it before onRequest)', async () => {
    const res = await rawTarget(t.gw.url, '/w/api.php/%zz', { headers: { 'x-request-id': 'malformed-1' } });
    expect(res.status).toBe(400);
    expect(header(res, 'x-request-id')).toBe('malformed-1');
    const line = t.gw.logs.find((l) => l['reqId'] === 'malformed-1' && l['msg'] === 'request');
    expect(line).toMatchObject({ status: 400, cache: 'error', error: 'wikiedge-bad-request' });
    const metrics = (await http(`${t.gw.adminUrl}/metrics`)).body;
    expect(metrics).toMatch(/^wikiedge_requests_total\{disposition="error",module="-",method="GET",status_class="4xx",code="400"\} [1-9]/m);
  });

  it('the process keeps serving', async () => {
    expect((await http(`${t.gw.apiUrl}?action=query&format=json`)).status).toBe(200);
  });
});
