// Security round 2, class 5: the wiki protected from slow and cache-busting clients.
// - Slow bodies (slowloris on the body): a handful of connections sending a POST body at a byte
//   a second pinned the wiki (php -S has 4 workers here) and the upstream pool; every uncached
//   request hung. Bodies are now read before a request takes a turn at the wiki, and cut off
//   after WIKIEDGE_CLIENT_REQUEST_TIMEOUT_MS.
// - A cache-busting flood (a random parameter on every request) spends its client's budget of
//   uncached requests and then gets 429 with Retry-After, in MediaWiki's error shape; hits are
//   never limited, and other clients go on.
// - The wiki's turns are bounded: a full queue or a long wait is 503 with Retry-After, and a
//   waiter whose client has gone never reaches the wiki.
import { randomUUID } from 'node:crypto';
import net from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from 'vitest';
import { type FakeUpstream, startFakeUpstream } from '../support/fake-upstream.js';
import { type RunningGateway, startGateway } from '../support/gateway.js';
import { header, http } from '../support/http.js';
import { upstreamRequests } from '../support/wiki.js';

const wiki = inject('wikiUrl');
const wikiData = inject('wikiData');

/** Open a POST to `url` that announces `length` bytes and sends one every `everyMs`. */
function slowPost(url: string, length: number, everyMs: number): { socket: net.Socket; closed: Promise<string> } {
  const { hostname, port, pathname, search } = new URL(url);
  const socket = net.connect(Number(port), hostname);
  let answer = '';
  socket.on('data', (c) => (answer += c.toString('latin1')));
  socket.on('error', () => undefined);
  socket.write(
    `POST ${pathname}${search} HTTP/1.1\r\nHost: ${hostname}\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: ${length}\r\n\r\n`,
  );
  const timer = setInterval(() => socket.write('a'), everyMs);
  const closed = new Promise<string>((resolve) =>
    socket.on('close', () => {
      clearInterval(timer);
      resolve(answer);
    }),
  );
  return { socket, closed };
}

describe('slow request bodies never reach the wiki', () => {
  let gw: RunningGateway;
  beforeAll(async () => {
    gw = await startGateway(wiki, { WIKIEDGE_CLIENT_REQUEST_TIMEOUT_MS: '8000', WIKIEDGE_CLIENT_HEADERS_TIMEOUT_MS: '2000' });
  });
  afterAll(() => gw.close());

  it('eight clients dribbling a POST body leave the wiki free, and are cut off with 408', async () => {
    const marker = randomUUID();
    const slow = Array.from({ length: 8 }, () => slowPost(`${gw.apiUrl}?action=query&format=json&slow=${marker}`, 10_000, 200));
    await sleep(500);
    // An uncached request from someone else is answered at once: no PHP worker is pinned.
    const started = Date.now();
    const res = await http(`${gw.apiUrl}?action=query&meta=siteinfo&format=json&requestid=${randomUUID()}`);
    expect(res.status).toBe(200);
    // (Pinned PHP workers would hold it until the slow clients are cut off, 8 s from now.)
    expect(Date.now() - started).toBeLessThan(6_000);
    // Cut off once the request timeout is over (Node's 408), never forwarded.
    const answers = await Promise.all(slow.map((s) => s.closed));
    for (const a of answers) expect(a === '' || a.startsWith('HTTP/1.1 408')).toBe(true);
    expect((await upstreamRequests(wikiData)).filter((l) => l.includes(marker))).toEqual([]);
  });

  it('a client that sends its headers slowly is cut off too', async () => {
    const { port } = new URL(gw.url);
    const socket = net.connect(Number(port), '127.0.0.1');
    socket.on('error', () => undefined);
    socket.write('GET /w/api.php?action=query HTTP/1.1\r\nHost: x\r\n');
    const timer = setInterval(() => socket.write('X-A: b\r\n'), 300);
    const closedAfter = await new Promise<number>((resolve) => {
      const t0 = Date.now();
      socket.on('close', () => resolve(Date.now() - t0));
    });
    clearInterval(timer);
    expect(closedAfter).toBeLessThan(6_000);
  });
});

/** Flood requests a busy host may take one at a time, none of the client's others under way. */
const SERIAL_MARGIN = 3;

