// Attack class 4 and 10: request headers the key does not name must not change a shared answer,
// and a client's X-Forwarded-* are not believed unless it is a trusted proxy.
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { gatewayOnFake } from '../support/gateway-on-fake.js';
import { answerPublicEchoingHeaders, echoedHeaders } from '../support/fake-upstream.js';
import { header, http } from '../support/http.js';
import { rawBytes } from '../support/raw-socket.js';

describe('unkeyed headers and X-Forwarded-* spoofing', () => {
  // Loopback (the test client) is NOT a trusted proxy here.
  const t = gatewayOnFake(answerPublicEchoingHeaders, { WIKIEDGE_TRUSTED_PROXIES: '192.0.2.1' });

  it('X-Forwarded-For from an untrusted client is replaced, never appended to', async () => {
    const res = await http(`${t.gw.apiUrl}?action=query&format=json&requestid=${randomUUID()}`, {
      headers: { 'x-forwarded-for': '203.0.113.66' },
    });
    expect(echoedHeaders(res)['x-forwarded-for']).toBe('127.0.0.1');
  });

  it('X-Forwarded-Host and -Proto from an untrusted client are ignored, so they cannot poison', async () => {
    const q = `${t.gw.apiUrl}?action=query&format=json&requestid=${randomUUID()}`;
    const poisoned = await http(q, { headers: { 'x-forwarded-host': 'evil.example', 'x-forwarded-proto': 'https', host: 'evil.example' } });
    expect(echoedHeaders(poisoned)['x-forwarded-proto']).toBe('http');
    expect(echoedHeaders(poisoned)['host']).not.toBe('evil.example');
    const victim = await http(q);
    // The victim may get the cached answer, but nothing in it came from the attacker's headers
    // except the Host echo, which the wiki never receives.
    expect(victim.body).not.toContain('https');
  });

  it('Treat-as-Untrusted is part of the key', async () => {
    const q = `${t.gw.apiUrl}?action=query&format=json&requestid=${randomUUID()}`;
    await http(q, { headers: { 'treat-as-untrusted': '1' } });
    const plain = await http(q);
    expect(header(plain, 'x-cache')).toBe('miss');
    expect(echoedHeaders(plain)['treat-as-untrusted']).toBeUndefined();
  });

  it('Origin is keyed when the request has an origin parameter', async () => {
    const q = `${t.gw.apiUrl}?action=query&format=json&origin=https://a.example&requestid=${randomUUID()}`;
    await http(q, { headers: { origin: 'https://a.example' } });
    const other = await http(q, { headers: { origin: 'https://b.example' } });
    expect(header(other, 'x-cache')).toBe('miss');
    expect(echoedHeaders(other)['origin']).toBe('https://b.example');
  });

  it('Accept-Encoding never reaches the wiki on a shared fetch, so one client cannot get a gzip body stored for all', async () => {
    const res = await http(`${t.gw.apiUrl}?action=query&format=json&requestid=${randomUUID()}`, {
      headers: { 'accept-encoding': 'gzip, br' },
    });
    expect(echoedHeaders(res)['accept-encoding']).toBeUndefined();
  });

  it('Authorization makes the request a session of its own: never the shared entry', async () => {
    const q = `${t.gw.apiUrl}?action=query&format=json&requestid=${randomUUID()}`;
    await http(q);
    const withAuth = await http(q, { headers: { authorization: 'Bearer attacker' } });
    // This stand-in echoes the request headers: an answer holding the request's own credential is
    // never stored at all (the credential-echo net), let alone shared.
    expect(header(withAuth, 'x-cache')).toBe('pass');
    expect(header(withAuth, 'cache-control')).toMatch(/^private/);
    expect(header(await http(q), 'x-cache')).toBe('hit');
  });

  it('Proxy (httpoxy) and hop-by-hop headers never reach the wiki', async () => {
    // A raw request: HTTP clients refuse to send Connection-listed headers themselves.
    const raw = await rawBytes(
      t.gw.url,
      `GET /w/api.php?action=query&format=json&requestid=${randomUUID()} HTTP/1.1\r\nHost: x\r\n` +
        'Proxy: http://evil.example:3128\r\nX-Secret: a\r\nConnection: close, X-Secret\r\nTE: trailers\r\n\r\n',
    );
    // The body may come chunked: take the JSON object itself.
    expect(raw).toMatch(/^HTTP\/1\.1 200/);
    const h = echoedHeaders({ body: raw.slice(raw.indexOf('{'), raw.lastIndexOf('}') + 1) });
    expect(h['proxy']).toBeUndefined();
    expect(h['x-secret']).toBeUndefined();
    expect(h['te']).toBeUndefined();
  });
});
