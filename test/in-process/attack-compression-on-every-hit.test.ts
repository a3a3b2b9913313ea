// Hits are never limited, and a hit must cost what a lookup costs. A client that refuses
// identity and takes only a coding the entry is not stored in (`br, identity;q=0` on an entry
// stored as gzip, whose br was never made: larger than the br upgrade takes) had that coding
// made on every hit: a 1 MB answer's br cost ~22 ms of CPU per hit, 35 times a gzip hit (fixed
// in commit 1b3dbac); kept once made, it was evicted again by a client cycling through
// 40 such entries (fixed in commit c54137f). A large answer gets 406 instead (steps/deliver.ts
// tooCostlyForAHit); a small one is made once and kept (compression/representations.ts).
import { randomUUID } from 'node:crypto';
import { brotliDecompressSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeUpstream, type FakeUpstream } from '../support/fake-upstream.js';
import { MANY_CLIENTS_FROM_LOOPBACK, type RunningGateway, startGateway } from '../support/gateway.js';
import { request } from 'undici';

/** A public answer of ~5 KB: compressed when stored, below the size a made coding is refused at. */
const SMALL = JSON.stringify({ query: { general: { text: 'A small answer that compresses well. '.repeat(120) } } });
/** A public answer of ~600 KB that compresses well: above the size a br upgrade is made for. */
const LARGE = JSON.stringify({
  query: { allmessages: Array.from({ length: 6000 }, (_, i) => ({ name: `message-${i}`, '*': `The text of message ${i}, as a wiki has thousands.` })) },
});

async function brInputBytes(gw: RunningGateway): Promise<number> {
  const res = await request(`${gw.adminUrl}/metrics`);
  const body = await res.body.text();
  return Number(/^wikiedge_compression_input_bytes_total\{coding="br",stage="answer"\} (\d+)/m.exec(body)?.[1] ?? 0);
}

describe('a coding made for a client that refuses identity', () => {
  let fake: FakeUpstream;
  let gw: RunningGateway;
  beforeAll(async () => {
    fake = await startFakeUpstream((req, res) => {
      res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'cache-control': 's-maxage=600, max-age=600, public' });
      res.end(req.url?.includes('small=1') ? SMALL : LARGE);
    });
    gw = await startGateway(fake.url, MANY_CLIENTS_FROM_LOOPBACK);
  });
  afterAll(async () => {
    await gw?.close();
    await fake?.close();
  });

  it('a large answer: 406 on every hit, nothing compressed, whatever the entries cycled through', async () => {
    const before = await brInputBytes(gw);
    for (let n = 0; n < 3; n++) {
      const url = `${gw.apiUrl}?action=query&meta=allmessages&amlimit=max&format=json&r=${randomUUID()}`;
      const first = await request(url, { headers: { 'accept-encoding': 'gzip' } });
      await first.body.dump();
      expect(first.headers['x-cache']).toBe('miss');
      for (let i = 0; i < 3; i++) {
        const hit = await request(url, { headers: { 'accept-encoding': 'br, identity;q=0' } });
        const body = JSON.parse(await hit.body.text()) as { error: { code: string } };
        expect(hit.statusCode).toBe(406);
        expect(hit.headers['vary']).toBe('Accept-Encoding');
        expect(body.error.code).toBe('wikiedge-not-acceptable');
      }
      // The same client taking gzip is served the stored form.
      const gzip = await request(url, { headers: { 'accept-encoding': 'gzip' } });
      await gzip.body.dump();
      expect([gzip.statusCode, gzip.headers['x-cache'], gzip.headers['content-encoding']]).toEqual([200, 'hit', 'gzip']);
    }
    expect((await brInputBytes(gw)) - before).toBe(0);
  });

  it('a small answer: made once for the entry, not on every hit, and decodes to the answer', async () => {
    const url = `${gw.apiUrl}?action=query&meta=siteinfo&format=json&small=1&r=${randomUUID()}`;
    const first = await request(url, { headers: { 'accept-encoding': 'gzip' } });
    await first.body.dump();
    const before = await brInputBytes(gw);
    for (let i = 0; i < 5; i++) {
      const hit = await request(url, { headers: { 'accept-encoding': 'br, identity;q=0' } });
      const body = Buffer.from(await hit.body.arrayBuffer());
      expect([hit.statusCode, hit.headers['x-cache'], hit.headers['content-encoding']]).toEqual([200, 'hit', 'br']);
      expect(brotliDecompressSync(body).toString()).toBe(SMALL);
    }
    expect((await brInputBytes(gw)) - before).toBe(Buffer.byteLength(SMALL));
  });
});
