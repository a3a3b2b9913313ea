// Operations, round 2: the per-client limits are keyed as MediaWiki keys its own rate limits
// (limits/client-key.ts): a session holder by its session (its user once known), an anonymous
// client by its address (IPv6 by /64). Bots behind one NAT each get their own budgets; anonymous
// clients there share one; made-up sessions from one address share their address's group.
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { describe, expect, it } from 'vitest';
import { clientKey, addressKey } from '../../src/limits/client-key.js';
import { startFakeUpstream } from '../support/fake-upstream.js';
import { startGateway } from '../support/gateway.js';
import { http } from '../support/http.js';

/** A wiki that takes 20 ms per request and answers privately: every request is uncached. */
function slowPrivate(_req: IncomingMessage, res: ServerResponse): void {
  setTimeout(() => {
    res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'private, must-revalidate, max-age=0' });
    res.end('{"batchcomplete":true}');
  }, 20);
}

/** `streams` requests at a time, `each` one after another in every stream; the statuses. */
async function work(apiUrl: string, cookie: string | undefined, streams: number, each: number): Promise<number[]> {
  const statuses: number[] = [];
  await Promise.all(
    Array.from({ length: streams }, async () => {
      for (let i = 0; i < each; i++) {
        const res = await http(`${apiUrl}?action=query&list=recentchanges&format=json&r=${randomUUID()}`, {
          headers: cookie === undefined ? {} : { cookie },
        });
        statuses.push(res.status);
      }
    }),
  );
  return statuses;
}

describe('three clients from one address at the defaults', () => {
  it('three clients from one address (two sessions, one anonymous) asking in parallel at the defaults get no 429', async () => {
    const fake = await startFakeUpstream(slowPrivate);
    // The defaults: 8 in flight per client, 20 uncached a second with a burst of 100.
    const gw = await startGateway(fake.url, { WIKIEDGE_CLIENT_REFUSAL_DELAY_MS: '0' });
    try {
      // Each client 6 at a time, 90 requests: together 18 at a time and 270 requests, over what
      // one address's budgets allow (8, 100), each within its own.
      const results = await Promise.all([
        work(gw.apiUrl, `wiki_session=${'a'.repeat(32)}`, 6, 15),
        work(gw.apiUrl, `wiki_session=${'b'.repeat(32)}`, 6, 15),
        work(gw.apiUrl, undefined, 6, 15),
      ]);
      for (const statuses of results) {
        expect(statuses.length).toBe(90);
        expect(statuses.filter((s) => s !== 200)).toEqual([]);
      }
    } finally {
      await gw.close();
      await fake.close();
    }
  });

  it('the same work from three anonymous clients on that address is limited: they are one client', async () => {
    const fake = await startFakeUpstream(slowPrivate);
    const gw = await startGateway(fake.url, { WIKIEDGE_CLIENT_REFUSAL_DELAY_MS: '0' });
    try {
      const statuses = (await Promise.all([work(gw.apiUrl, undefined, 6, 15), work(gw.apiUrl, undefined, 6, 15), work(gw.apiUrl, undefined, 6, 15)])).flat();
      expect(statuses.filter((s) => s === 429).length).toBeGreaterThan(0);
    } finally {
      await gw.close();
      await fake.close();
    }
  });
});

describe('a flood that makes up a session for every request', () => {
  it('is limited by its address: the sessions of one address share WIKIEDGE_CLIENT_SESSIONS_PER_ADDRESS times one budget', async () => {
    let asked = 0;
    const fake = await startFakeUpstream((req, res) => {
      asked++;
      slowPrivate(req, res);
    });
    const gw = await startGateway(fake.url, {
      WIKIEDGE_CLIENT_MISS_RATE: '1',
      WIKIEDGE_CLIENT_MISS_BURST: '5',
      WIKIEDGE_CLIENT_SESSIONS_PER_ADDRESS: '2',
      WIKIEDGE_CLIENT_REFUSAL_DELAY_MS: '0',
    });
    try {
      const statuses: number[] = [];
      const started = performance.now();
      await Promise.all(
        Array.from({ length: 4 }, async () => {
          for (let i = 0; i < 15; i++) {
            const res = await http(`${gw.apiUrl}?action=query&meta=userinfo&format=json&r=${randomUUID()}`, {
              headers: { cookie: `wiki_session=${randomUUID().replaceAll('-', '')}` },
            });
            statuses.push(res.status);
          }
        }),
      );
      expect(statuses.filter((s) => s === 429).length).toBeGreaterThan(30);
      // The group's burst (2 × 5) and its refill (2 a second) over 5 s, or over the flood's
      // measured duration when a busy machine makes it longer and the budget refills more; and
      // one more per stream: a request that finds none of its group's under way is in series,
      // never refused (steps/admission.ts budgetLeft). Seen: 22 asked within 5 s once a miss
      // answered before its store (steps/flow.ts fetchAndStore), 16-20 before.
      const seconds = Math.max(5, (performance.now() - started) / 1000);
      expect(asked).toBeLessThanOrEqual(10 + Math.ceil(2 * seconds) + 4);
    } finally {
      await gw.close();
      await fake.close();
    }
  });
});

describe('client keys', () => {
  const anonymous = { kind: 'anonymous', loginSuppressed: false, carriesCredentials: false } as const;
  const session = { kind: 'session', slot: 'slot-1', variant: 'v', unknownCredential: false } as const;

  it('an anonymous client by its address, IPv6 by its /64', () => {
    expect(clientKey('203.0.113.7', anonymous, () => undefined)).toEqual({ key: '203.0.113.7', group: '' });
    expect(addressKey('2001:db8:1:2:aaaa:bbbb:cccc:dddd')).toBe('2001:db8:1:2::/64');
    expect(addressKey('2001:db8:1:2::7')).toBe('2001:db8:1:2::/64');
    expect(addressKey('2001:DB8::1')).toBe('2001:db8:0:0::/64');
    expect(addressKey('::1')).toBe('0:0:0:0::/64');
    expect(addressKey('fe80::1%eth0')).toBe('fe80:0:0:0::/64');
    expect(addressKey('::ffff:192.0.2.1')).toBe('0:0:0:0::/64');
  });

  it('a session by its slot, by its user once known; grouped by its address', () => {
    expect(clientKey('2001:db8:1:2::7', session, () => undefined)).toEqual({ key: 's:slot-1', group: 'g:2001:db8:1:2::/64' });
    expect(clientKey('203.0.113.7', session, (slot) => (slot === 'slot-1' ? 'BotUser' : undefined))).toEqual({ key: 'u:BotUser', group: 'g:203.0.113.7' });
  });
});
