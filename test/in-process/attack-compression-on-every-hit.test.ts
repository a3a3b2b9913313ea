// Hits are never limited, and a hit must cost what a lookup costs. A client that refuses
// identity and takes only a coding the entry is not stored in (`br, identity;q=0` on an entry
// stored as gzip, whose br was never made: larger than the br upgrade takes) had that coding
// made on every hit: a 1 MB answer's br cost ~22 ms of CPU per hit, 35 times a gzip hit (the
// eleventh session's review). It is made once and kept (compression/representations.ts).
import { randomUUID } from 'node:crypto';
import { brotliDecompressSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeUpstream, type FakeUpstream } from '../support/fake-upstream.js';
import { MANY_CLIENTS_FROM_LOOPBACK, type RunningGateway, startGateway } from '../support/gateway.js';
import { request } from 'undici';

/** A public answer of ~600 KB that compresses well: above the size a br upgrade is made for. */
const LARGE = JSON.stringify({ query: { allmessages: Array.from({ length: 6000 }, (_, i) => ({ name: `message-${i}`, '*': `The text of message ${i}, as a wiki has thousands.` })) } });

async function brInputBytes(gw: RunningGateway): Promise<number> {
  const res = await request(`${gw.adminUrl}/metrics`);
  const body = await res.body.text();
  return Number(/^wikiedge_compression_input_bytes_total\{coding="br",stage="answer"\} (\d+)/m.exec(body)?.[1] ?? 0);
}

describe('a coding made for a client that refuses identity', () => {
  let fake: FakeUpstream;
  let gw: RunningGateway;
  beforeAll(async () => {
    fake = await startFakeUpstream((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'cache-control': 's-maxage=600, max-age=600, public' });
      res.end(LARGE);
    });
    gw = await startGateway(fake.url, MANY_CLIENTS_FROM_LOOPBACK);
  });
  afterAll(async () => {
    await gw?.close();
    await fake?.close();
  });

  it('is made once for the entry, not on every hit, and decodes to the answer', async () => {
    const url = `${gw.apiUrl}?action=query&meta=allmessages&amlimit=max&format=json&r=${randomUUID()}`;
    const first = await request(url, { headers: { 'accept-encoding': 'gzip' } });
    await first.body.dump();
    expect(first.headers['x-cache']).toBe('miss');
    const before = await brInputBytes(gw);
    for (let i = 0; i < 5; i++) {
      const hit = await request(url, { headers: { 'accept-encoding': 'br, identity;q=0' } });
      const body = Buffer.from(await hit.body.arrayBuffer());
      expect(hit.headers['x-cache']).toBe('hit');
      expect(hit.headers['content-encoding']).toBe('br');
      expect(brotliDecompressSync(body).toString()).toBe(LARGE);
    }
    // Made once: the answer's bytes went through br once, not five times.
    expect((await brInputBytes(gw)) - before).toBe(Buffer.byteLength(LARGE));
  });
});
