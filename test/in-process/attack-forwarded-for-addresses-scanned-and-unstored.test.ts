// Addresses a client writes into X-Forwarded-For in front of its own: behind a trusted proxy
// (loopback, the default, plays it here) the gateway forwards the client's header with the
// proxy appended, and looked for every address in it in each answer, to keep answers that print
// the requester's address out of the shared tier (mediawiki/requester-address.ts). One that
// wrote a thousand addresses had each searched for through the whole answer, synchronously.
// MediaWiki names the requester by a hop near the right (WebRequest::getIP walks the proxies it
// trusts, which may be more than the gateway's): the rightmost eight are searched for now. An
// address the client writes among those still keeps the answers its own requests fetch out of
// the cache, as it should when the wiki may name it (docs/SECURITY.md class 61).
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { describe, expect, it } from 'vitest';
import { gatewayOnFake } from '../support/gateway-on-fake.js';
import { header, http } from '../support/http.js';

const EDITOR = '198.51.100.20';

/** recentchanges with an anonymous editor, public, as MediaWiki 1.39 answers it. */
function recentChanges(_req: IncomingMessage, res: ServerResponse): void {
  res.writeHead(200, {
    'content-type': 'application/json; charset=utf-8',
    'cache-control': 's-maxage=300, max-age=300, public',
    vary: 'Accept-Encoding, Treat-as-Untrusted, Cookie',
  });
  res.end(JSON.stringify({ batchcomplete: '', query: { recentchanges: [{ type: 'edit', title: 'Main Page', user: EDITOR, anon: '' }] } }));
}

describe('addresses a client writes in X-Forwarded-For before its own', () => {
  const t = gatewayOnFake(recentChanges);
  const url = () => `${t.gw.apiUrl}?action=query&list=recentchanges&rcprop=title|user&format=json&requestid=${randomUUID()}`;

  it('an editor`s address written just before the client`s own is searched for: the wiki may trust the hop that wrote it', async () => {
    const u = url();
    const first = await http(u, { headers: { 'x-forwarded-for': `${EDITOR}, 203.0.113.7` } });
    expect(first.body).toContain(EDITOR);
    expect(header(first, 'x-cache')).toBe('pass');
  });

  it('a thousand written addresses, the editor`s among them: stored all the same', async () => {
    const u = url();
    const written = Array.from({ length: 1_000 }, (_, i) => `192.0.${i >> 8}.${i & 255}`);
    written[500] = EDITOR;
    const first = await http(u, { headers: { 'x-forwarded-for': `${written.join(',')}, 203.0.113.7` } });
    expect(header(first, 'x-cache')).toBe('miss');
    expect(header(await http(u), 'x-cache')).toBe('hit');
  });

  it('the requester`s own address in the answer still keeps it out (the editor asking)', async () => {
    const u = url();
    const first = await http(u, { headers: { 'x-forwarded-for': `192.0.2.1, ${EDITOR}` } });
    // Not stored: X-Cache says pass.
    expect(header(first, 'x-cache')).toBe('pass');
    const other = await http(u, { headers: { 'x-forwarded-for': '192.0.2.44' } });
    expect(header(other, 'x-cache')).not.toBe('hit');
  });
});
