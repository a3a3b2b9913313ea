// A web server or an extension in front of the wiki that answers CORS itself echoes any Origin
// in Access-Control-Allow-Origin, with `Vary: Origin`. The key holds the Origin header only
// beside an `origin` parameter (steps/recv.ts keyedHeadersOf): stored under a key that ignores
// it, the first client's Origin was every reader's (docs/SECURITY.md class 55). Such an answer
// is now stored only where the key holds the Origin it varies on (policy.ts storeVerdict).
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { describe, expect, it } from 'vitest';
import { gatewayOnFake } from '../support/gateway-on-fake.js';
import { header, http } from '../support/http.js';

function corsEverywhere(req: IncomingMessage, res: ServerResponse): void {
  const headers: Record<string, string> = {
    'content-type': 'application/json; charset=utf-8',
    'cache-control': 's-maxage=300, max-age=0, public',
    vary: 'Accept-Encoding, Origin',
  };
  if (req.headers.origin !== undefined) headers['access-control-allow-origin'] = req.headers.origin;
  res.writeHead(200, headers);
  res.end(JSON.stringify({ batchcomplete: true, query: { general: { sitename: 'Lab' } } }));
}

describe('an answer that varies on Origin', () => {
  const pair = gatewayOnFake(corsEverywhere);
  const settled = () => pair.gw.built.gateway.afterAnswers.settled(5_000);

  it('without an origin parameter: one client`s Origin is never another`s answer', async () => {
    const url = `${pair.gw.apiUrl}?action=query&meta=siteinfo&format=json&requestid=${randomUUID()}`;
    const evil = await http(url, { headers: { origin: 'https://evil.example' } });
    expect(header(evil, 'access-control-allow-origin')).toBe('https://evil.example');
    await settled();
    for (const headers of [{}, { origin: 'https://good.example' }] as Record<string, string>[]) {
      const other = await http(url, { headers });
      expect(header(other, 'x-cache')).not.toBe('hit');
      expect(header(other, 'access-control-allow-origin')).toBe(headers.origin);
    }
  });

  it('with an origin parameter the key holds the Origin header: stored, and each Origin has its own', async () => {
    const url = `${pair.gw.apiUrl}?action=query&meta=siteinfo&format=json&origin=*&requestid=${randomUUID()}`;
    await http(url, { headers: { origin: 'https://evil.example' } });
    await settled();
    const again = await http(url, { headers: { origin: 'https://evil.example' } });
    expect(header(again, 'x-cache')).toBe('hit');
    const other = await http(url, { headers: { origin: 'https://good.example' } });
    expect(header(other, 'x-cache')).not.toBe('hit');
    expect(header(other, 'access-control-allow-origin')).toBe('https://good.example');
  });
});