describe('a cache-busting flood spends its own budget', () => {
  let gw: RunningGateway;
  beforeAll(async () => {
    // Refused at once: this is about the budget's arithmetic; the delay has its own test
    // (test/in-process/attack-refusal-retry-loop.test.ts).
    gw = await startGateway(wiki, {
      WIKIEDGE_CLIENT_MISS_RATE: '2',
      WIKIEDGE_CLIENT_MISS_BURST: '10',
      WIKIEDGE_TRUSTED_PROXIES: '127.0.0.1',
      WIKIEDGE_CLIENT_REFUSAL_DELAY_MS: '0',
    });
  });
  afterAll(() => gw.close());

  const as = (ip: string) => ({ 'x-forwarded-for': ip });

  it('after its burst a flooder gets 429 with Retry-After, in MediaWiki`s error shape; the wiki sees no more', async () => {
    const cached = `${gw.apiUrl}?action=query&meta=siteinfo&format=json&uselang=content&requestid=${randomUUID()}`;
    await http(cached, { headers: as('198.51.100.1') });
    const marker = randomUUID();
    const before = (await upstreamRequests(wikiData)).length;
    const t0 = Date.now();
    // All at once, on 40 connections: a flood asks in parallel (a client in series is never
    // refused, limits/client-budget.ts).
    const answers = await Promise.all(
      Array.from({ length: 40 }, (_, i) => http(`${gw.apiUrl}?action=query&list=allpages&format=json&bust=${marker}-${i}`, { headers: as('203.0.113.66') })),
    );
    // The burst (10) plus what 2 per second refilled while the flood ran: however slow this machine.
    // And a few more: a request that finds none of the client's others under way is never refused
    // (limits/client-budget.ts, clients in series), and on a busy host the gateway may take a few
    // of the 40 one at a time (a hogged CI run admitted 13 where this said 12).
    const allowed = 10 + Math.ceil(((Date.now() - t0) / 1000) * 2) + 1 + SERIAL_MARGIN;
    const limited = answers.filter((a) => a.status === 429);
    expect(limited.length).toBeGreaterThanOrEqual(40 - allowed);
    expect(limited.length).toBeGreaterThan(0);
    const first = limited[0]!;
    expect(Number(header(first, 'retry-after'))).toBeGreaterThanOrEqual(1);
    expect(header(first, 'mediawiki-api-error')).toBe('wikiedge-rate-limited');
    expect(JSON.parse(first.body).error.code).toBe('wikiedge-rate-limited');
    const reached = (await upstreamRequests(wikiData)).slice(before).filter((l) => l.includes(marker));
    expect(reached.length).toBeLessThanOrEqual(allowed);
    // Its hits are never limited, and another client's misses go on.
    const hit = await http(cached, { headers: as('203.0.113.66') });
    expect(header(hit, 'x-cache')).toBe('hit');
    const other = await http(`${gw.apiUrl}?action=query&list=allpages&format=json&bust=${randomUUID()}`, { headers: as('198.51.100.2') });
    expect(other.status).toBe(200);
    const metrics = (await http(`${gw.adminUrl}/metrics`)).body;
    expect(metrics).toMatch(/wikiedge_upstream_rejected_total\{reason="client-budget"\} [1-9]/);
  });
});

describe('bounded turns at the wiki', () => {
  let fake: FakeUpstream;
  let gw: RunningGateway;
  const stalls: (() => void)[] = [];
  beforeAll(async () => {
    fake = await startFakeUpstream((req, res) => {
      const answer = () => {
        res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'private, must-revalidate, max-age=0' });
        res.end('{}');
      };
      if (req.url?.includes('stall')) stalls.push(answer);
      else answer();
    });
    gw = await startGateway(fake.url, {
      WIKIEDGE_UPSTREAM_MAX_CONCURRENCY: '1',
      WIKIEDGE_UPSTREAM_QUEUE_MAX: '2',
      WIKIEDGE_UPSTREAM_QUEUE_TIMEOUT_MS: '400',
      WIKIEDGE_CLIENT_MAX_CONCURRENCY: '0',
      WIKIEDGE_CLIENT_REFUSAL_DELAY_MS: '0',
    });
  });
  afterEach(() => {
    for (const answer of stalls.splice(0)) answer();
  });
  afterAll(async () => {
    await gw.close();
    await fake.close();
  });

  it('past the queue: 503 at once; past the queue timeout: 503; both with Retry-After', async () => {
    const holder = http(`${gw.apiUrl}?action=query&format=json&stall=1`);
    await sleep(100);
    const queued = [1, 2].map((i) => http(`${gw.apiUrl}?action=query&format=json&q=${i}`));
    await sleep(50);
    const refused = await http(`${gw.apiUrl}?action=query&format=json&q=3`);
    expect(refused.status).toBe(503);
    expect(header(refused, 'retry-after')).toBeDefined();
    expect(header(refused, 'mediawiki-api-error')).toBe('wikiedge-overloaded');
    for (const q of await Promise.all(queued)) {
      expect(q.status).toBe(503);
      expect(header(q, 'retry-after')).toBeDefined();
    }
    stalls.shift()?.();
    expect((await holder).status).toBe(200);
  });

  it('waiters whose clients have gone never reach the wiki', async () => {
    const before = fake.requests.length;
    const holder = http(`${gw.apiUrl}?action=query&format=json&stall=2`);
    await sleep(100);
    // Two clients queue, then leave.
    const leavers = [1, 2].map(() => {
      const c = new AbortController();
      const p = http(`${gw.apiUrl}?action=query&format=json&gone=${randomUUID()}`, { signal: c.signal }).catch(() => undefined);
      return { c, p };
    });
    await sleep(100);
    for (const l of leavers) l.c.abort();
    await Promise.all(leavers.map((l) => l.p));
    await sleep(50);
    stalls.shift()?.();
    await holder;
    await sleep(100);
    const sent = fake.requests.slice(before).map((r) => r.url ?? '');
    expect(sent.filter((u) => u.includes('gone='))).toEqual([]);
    expect(gw.built.gateway.gate.queued).toBe(0);
    expect(gw.built.gateway.gate.active).toBe(0);
  });
});
