// Attack class 63: a client keeps its own entries fresh, and the wiki busy, with hits. A hit on
// an entry in its grace window starts one refresh in the background (steps/flow.ts
// refreshInBackground), and hits are never limited. The refresh was charged to nobody: neither
// the client's budget of uncached requests nor its budget of bytes stored. One anonymous address
// storing what its budget allows, then polling its URLs, had every one refreshed, stored again and
// kept ahead of everyone else's in the tier (class 35 by another way), and had the wiki answer as
// many refreshes at once as it had URLs in grace, while asking in series itself. A refresh now
// takes a token of the budget of uncached requests of the client whose hit starts it
// (steps/admission.ts refreshTurn), and is led only when that client's store budget takes the
// entry; else the entry is served stale and left to another client's hit, or to expire.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { type FakeUpstream, startFakeUpstream, startHoldingUpstream } from '../support/fake-upstream.js';
import { type RunningGateway, startGateway } from '../support/gateway.js';
import { header, http } from '../support/http.js';
import { REFRESHES_PER_CLIENT } from '../../src/steps/admission.js';

/** 200 KB, public for 60 s. */
const BODY = JSON.stringify({ batchcomplete: true, filler: 'x'.repeat(200_000) });
function publicAnswer(_req: IncomingMessage, res: ServerResponse): void {
  res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'cache-control': 's-maxage=60, max-age=0, public' });
  res.end(BODY);
}

/** Clients told apart by X-Forwarded-For, from the loopback proxy the default WIKIEDGE_TRUSTED_PROXIES trusts. */
const from = (address: string) => ({ headers: { 'x-forwarded-for': address } });
const ATTACKER = '198.51.100.7';
const OTHER = '192.0.2.1';

describe('attack: grace refreshes charged to nobody (class 63)', () => {
  let clock = Date.parse('2026-03-01T12:00:00Z');
  let fake: FakeUpstream | undefined;
  let gw: RunningGateway | undefined;
  afterEach(async () => {
    await gw?.close();
    await fake?.close();
    gw = undefined;
    fake = undefined;
  });
  const url = (n: number) => `${gw!.apiUrl}?action=query&list=allpages&format=json&page=${n}`;
  const notStoredForBudget = async () => (await gw!.built.gateway.metrics.notStored.get()).values.find((v) => v.labels.reason === 'client-budget')?.value ?? 0;
  /** Refreshes asked of the wiki: counted as each is sent, before the hit that started it is answered. */
  const refreshes = async () => (await gw!.built.gateway.metrics.upstreamRequests.get()).values.find((v) => v.labels.reason === 'refresh')?.value ?? 0;

  it('a refresh is stored within the budget of the client whose hit started it; another client`s hit refreshes on its own', async () => {
    fake = await startFakeUpstream(publicAnswer);
    // A 1 MiB tier: the store budget's burst is 128 KiB (an eighth), and a full bucket takes one
    // 200 KB entry into debt; 61 s at 1 KB/s do not pay it back.
    gw = await startGateway(
      fake.url,
      { WIKIEDGE_CLIENT_STORE_BYTES_PER_SECOND: '1000', WIKIEDGE_CACHE_SHARED_MAX_BYTES: String(1024 * 1024) },
      { now: () => clock },
    );
    expect(header(await http(url(1), from(ATTACKER)), 'x-cache')).toBe('miss');
    expect(header(await http(url(1), from(ATTACKER)), 'x-cache')).toBe('hit');

    clock += 61_000; // past the TTL, within the 10 s grace
    const asked = await refreshes();
    // Its store budget would not take the entry: served stale, and no refresh led for an answer
    // that would not be stored (the lead would keep the others' hits from starting one).
    expect(header(await http(url(1), from(ATTACKER)), 'x-cache')).toBe('stale');
    expect(header(await http(url(1), from(ATTACKER)), 'x-cache')).toBe('stale');
    expect(await refreshes()).toBe(asked);
    expect(await notStoredForBudget()).toBe(0);

    // Another client's hit starts a refresh charged to its own budget: stored.
    await expect.poll(async () => header(await http(url(1), from(OTHER)), 'x-cache')).toBe('hit');
  });

  it('a refresh takes a token of the client`s budget of uncached requests: spent, its hits start none; and it asks in series still', async () => {
    let holding = false;
    const holdingFake = await startHoldingUpstream(publicAnswer, (req) => holding && !String(req.url).includes('page=99'));
    fake = holdingFake;
    // One uncached request in parallel at most; stores not limited here.
    gw = await startGateway(
      fake.url,
      { WIKIEDGE_CLIENT_MISS_RATE: '1', WIKIEDGE_CLIENT_MISS_BURST: '1', WIKIEDGE_CLIENT_STORE_BYTES_PER_SECOND: '0' },
      { now: () => clock },
    );
    for (let n = 1; n <= 5; n++) expect(header(await http(url(n), from(ATTACKER)), 'x-cache')).toBe('miss');
    clock += 61_000;
    holding = true;
    const asked = await refreshes();
    // In series, each hit answered at once, stale: before, five refreshes at the wiki at once.
    for (let n = 1; n <= 5; n++) expect(header(await http(url(n), from(ATTACKER)), 'x-cache')).toBe('stale');
    // The first took the bucket's one token (refilled over the 61 s); the others found none,
    // in series as in parallel.
    expect(await refreshes()).toBe(asked + 1);
    for (let n = 1; n <= 5; n++) expect(header(await http(url(n), from(ATTACKER)), 'x-cache')).toBe('stale');
    expect(await refreshes()).toBe(asked + 1);
    // The refresh under way is not the client's own request: asking in series, its next miss is
    // answered, not refused (a bot's hit in grace must not turn its next request into a 429).
    const next = await http(url(99), from(ATTACKER));
    expect(next.status).toBe(200);
    expect(header(next, 'x-cache')).toBe('miss');
    holding = false;
    for (const send of holdingFake.held.splice(0)) send();
  });

  it('a client with tokens to spare has at most REFRESHES_PER_CLIENT refreshes under way: its hits do not fill the wiki`s turns', async () => {
    let holding = false;
    const holdingFake = await startHoldingUpstream(publicAnswer, () => holding);
    fake = holdingFake;
    gw = await startGateway(fake.url, { WIKIEDGE_CLIENT_STORE_BYTES_PER_SECOND: '0' }, { now: () => clock });
    for (let n = 1; n <= 6; n++) expect(header(await http(url(n), from(ATTACKER)), 'x-cache')).toBe('miss');
    clock += 61_000;
    holding = true;
    const asked = await refreshes();
    for (let n = 1; n <= 6; n++) expect(header(await http(url(n), from(ATTACKER)), 'x-cache')).toBe('stale');
    expect(await refreshes()).toBe(asked + REFRESHES_PER_CLIENT);
    // Another client's hit refreshes on its own count.
    expect(header(await http(url(6), from(OTHER)), 'x-cache')).toBe('stale');
    expect(await refreshes()).toBe(asked + REFRESHES_PER_CLIENT + 1);
    holding = false;
    for (const send of holdingFake.held.splice(0)) send();
  });
});
