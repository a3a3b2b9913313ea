// A session's slot is only as private as the credential it is made of. `wikiLoggedOut` (a Unix
// time: CookieSessionProvider::setLoggedOutCookie) or a cookie the credential net takes for one
// (`x_token=1`), with a value anyone can send or plant, gives two clients one slot; the wiki
// loads no session for either and answers each as anonymous, by its address (meta=userinfo's
// name, a `~~~` preview), privately. Stored in that slot, one client's address was the other's
// hit. An answer holding the requester's address is now stored in no tier (policy.ts
// finalVerdict; docs/SECURITY.md class 54).
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { describe, expect, it } from 'vitest';
import { gatewayOnFake } from '../support/gateway-on-fake.js';
import { header, http } from '../support/http.js';

/** The wiki names an anonymous requester by its address: the first of the X-Forwarded-For it trusts. */
function userinfo(req: IncomingMessage, res: ServerResponse): void {
  const ip = String(req.headers['x-forwarded-for'] ?? '')
    .split(',')[0]!
    .trim();
  res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'private, must-revalidate, max-age=0' });
  res.end(JSON.stringify({ batchcomplete: true, query: { userinfo: { id: 0, name: ip, anon: '' } } }));
}

describe('a guessable credential cookie shared by two clients', () => {
  const pair = gatewayOnFake(userinfo);

  it.each(['wikiLoggedOut=1764528000', 'x_token=1'])('%s: one client`s address is never the other`s answer', async (cookie) => {
    const url = `${pair.gw.apiUrl}?action=query&meta=userinfo&format=json&requestid=${randomUUID()}`;
    const first = await http(url, { headers: { cookie, 'x-forwarded-for': '198.51.100.7' } });
    expect(first.body).toContain('198.51.100.7');
    await pair.gw.built.gateway.afterAnswers.settled(5_000);
    const other = await http(url, { headers: { cookie, 'x-forwarded-for': '203.0.113.9' } });
    expect(header(other, 'x-cache')).not.toBe('hit');
    expect(other.body).not.toContain('198.51.100.7');
    expect(other.body).toContain('203.0.113.9');
  });
});

/**
 * An answer the wiki shapes by the requester's address without printing it (whether the address
 * is blocked, its rate limits): a slot of guessable credentials alone is bound to the client's
 * address, so the other client's answer is never its hit (mediawiki/identity.ts identifyCookies).
 */
function blockedByAddress(req: IncomingMessage, res: ServerResponse): void {
  const ip = String(req.headers['x-forwarded-for'] ?? '')
    .split(',')[0]!
    .trim();
  res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'private, must-revalidate, max-age=0' });
  res.end(JSON.stringify({ batchcomplete: true, query: { blocked: ip === '198.51.100.7' } }));
}

describe('a guessable credential cookie sent from two addresses', () => {
  const pair = gatewayOnFake(blockedByAddress);
  const ask = (url: string, cookie: string, address: string) => http(url, { headers: { cookie, 'x-forwarded-for': address } });

  it.each(['wikiLoggedOut=1764528000', 'x_token=1', 'forceHTTPS=true'])('%s: an answer shaped by one address is not the other`s hit', async (cookie) => {
    const url = `${pair.gw.apiUrl}?action=query&list=blockcheck&format=json&requestid=${randomUUID()}`;
    const first = await ask(url, cookie, '198.51.100.7');
    expect(JSON.parse(first.body).query.blocked).toBe(true);
    await pair.gw.built.gateway.afterAnswers.settled(5_000);
    // The same client again: its own slot still caches.
    expect(header(await ask(url, cookie, '198.51.100.7'), 'x-cache')).toBe('hit');
    const other = await ask(url, cookie, '203.0.113.9');
    expect(header(other, 'x-cache')).not.toBe('hit');
    expect(JSON.parse(other.body).query.blocked).toBe(false);
  });

  it('one Authorization a whole office sends (a shared htpasswd the wiki does not read): bound to each address', async () => {
    const url = `${pair.gw.apiUrl}?action=query&list=blockcheck&format=json&requestid=${randomUUID()}`;
    const headers = (address: string) => ({ authorization: 'Basic b2ZmaWNlOm9mZmljZQ==', 'x-forwarded-for': address });
    expect(JSON.parse((await http(url, { headers: headers('198.51.100.7') })).body).query.blocked).toBe(true);
    await pair.gw.built.gateway.afterAnswers.settled(5_000);
    expect(header(await http(url, { headers: headers('198.51.100.7') }), 'x-cache')).toBe('hit');
    const other = await http(url, { headers: headers('203.0.113.9') });
    expect(header(other, 'x-cache')).not.toBe('hit');
    expect(JSON.parse(other.body).query.blocked).toBe(false);
  });

  it('an OAuth token (Bearer) is a secret MediaWiki`s provider reads: its slot follows the client from one address to another', async () => {
    const url = `${pair.gw.apiUrl}?action=query&list=blockcheck&format=json&requestid=${randomUUID()}`;
    const headers = (address: string) => ({ authorization: `Bearer ${'t'.repeat(40)}`, 'x-forwarded-for': address });
    await http(url, { headers: headers('198.51.100.7') });
    await pair.gw.built.gateway.afterAnswers.settled(5_000);
    expect(header(await http(url, { headers: headers('203.0.113.9') }), 'x-cache')).toBe('hit');
  });

  it('a session cookie is a secret: its slot follows the session from one address to another', async () => {
    const url = `${pair.gw.apiUrl}?action=query&list=blockcheck&format=json&requestid=${randomUUID()}`;
    const cookie = `wiki_session=${'s'.repeat(32)}`;
    await ask(url, cookie, '198.51.100.7');
    await pair.gw.built.gateway.afterAnswers.settled(5_000);
    expect(header(await ask(url, cookie, '203.0.113.9'), 'x-cache')).toBe('hit');
  });
});
