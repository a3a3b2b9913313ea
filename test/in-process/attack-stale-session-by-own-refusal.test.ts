// A session's entry past its TTL was still a fallback (stale-if-error, 300 s) whenever the gateway
// refused the request a turn, and its holder could bring that about by keeping another request
// open (its budget then spent): after a logout made straight at the wiki, the old cookie got the
// session's private answer 200 s later, the wiki never asked (fixed in commit 0456fff). A
// session's entry is now never served past its TTL.
import { randomUUID } from 'node:crypto';
import { describe, expect, it, vi } from 'vitest';
import { startHoldingUpstream } from '../support/fake-upstream.js';
import { startGateway } from '../support/gateway.js';
import { header, http } from '../support/http.js';

describe('a session entry past its TTL, its holder refused a turn on purpose', () => {
  it('is not served', async () => {
    let clock = 1_000_000;
    const fake = await startHoldingUpstream(
      (_req, res) => {
        res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'private, must-revalidate, max-age=0' });
        res.end('{"query":{"userinfo":{"id":1,"name":"Admin"}}}');
      },
      (req) => req.url?.includes('hold=1') === true,
    );
    const held = fake.held;
    const gw = await startGateway(
      fake.url,
      {
        WIKIEDGE_CLIENT_MISS_RATE: '1',
        WIKIEDGE_CLIENT_MISS_BURST: '1',
        WIKIEDGE_TTL_SESSION_SECONDS: '10',
        WIKIEDGE_STALE_IF_ERROR_SECONDS: '300',
        WIKIEDGE_CLIENT_REFUSAL_DELAY_MS: '0',
      },
      { now: () => clock },
    );
    const cookie = 'wiki_session=abcdefabcdefabcdefabcdefabcdefab';
    try {
      const url = `${gw.apiUrl}?action=query&meta=userinfo&format=json&r=${randomUUID()}`;
      expect(header(await http(url, { headers: { cookie } }), 'x-cache')).toBe('miss');
      clock += 200_000;
      // Another request of the session open: the client (keyed by its session,
      // limits/client-key.ts) asks in parallel, its budget spent.
      const other = http(`${gw.apiUrl}?action=query&format=json&hold=1&bust=${randomUUID()}`, { headers: { cookie } });
      await vi.waitFor(() => expect(held).toHaveLength(1));
      const answer = await http(url, { headers: { cookie } });
      expect(answer.status).toBe(429);
      expect(answer.body).not.toContain('Admin');
      held[0]!();
      expect((await other).status).toBe(200);
    } finally {
      await gw.close();
      await fake.close();
    }
  });
});
