// Logins, edits and logouts are POSTs whose action is in the form, not the query string: their
// `module` label (metrics and access log) is the module the form names, as MediaWiki reads
// `$_POST + $_GET`, from the same closed set as a GET's. A form too large to hold (streamed to
// the wiki as it comes) is labelled `unknown`, not guessed from the query.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeUpstream, startFakeUpstream } from '../support/fake-upstream.js';
import { type RunningGateway, startGateway } from '../support/gateway.js';
import { http } from '../support/http.js';

describe('the module label of a POST', () => {
  let fake: FakeUpstream;
  let gw: RunningGateway;
  beforeAll(async () => {
    fake = await startFakeUpstream((req, res) => {
      req.resume();
      req.on('end', () => {
        res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'private, must-revalidate, max-age=0' });
        res.end('{}');
      });
    });
    // Forms up to 4 KiB are read whole before they go on; larger ones stream.
    gw = await startGateway(fake.url, { WIKIEDGE_REQUEST_BODY_BUFFER_BYTES: '4096' });
  });
  afterAll(async () => {
    await gw?.close();
    await fake?.close();
  });

  async function post(id: string, query: string, contentType: string, body: string): Promise<{ log: string; metric: boolean }> {
    const res = await http(`${gw.apiUrl}?${query}`, { method: 'POST', headers: { 'content-type': contentType, 'x-request-id': id }, body });
    expect(res.status).toBe(200);
    const line = gw.logs.find((l) => l['reqId'] === id && l['msg'] === 'request');
    const module = String(line?.['module']);
    const metrics = (await http(`${gw.adminUrl}/metrics`)).body;
    return { log: module, metric: metrics.includes(`wikiedge_requests_total{disposition="pass",module="${module}",method="POST"`) };
  }

  it('a urlencoded form: its action', async () => {
    expect(await post('login', 'format=json', 'application/x-www-form-urlencoded', 'action=login&lgname=Bob&lgpassword=x&lgtoken=t')).toEqual({
      log: 'login',
      metric: true,
    });
    expect(await post('query', '', 'application/x-www-form-urlencoded; charset=UTF-8', 'action=query&meta=tokens&format=json')).toEqual({
      log: 'query+tokens',
      metric: true,
    });
  });

  it('the form wins over the query string, which fills in what the form does not say', async () => {
    expect(await post('edit', 'action=query&meta=siteinfo', 'application/x-www-form-urlencoded', 'action=edit&title=A&text=x&token=t')).toEqual({
      log: 'edit',
      metric: true,
    });
    expect(await post('logout', 'action=logout', 'application/x-www-form-urlencoded', 'token=t&format=json')).toEqual({ log: 'logout', metric: true });
  });

  it('a multipart form: its fields without a file', async () => {
    const body = [
      '--XyZ',
      'Content-Disposition: form-data; name="action"',
      '',
      'upload',
      '--XyZ',
      'Content-Disposition: form-data; name="file"; filename="action.txt"',
      'Content-Type: text/plain',
      '',
      'action=delete',
      '--XyZ--',
      '',
    ].join('\r\n');
    expect(await post('upload', 'format=json', 'multipart/form-data; boundary=XyZ', body)).toEqual({ log: 'upload', metric: true });
  });

  it('an action MediaWiki does not know: other, as for a GET', async () => {
    expect(await post('nosuch', '', 'application/x-www-form-urlencoded', 'action=no-such-module-1234')).toEqual({ log: 'other', metric: true });
  });

  it('a body PHP does not parse into $_POST: the query names the module', async () => {
    expect(await post('json', 'action=query&meta=siteinfo', 'application/json', '{"action":"edit"}')).toEqual({ log: 'query+siteinfo', metric: true });
  });

  it('a form too large to hold: unknown', async () => {
    const body = `action=edit&title=A&text=${'x'.repeat(10_000)}`;
    expect(await post('large', 'action=query', 'application/x-www-form-urlencoded', body)).toEqual({ log: 'unknown', metric: true });
  });
});
