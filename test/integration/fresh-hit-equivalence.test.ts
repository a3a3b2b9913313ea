// Fresh local hits are answered before Fastify routes them (src/steps/fresh-hit.ts). Against the
// real wiki: that short path is really taken, sends byte for byte the header lines and body the
// full path sends for the same entry (only Date and X-Request-Id differ), and gives way to the
// full path for everything else (stale entries, purged entries, sessions, long targets).
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, inject, it, vi } from 'vitest';
import * as freshHit from '../../src/steps/fresh-hit.js';
import { type RunningGateway, startGateway } from '../support/gateway.js';
import { loginCookies, LAB_USER, LAB_USER_PASS } from '../support/wiki.js';
import { exchange, headerOf, stableHeaders } from '../support/raw-exchange.js';

const served = vi.hoisted(() => ({ fresh: [] as boolean[] }));
vi.mock('../../src/steps/fresh-hit.js', async (importOriginal) => {
  const original = await importOriginal<typeof freshHit>();
  return {
    ...original,
    serveFreshHit: (...args: Parameters<typeof original.serveFreshHit>) => {
      const answered = original.serveFreshHit(...args);
      served.fresh.push(answered);
      return answered;
    },
  };
});

const wiki = inject('wikiUrl');

const stable = stableHeaders;
const header = headerOf;

