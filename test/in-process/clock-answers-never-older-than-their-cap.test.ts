// Answers that carry the wiki's clock (siteinfo's general.time, curtimestamp=1) were served 6.4 s
// and 10-11 s old: their TTL is capped at WIKIEDGE_TTL_CLOCK_SECONDS, but the grace window then
// served them stale while a refresh ran. Bot frameworks read the wiki's clock from them. Read
// repeatedly across what was the grace window, with a slow wiki, none is ever older than the
// cap + 1 s (Age, and the time it shows: MediaWiki's are whole seconds); only when the wiki is
// down is an older one served (stale-if-error), and its Age then says how old it is.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { randomUUID } from 'node:crypto';
import { describe, expect, it, vi } from 'vitest';
import { startHoldingUpstream } from '../support/fake-upstream.js';
import { gatewayOnFake } from '../support/gateway-on-fake.js';
import { MANY_CLIENTS_FROM_LOOPBACK, startGateway } from '../support/gateway.js';
import { header, http, type TestResponse } from '../support/http.js';

/** MediaWiki's TS_ISO_8601: whole seconds. */
const wikiTime = () => new Date().toISOString().replace(/\.\d+Z$/, 'Z');

/**
 * A stand-in wiki that reads its clock when a request arrives (ApiMain stamps curtimestamp
 * before the module runs) and answers `delayMs` later, public for 300 s as with smaxage=300.
 * `down`: it answers 503 instead.
 */
function clockWiki(state: { delayMs: number; down: boolean }) {
  return (req: IncomingMessage, res: ServerResponse) => {
    const time = wikiTime();
    const url = new URL(req.url ?? '/', 'http://wiki');
    const body = url.searchParams.has('curtimestamp')
      ? { batchcomplete: true, curtimestamp: time }
      : { batchcomplete: true, query: { general: { sitename: 'Wiki', time } } };
    setTimeout(() => {
      if (state.down) {
        res.writeHead(503, { 'content-type': 'text/plain' });
        res.end('down');
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'cache-control': 's-maxage=300, max-age=300, public' });
      res.end(JSON.stringify(body));
    }, state.delayMs);
  };
}

const SITEINFO = '?action=query&meta=siteinfo&siprop=general&format=json';
const CURTIMESTAMP = '?action=query&curtimestamp=1&format=json';

/** The wiki time an answer shows, in ms. */
function shownTime(res: TestResponse): number {
  const json = JSON.parse(res.body) as { curtimestamp?: string; query?: { general?: { time?: string } } };
  const t = json.curtimestamp ?? json.query?.general?.time;
  if (t === undefined) throw new Error(`no time in ${res.body}`);
  return Date.parse(t);
}

interface Read {
  readonly age: number;
  readonly clockAgeMs: number;
  readonly xCache: string | undefined;
}

async function read(url: string): Promise<Read> {
  const res = await http(url);
  const receivedAt = Date.now();
  expect(res.status).toBe(200);
  return { age: Number(header(res, 'age') ?? 0), clockAgeMs: receivedAt - shownTime(res), xCache: header(res, 'x-cache') };
}

describe('clock answers read across the grace window, from a slow wiki', () => {
  const CAP = 3;
  const wiki = { delayMs: 2_500, down: false };
  const ctx = gatewayOnFake(clockWiki(wiki), { ...MANY_CLIENTS_FROM_LOOPBACK, WIKIEDGE_TTL_CLOCK_SECONDS: String(CAP), WIKIEDGE_GRACE_SECONDS: '10' });

  it('are never older than the cap + 1 s: Age, and the time they show', async () => {
    const reads: Read[] = [];
    const until = Date.now() + 11_000;
    // Two clients per answer, so that some wait for another's fetch (coalesced).
    const client = async (url: string) => {
      while (Date.now() < until) {
        reads.push(await read(url));
        await sleep(150);
      }
    };
    await Promise.all([SITEINFO, SITEINFO, CURTIMESTAMP, CURTIMESTAMP].map((q) => client(`${ctx.gw.apiUrl}${q}`)));
    const dispositions = new Set(reads.map((r) => r.xCache));
    // Cached answers were read, and past their TTL (a miss or a wait for one after a hit).
    expect(dispositions.has('hit')).toBe(true);
    expect(ctx.fake.requests.length).toBeGreaterThanOrEqual(4);
    const oldest = reads.reduce((a, r) => (r.clockAgeMs > a.clockAgeMs ? r : a));
    expect(Math.max(...reads.map((r) => r.age))).toBeLessThanOrEqual(CAP + 1);
    // A little for the trip back to this client, which is not the gateway's.
    expect(oldest.clockAgeMs, JSON.stringify(oldest)).toBeLessThanOrEqual((CAP + 1) * 1000 + 200);
    expect(dispositions.has('stale')).toBe(false);
  }, 30_000);
});

describe('a clock answer when the wiki is down', () => {
  const CAP = 1;
  const wiki = { delayMs: 0, down: false };
  const ctx = gatewayOnFake(clockWiki(wiki), { ...MANY_CLIENTS_FROM_LOOPBACK, WIKIEDGE_TTL_CLOCK_SECONDS: String(CAP), WIKIEDGE_GRACE_SECONDS: '10' });

  it('is served past the cap only as stale-if-error, with its true Age', async () => {
    const url = `${ctx.gw.apiUrl}${CURTIMESTAMP}`;
    const askedAt = Date.now();
    const first = await http(url);
    expect(header(first, 'x-cache')).toBe('miss');
    wiki.down = true;
    await sleep((CAP + 1) * 1000 + 600);
    const stale = await http(url);
    const elapsed = Date.now() - askedAt;
    expect(header(stale, 'x-cache')).toBe('stale');
    expect(stale.body).toBe(first.body);
    expect(Number(header(stale, 'age'))).toBeGreaterThanOrEqual(CAP + 1);
    expect(Number(header(stale, 'age'))).toBeLessThanOrEqual(Math.floor(elapsed / 1000));
    wiki.down = false;
    const back = await http(url);
    expect(header(back, 'x-cache')).toBe('miss');
    expect(shownTime(back)).toBeGreaterThan(shownTime(first));
  }, 15_000);
});

describe('a clock answer past its cap, its client refused a turn (budget spent), the wiki up', () => {
  it('is not served stale: the client is told to come back (429)', async () => {
    let clock = 1_000_000;
    const fake = await startHoldingUpstream(clockWiki({ delayMs: 0, down: false }), (req) => req.url?.includes('hold=1') === true);
    const gw = await startGateway(
      fake.url,
      { WIKIEDGE_CLIENT_MISS_RATE: '1', WIKIEDGE_CLIENT_MISS_BURST: '1', WIKIEDGE_TTL_CLOCK_SECONDS: '2', WIKIEDGE_CLIENT_REFUSAL_DELAY_MS: '0' },
      { now: () => clock },
    );
    try {
      const url = `${gw.apiUrl}${CURTIMESTAMP}&r=${randomUUID()}`;
      expect(header(await http(url), 'x-cache')).toBe('miss');
      clock += 5_000;
      // Another request open: the client asks in parallel, its budget spent.
      const other = http(`${gw.apiUrl}?action=query&format=json&hold=1&bust=${randomUUID()}`);
      await vi.waitFor(() => expect(fake.held).toHaveLength(1));
      const answer = await http(url);
      expect(answer.status).toBe(429);
      fake.held[0]!();
      expect((await other).status).toBe(200);
    } finally {
      await gw.close();
      await fake.close();
    }
  });
});
