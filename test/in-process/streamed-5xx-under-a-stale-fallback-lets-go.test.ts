// When the wiki answers 5xx and a stale entry answers instead (stale-if-error), nobody reads the
// wiki's answer. Streamed (debuginfo off, larger than an entry may be), it was never read to its
// end: its turn at the wiki was never released, and its client counted as asking in parallel for
// good, so that a client in series from that address was refused (fixed in commit 9f51a5c).
import { randomUUID } from 'node:crypto';
import { describe, expect, it, vi } from 'vitest';
import { startFakeUpstream } from '../support/fake-upstream.js';
import { startGateway } from '../support/gateway.js';
import { header, http } from '../support/http.js';

describe('a streamed 5xx answer that a stale entry replaces', () => {
  it('lets go of its turn and of its client`s count', async () => {
    let clock = 1_000_000;
    let fail = false;
    const fake = await startFakeUpstream((_req, res) => {
      if (!fail) {
        res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'public, s-maxage=1, max-age=1' });
        res.end('{"ok":1}');
      } else {
        res.writeHead(503, { 'content-type': 'text/html' });
        res.end('x'.repeat(5000));
      }
    });
    const gw = await startGateway(
      fake.url,
      {
        WIKIEDGE_DEBUGINFO: 'off',
        WIKIEDGE_CACHE_MAX_ENTRY_BYTES: '1000',
        WIKIEDGE_GRACE_SECONDS: '0',
        WIKIEDGE_CLIENT_MISS_RATE: '1',
        WIKIEDGE_CLIENT_MISS_BURST: '1',
        WIKIEDGE_CLIENT_REFUSAL_DELAY_MS: '0',
      },
      { now: () => clock },
    );
    try {
      const url = `${gw.apiUrl}?action=query&format=json&list=allpages&r=${randomUUID()}`;
      expect(header(await http(url), 'x-cache')).toBe('miss');
      clock += 2_000;
      fail = true;
      const stale = await http(url);
      expect(header(stale, 'x-cache')).toBe('stale');
      await vi.waitFor(() => {
        expect(gw.built.gateway.gate.active).toBe(0);
        expect(gw.built.gateway.underWay.of('127.0.0.1')).toBe(0);
      });
      // A client in series afterwards: never refused.
      fail = false;
      for (let i = 0; i < 3; i++) expect((await http(`${gw.apiUrl}?action=query&format=json&list=allpages&n=${i}-${randomUUID()}`)).status).toBe(200);
    } finally {
      await gw.close();
      await fake.close();
    }
  });
});
