// A miss is answered before its entry is compressed and stored (steps/flow.ts fetchAndStore):
// the store's gzip and write never delay the client. Held here by a storage whose store() does
// not return until the test lets it: the client still gets its answer, X-Cache `miss`; an
// identical request meanwhile waits for the entry (coalesced), and the entry is a hit afterwards.
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { answerPublic } from '../support/fake-upstream.js';
import { gatewayOnFake } from '../support/gateway-on-fake.js';
import { header, http } from '../support/http.js';

const BODY = JSON.stringify({ batchcomplete: true, query: { pages: Array.from({ length: 40 }, (_, i) => ({ title: `Page ${i}`, pageid: i })) } });

describe('a miss answers before its store', () => {
  const pair = gatewayOnFake(answerPublic(BODY));

  it('an identity client gets the answer while the store is held; the entry is stored (as gzip) once it is let go', async () => {
    const storage = pair.gw.built.gateway.storage;
    const store = storage.store.bind(storage);
    let letGo!: () => void;
    const held = new Promise<void>((resolve) => (letGo = resolve));
    let storing = 0;
    storage.store = async (...args) => {
      storing++;
      await held;
      return store(...args);
    };
    try {
      const url = `${pair.gw.apiUrl}?action=query&list=allpages&format=json&requestid=${randomUUID()}`;
      const miss = await http(url);
      expect(miss.status).toBe(200);
      expect(header(miss, 'x-cache')).toBe('miss');
      expect(header(miss, 'content-encoding')).toBeUndefined();
      expect(miss.body).toBe(BODY);
      expect(header(miss, 'vary')).toMatch(/Accept-Encoding/);
      // The store began, and is still held: the answer did not wait for it.
      expect(storing).toBe(1);
      // An identical request now waits for the entry the first is storing.
      const waiter = http(url, { headers: { 'accept-encoding': 'gzip' } });
      letGo();
      const coalesced = await waiter;
      expect(['coalesced', 'hit']).toContain(header(coalesced, 'x-cache'));
      const hit = await http(url, { headers: { 'accept-encoding': 'gzip' } });
      expect(header(hit, 'x-cache')).toBe('hit');
      expect(header(hit, 'content-encoding')).toBe('gzip');
      expect(pair.fake.requests.length).toBe(1);
    } finally {
      letGo();
      storage.store = store;
    }
  });
});
