// A client in series is never refused by the budget of uncached requests; one that leaves a
// request before its answer counts as asking in parallel for a while (steps/admission.ts). When
// the wiki cut a streamed answer off (its socket reset, a body timeout), the gateway ended the
// client's answer itself and took that for the client leaving: its next requests in series got
// 429 (fixed in commit 7f6e8bb). The client did not leave; it is not counted so.
import { randomUUID } from 'node:crypto';
import { describe, expect, it, vi } from 'vitest';
import { startFakeUpstream } from '../support/fake-upstream.js';
import { startGateway } from '../support/gateway.js';
import { http } from '../support/http.js';

const LIMITS = { WIKIEDGE_CLIENT_MISS_RATE: '1', WIKIEDGE_CLIENT_MISS_BURST: '1', WIKIEDGE_CLIENT_REFUSAL_DELAY_MS: '0' };

describe('a client in series after the wiki cut one of its answers off', () => {
  for (const [name, env, path] of [
    ['a page streamed through (index.php)', {}, '/w/index.php?title=cut'],
    [
      'a large api.php answer streamed (debuginfo off)',
      { WIKIEDGE_DEBUGINFO: 'off', WIKIEDGE_CACHE_MAX_ENTRY_BYTES: '1000' },
      '/w/api.php?action=query&format=json&list=allpages&k=cut',
    ],
  ] as const) {
    it(`${name}: its next requests are answered`, async () => {
      const fake = await startFakeUpstream((req, res) => {
        if (req.url!.includes('cut')) {
          res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'private' });
          res.write(`{"a":"${'x'.repeat(2000)}`);
          setTimeout(() => res.socket!.destroy(), 20);
          return;
        }
        res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'private' });
        res.end('{}');
      });
      const gw = await startGateway(fake.url, { ...LIMITS, ...env });
      try {
        await http(`${gw.url}${path}`).catch(() => undefined);
        await vi.waitFor(() => expect(gw.built.gateway.underWay.of('127.0.0.1')).toBe(0));
        const statuses: number[] = [];
        for (let i = 0; i < 3; i++) statuses.push((await http(`${gw.apiUrl}?action=query&format=json&list=allpages&n=${i}-${randomUUID()}`)).status);
        expect(statuses).toEqual([200, 200, 200]);
      } finally {
        await gw.close();
        await fake.close();
      }
    });
  }
});