describe('fresh hits short path', () => {
  let gw: RunningGateway;
  let clock = Date.now();
  beforeAll(async () => {
    gw = await startGateway(wiki, { WIKIEDGE_LOG_HITS: 'true' }, { now: () => clock });
  });
  afterAll(() => gw.close());

  /** Fill the entry (a miss through the full path), then one request so the recv step is remembered. */
  async function cached(query: string, method = 'GET') {
    const target = `/w/api.php?${query}`;
    const miss = await exchange(gw.url, method, target);
    expect(header(miss, 'x-cache'), miss.statusLine).toBe('miss');
    return target;
  }

  it("answers a repeated anonymous request itself, with the full path's header lines and body", async () => {
    const target = await cached(`action=wbavailablebadges&format=json&requestid=${randomUUID()}`);
    served.fresh.length = 0;
    const short = await exchange(gw.url, 'GET', target);
    expect(served.fresh).toEqual([true]);
    // An unrelated cookie keeps the request anonymous (same entry) but out of the short path.
    const full = await exchange(gw.url, 'GET', target, { Cookie: 'unrelated=1' });
    expect(served.fresh).toEqual([true, false]);

    expect(short.statusLine).toBe('HTTP/1.1 200 OK');
    expect(full.statusLine).toBe(short.statusLine);
    expect(header(short, 'x-cache')).toBe('hit');
    expect(stable(short)).toEqual(stable(full));
    expect(short.body.equals(full.body)).toBe(true);
    expect(header(short, 'content-length')).toBe(String(short.body.length));
    expect(header(short, 'set-cookie')).toBeUndefined();
  });

  it.each([undefined, 'gzip', 'gzip, deflate, br', 'identity;q=0.5, gzip'])(
    'a compressed entry, Accept-Encoding %j: the full path`s representation, byte for byte',
    async (acceptEncoding) => {
      const target = await cached(`action=query&meta=siteinfo&siprop=namespaces&format=json&requestid=${randomUUID()}`);
      const ae: Record<string, string> = acceptEncoding === undefined ? {} : { 'Accept-Encoding': acceptEncoding };
      served.fresh.length = 0;
      const short = await exchange(gw.url, 'GET', target, ae);
      const full = await exchange(gw.url, 'GET', target, { ...ae, Cookie: 'unrelated=1' });
      expect(served.fresh).toEqual([true, false]);
      expect(stable(short)).toEqual(stable(full));
      expect(short.body.equals(full.body)).toBe(true);
      expect(header(short, 'content-length')).toBe(String(short.body.length));
      expect(header(short, 'content-encoding')).toBe(acceptEncoding?.includes('gzip') ? 'gzip' : undefined);
      expect(header(short, 'vary')).toMatch(/Accept-Encoding/);
    },
  );

  it('HEAD: the same header lines, no body', async () => {
    const target = await cached(`action=wbavailablebadges&format=json&requestid=${randomUUID()}`);
    served.fresh.length = 0;
    // Only the GET's recv step is remembered: the first HEAD of the target is not answered from
    // it (it goes the full way, which remembers it for HEAD from here on).
    const first = await exchange(gw.url, 'HEAD', target);
    expect(served.fresh).toEqual([false]);
    expect(first.body.length).toBe(0);
    served.fresh.length = 0;
    const short = await exchange(gw.url, 'HEAD', target);
    const full = await exchange(gw.url, 'HEAD', target, { Cookie: 'unrelated=1' });
    expect(served.fresh).toEqual([true, false]);
    expect(stable(short)).toEqual(stable(full));
    expect(short.body.length).toBe(0);
    expect(full.body.length).toBe(0);
  });

  it("keeps the client's request id and logs the hit like the full path does", async () => {
    const target = await cached(`action=wbavailablebadges&format=json&requestid=${randomUUID()}`);
    const short = await exchange(gw.url, 'GET', target, { 'X-Request-Id': 'edge-test-1' });
    const full = await exchange(gw.url, 'GET', target, { 'X-Request-Id': 'edge-test-2', Cookie: 'unrelated=1' });
    expect(header(short, 'x-request-id')).toBe('edge-test-1');
    expect(header(full, 'x-request-id')).toBe('edge-test-2');
    const line = (id: string) => {
      const found = gw.logs.find((l) => l['reqId'] === id && l['msg'] === 'request');
      expect(found).toBeDefined();
      const { reqId: _id, time: _t, timeIso: _ti, ms: _ms, pid: _p, hostname: _h, bytesIn: _in, ...rest } = found!;
      return rest;
    };
    expect(line('edge-test-1')).toEqual(line('edge-test-2'));
    // The bytes received differ by the full path's extra header, and only by it.
    const bytesIn = (id: string) => gw.logs.find((l) => l['reqId'] === id && l['msg'] === 'request')!['bytesIn'] as number;
    expect(bytesIn('edge-test-2') - bytesIn('edge-test-1')).toBe('Cookie: unrelated=1\r\n'.length);
  });

  it('gives way to the full path once the entry is past its TTL (stale while revalidating)', async () => {
    const target = await cached(`action=wbavailablebadges&format=json&requestid=${randomUUID()}`);
    served.fresh.length = 0;
    clock += 3_601_000; // wbavailablebadges: s-maxage=3600
    try {
      const stale = await exchange(gw.url, 'GET', target);
      expect(served.fresh).toEqual([false]);
      expect(header(stale, 'x-cache')).toBe('stale');
    } finally {
      clock -= 3_601_000;
    }
  });

  it('gives way after a PURGE: the next request is a miss', async () => {
    const target = await cached(`action=wbavailablebadges&format=json&requestid=${randomUUID()}`);
    await exchange(gw.url, 'PURGE', target);
    served.fresh.length = 0;
    const after = await exchange(gw.url, 'GET', target);
    expect(served.fresh).toEqual([false]);
    expect(header(after, 'x-cache')).toBe('miss');
  });

  it('never answers a session holder, even for an entry it holds for anonymous users', async () => {
    const target = await cached(`action=wbavailablebadges&format=json&requestid=${randomUUID()}`);
    const cookies = await loginCookies(wiki, LAB_USER, LAB_USER_PASS);
    served.fresh.length = 0;
    const asUser = await exchange(gw.url, 'GET', target, { Cookie: cookies });
    expect(served.fresh).toEqual([false]);
    expect(header(asUser, 'x-cache')).not.toBe('hit');
  });
});
