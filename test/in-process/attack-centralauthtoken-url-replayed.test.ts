// CentralAuth logs an api.php request in from its `centralauthtoken` parameter alone
// (CentralAuthApiSessionProvider), cookies or not. With an explicit uselang MediaWiki may call
// a logged-in user's answer public (ApiMain::setCacheMode), and the gateway took the request
// for an anonymous one: the user's answer was stored for everyone, and the token, spent at the
// wiki on its first use, kept opening it to whoever replayed the URL (from a log, a Referer, a
// history). A request carrying one of WIKIEDGE_CREDENTIAL_PARAMS is now never cached and its
// answer goes out private (mediawiki/identity.ts identify; docs/SECURITY.md class 56).
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { describe, expect, it } from 'vitest';
import { gatewayOnFake } from '../support/gateway-on-fake.js';
import { header, http } from '../support/http.js';

/** The wiki: the token's user for a request with one, anonymous otherwise; public either way (explicit uselang). */
function centralAuth(req: IncomingMessage, res: ServerResponse): void {
  const url = new URL(req.url ?? '/', 'http://wiki');
  const user = url.searchParams.has('centralauthtoken') ? 'Alice' : '127.0.0.1';
  res.writeHead(200, {
    'content-type': 'application/json; charset=utf-8',
    'cache-control': 's-maxage=300, max-age=0, public',
    vary: 'Accept-Encoding, Cookie',
  });
  res.end(JSON.stringify({ parse: { title: 'X', text: `<p>Hello ${user}</p>` } }));
}

describe('a request logged in by its query alone', () => {
  const pair = gatewayOnFake(centralAuth);
  const settled = () => pair.gw.built.gateway.afterAnswers.settled(5_000);

  it('centralauthtoken: never stored, never a hit, told private', async () => {
    const url = `${pair.gw.apiUrl}?action=parse&page=X&uselang=en&format=json&centralauthtoken=${randomUUID()}`;
    const first = await http(url);
    expect(first.body).toContain('Alice');
    expect(header(first, 'cache-control')).toMatch(/private/);
    await settled();
    const replayed = await http(url);
    expect(header(replayed, 'x-cache')).not.toBe('hit');
    expect(header(replayed, 'cache-control')).toMatch(/private/);
  });

  it('beside origin=* (login suppressed, the session still loaded): not shared, told private', async () => {
    const url = `${pair.gw.apiUrl}?action=parse&page=X&uselang=en&format=json&origin=*&centralauthtoken=${randomUUID()}`;
    const first = await http(url);
    expect(header(first, 'cache-control')).toMatch(/private/);
    await settled();
    expect(header(await http(url), 'x-cache')).not.toBe('hit');
  });

  it('the same URL without the parameter is cached as before', async () => {
    const url = `${pair.gw.apiUrl}?action=parse&page=X&uselang=en&format=json&requestid=${randomUUID()}`;
    await http(url);
    await settled();
    expect(header(await http(url), 'x-cache')).toBe('hit');
  });
});
