// With WIKIEDGE_DEBUGINFO=off a passed answer was streamed, never read: a write through the
// gateway (wbsetlabel here) could not be confirmed by its answer, invalidated nothing, and its
// writer and everyone else read the old label from the cache until the wiki's PURGE or the
// follower came (with neither, until the TTL). A write's answer is read whole whatever the
// debuginfo setting (src/steps/pass.ts).
import type { IncomingMessage, ServerResponse } from 'node:http';
import { describe, expect, it } from 'vitest';
import { gatewayOnFake } from '../support/gateway-on-fake.js';
import { header, http } from '../support/http.js';

let label = 'Berlin';
let rev = 22;

function wiki(req: IncomingMessage, res: ServerResponse): void {
  if (req.method === 'POST') {
    req.resume();
    req.on('end', () => {
      label = 'Berlin (city)';
      rev++;
      res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'private, must-revalidate, max-age=0' });
      res.end(JSON.stringify({ entity: { labels: { en: { language: 'en', value: label } }, id: 'Q1', type: 'item', lastrevid: rev }, success: 1 }));
    });
    return;
  }
  res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'cache-control': 's-maxage=300, max-age=300, public' });
  res.end(JSON.stringify({ entities: { Q1: { type: 'item', id: 'Q1', labels: { en: { language: 'en', value: label } } } }, success: 1 }));
}

for (const env of [{}, { WIKIEDGE_DEBUGINFO: 'off' }] as Record<string, string>[]) {
  describe(`wbsetlabel through the gateway, ${JSON.stringify(env)}`, () => {
    const pair = gatewayOnFake(wiki, env);
    it('the next wbgetentities reads the new label', async () => {
      label = 'Berlin';
      const url = `${pair.gw.apiUrl}?action=wbgetentities&format=json&ids=Q1&props=labels`;
      expect((await http(url)).body).toContain('"Berlin"');
      await pair.gw.built.gateway.afterAnswers.settled(5_000);
      expect(header(await http(url), 'x-cache')).toContain('hit');
      const w = await http(pair.gw.apiUrl, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: 'action=wbsetlabel&id=Q1&language=en&value=Berlin%20(city)&format=json&token=%2B%5C',
      });
      expect(w.body).toContain('"success":1');
      expect((await http(url)).body).toContain('Berlin (city)');
    });
  });
}
