// Attack class 13: conflicting framing, oversized header counts and sizes get a clear 4xx and
// never reach the wiki or crash the gateway.
import { describe, expect, it } from 'vitest';
import { answerPrivateEmptyJson, gatewayOnFake } from '../support/gateway-on-fake.js';
import { http } from '../support/http.js';
import { rawBytes } from '../support/raw-socket.js';

describe('request smuggling and header abuse', () => {
  const t = gatewayOnFake(answerPrivateEmptyJson);

  it('Content-Length together with Transfer-Encoding: 400, nothing forwarded', async () => {
    const before = t.fake.requests.length;
    const res = await rawBytes(
      t.gw.url,
      'POST /w/api.php HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\nGET /w/api.php?smuggled=1 HTTP/1.1\r\nHost: x\r\n\r\n',
    );
    expect(res).toMatch(/^HTTP\/1\.1 400/);
    expect(t.fake.requests.slice(before).some((r) => r.url?.includes('smuggled'))).toBe(false);
  });

  it('two different Content-Length headers: 400', async () => {
    const res = await rawBytes(t.gw.url, 'POST /w/api.php HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nab');
    expect(res).toMatch(/^HTTP\/1\.1 400/);
  });

  it('oversized headers: 431, and the gateway keeps serving', async () => {
    const res = await rawBytes(t.gw.url, `GET /w/api.php HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`);
    expect(res).toMatch(/^HTTP\/1\.1 431/);
    expect((await http(`${t.gw.apiUrl}?action=query&format=json`)).status).toBe(200);
  });

  it('thousands of header lines: refused or trimmed, never a crash', async () => {
    const lines = Array.from({ length: 5_000 }, (_, i) => `X-H${i}: v\r\n`).join('');
    const res = await rawBytes(t.gw.url, `GET /w/api.php?action=query&format=json HTTP/1.1\r\nHost: x\r\n${lines}Connection: close\r\n\r\n`);
    expect(res).toMatch(/^HTTP\/1\.1 (200|4\d\d)/);
    expect((await http(`${t.gw.apiUrl}?action=query&format=json`)).status).toBe(200);
  });

  it('an over-long URL: 414 in MediaWiki’s shape', async () => {
    const res = await http(`${t.gw.apiUrl}?action=query&format=json&x=${'a'.repeat(9_000)}`);
    expect(res.status).toBe(414);
    expect(JSON.parse(res.body).error.code).toBe('wikiedge-uri-too-long');
  });
});
