// A miss is answered before its entry is stored (steps/flow.ts fetchAndStore). A purge of its
// URL that lands after the answer went out but before the store finished must win: the entry
// is not kept, and the next request is a miss that asks the wiki again (storage.ts store's guard
// against the mark taken before the fetch).
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { describe, expect, it } from 'vitest';
import { gatewayOnFake } from '../support/gateway-on-fake.js';
import { header, http } from '../support/http.js';

const BODY = JSON.stringify({ batchcomplete: true, query: { pages: Array.from({ length: 40 }, (_, i) => ({ title: `Page ${i}`, pageid: i })) } });

function publicAnswer(_req: IncomingMessage, res: ServerResponse): void {
  res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'cache-control': 's-maxage=300, max-age=300, public' });
  res.end(BODY);
}

describe('a purge while a miss is being stored', () => {
  const pair = gatewayOnFake(publicAnswer);

  it('the entry is not kept: the next request asks the wiki again', async () => {
    const storage = pair.gw.built.gateway.storage;
    const store = storage.store.bind(storage);
    let letGo!: () => void;
    const held = new Promise<void>((resolve) => (letGo = resolve));
    let storing!: () => void;
    const began = new Promise<void>((resolve) => (storing = resolve));
    storage.store = async (...args) => {
      storing();
      await held;
      return store(...args);
    };
    try {
      // In the key's own order (policy/request.ts canonicalQuery), so the URL key is the path and this.
      const query = `?action=query&format=json&list=allpages&requestid=${randomUUID()}`;
      const miss = await http(`${pair.gw.apiUrl}${query}`);
      expect(header(miss, 'x-cache')).toBe('miss');
      await began;
      const urlKey = `/w/api.php${query}`;
      // Nothing stored yet to remove: the purge is recorded against the mark the fetch took.
      expect((await storage.purge({ kind: 'url', urlKey })).purged).toBe(0);
      letGo();
      await pair.gw.built.gateway.afterAnswers.settled(5_000);
      storage.store = store;
      const again = await http(`${pair.gw.apiUrl}${query}`);
      expect(header(again, 'x-cache')).toBe('miss');
      expect(pair.fake.requests.length).toBe(2);
    } finally {
      letGo();
      storage.store = store;
    }
  });
});
