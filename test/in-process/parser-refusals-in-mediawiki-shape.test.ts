// What Node's HTTP parser refuses before any handler sees the request (a malformed head, headers
// over the limit) is answered like every other gateway error: MediaWiki's error shape, so that
// API clients read `error.code` as they do for the wiki's own errors, with the gateway's headers.
import { describe, expect, it } from 'vitest';
import { answerPrivateEmptyJson, gatewayOnFake } from '../support/gateway-on-fake.js';
import { rawBytes } from '../support/raw-socket.js';

function parse(raw: string) {
  const [head, body] = raw.split('\r\n\r\n', 2) as [string, string];
  const headers = new Map(
    head
      .split('\r\n')
      .slice(1)
      .map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]),
  );
  return { statusLine: head.split('\r\n')[0], headers, body: JSON.parse(body) as { error: { code: string; info: string } } };
}

describe('requests refused by the HTTP parser', () => {
  const t = gatewayOnFake(answerPrivateEmptyJson);

  it.each([
    ['a malformed head', 'GARBAGE\r\n\r\n', 400, 'wikiedge-bad-request'],
    ['headers over the limit', `GET /w/api.php HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(40_000)}\r\n\r\n`, 431, 'wikiedge-headers-too-large'],
  ])('%s: %i in MediaWiki’s error shape', async (_what, bytes, status, code) => {
    const res = parse(await rawBytes(t.gw.url, bytes));
    expect(res.statusLine).toMatch(new RegExp(`^HTTP/1\\.1 ${status} `));
    expect(res.body.error.code).toBe(code);
    expect(res.body.error.info).toMatch(/\w/);
    expect(res.headers.get('mediawiki-api-error')).toBe(code);
    expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(res.headers.get('x-cache')).toBe('error');
    expect(res.headers.get('x-request-id')).toMatch(/\S/);
    expect(res.headers.get('connection')).toBe('close');
  });
});
