// The Wikibase stand-in (setup.sh --wikibase) against the answers of a real Wikibase REL1_39:
// test/fixtures/wikibase/reference-answers.json holds, per recorded request, its status,
// Cache-Control, Vary, Expires minus Date, whether Set-Cookie came, the API error code and the
// body's shape (top-level keys, entity ids and their keys, redirects). The requests are replayed
// in the recorded order (writes included) on a freshly seeded stand-in, module by module.
// Then, for both layouts (items in 120 Item:, items in namespace 0), a write must make MediaWiki
// send its own PURGEs to $wgCdnServers and write a recentchanges row with Wikibase's autocomment.
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { header, http, type TestResponse } from '../support/http.js';
import { itemTitle, startWikibaseWiki, wbWrite, wikibaseLogin, type WikibaseWiki } from '../support/wikibase.js';

interface Case {
  n: string;
  what: string;
  as: 'anon' | 'admin' | 'user';
  method: 'GET' | 'POST';
  path: string;
  body: Record<string, string> | null;
  status: number;
  cacheControl: string | null;
  vary: string | null;
  expires: number | 'epoch' | null;
  setCookie: boolean;
  apiError: string | null;
  // null: the recorded body was cut (over 4096 bytes), its shape is not known
  shape: { keys?: string[]; error?: string; entities?: Record<string, string[]>; redirects?: Record<string, unknown>; entity?: string[] } | null;
}

const here = path.dirname(fileURLToPath(import.meta.url));
const { cases } = JSON.parse(readFileSync(path.join(here, '../fixtures/wikibase/reference-answers.json'), 'utf8')) as { cases: Case[] };

/** A fake CDN: records the PURGE requests MediaWiki sends through it (as an HTTP proxy). */
async function purgeListener(): Promise<{ server: Server; hostPort: string; urls: string[] }> {
  const urls: string[] = [];
  const server = createServer((req, res) => {
    if (req.method === 'PURGE') urls.push(req.url ?? '');
    res.end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, hostPort: `127.0.0.1:${(server.address() as AddressInfo).port}`, urls };
}

async function waitFor(cond: () => boolean, ms = 10_000): Promise<void> {
  const end = Date.now() + ms;
  while (!cond() && Date.now() < end) await new Promise((r) => setTimeout(r, 100));
}

function expiresDelta(res: TestResponse): number | 'epoch' | null {
  const exp = header(res, 'expires');
  if (!exp) return null;
  if (exp.startsWith('Thu, 01 Jan 1970')) return 'epoch';
  return Math.round((Date.parse(exp) - Date.parse(header(res, 'date') ?? '')) / 1000);
}

function shapeOf(body: string): Case['shape'] {
  const j = JSON.parse(body) as Record<string, unknown>;
  const shape: Case['shape'] = { keys: Object.keys(j) };
  if (j['error']) shape.error = (j['error'] as { code: string }).code;
  if (j['entities']) {
    const ents = j['entities'] as Record<string, Record<string, unknown>>;
    shape.entities = Object.fromEntries(Object.entries(ents).map(([k, v]) => [k, Object.keys(v).sort()]));
    const red = Object.fromEntries(
      Object.entries(ents)
        .filter(([, v]) => v['redirects'])
        .map(([k, v]) => [k, v['redirects']]),
    );
    if (Object.keys(red).length) shape.redirects = red;
  }
  if (j['entity']) shape.entity = Object.keys(j['entity'] as object).sort();
  return shape;
}

describe('the Wikibase stand-in answers like Wikibase REL1_39', () => {
  let wiki: WikibaseWiki;
  let cdn: Awaited<ReturnType<typeof purgeListener>>;
  const cookies: Record<string, string> = { anon: '' };

  beforeAll(async () => {
    cdn = await purgeListener();
    wiki = await startWikibaseWiki({ cdn: cdn.hostPort });
    cookies['admin'] = await wikibaseLogin(wiki, 'admin');
    cookies['user'] = await wikibaseLogin(wiki, 'user');
  });
  afterAll(async () => {
    await wiki?.stop();
    cdn?.server.close();
  });

  for (const c of cases) {
    const module = c.body?.['action'] ?? new URLSearchParams(c.path.split('?')[1] ?? '').get('action');
    it(`${c.n} ${module ?? 'POST'}: ${c.what}`, async () => {
      // a POST without its recorded body would reach action=help (HTML, Vary: Accept-Encoding, Cookie)
      expect(c.method === 'GET' || c.body !== null, 'a POST case needs its recorded body').toBe(true);
      const cookie = cookies[c.as] ?? '';
      let res: TestResponse;
      if (c.method === 'POST' && c.body && 'token' in c.body) {
        // the recorded anonymous edit with the anonymous token '+\'
        res = await http(wiki.api, {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          body: new URLSearchParams(c.body).toString(),
        });
      } else if (c.method === 'POST' && c.body && c.n >= '70' && c.n !== '80' && c.n !== '98') {
        const { action, ...params } = c.body;
        res = await wbWrite(wiki, cookie, action!, params);
      } else {
        res = await http(`${wiki.url}${c.path}`, {
          method: c.method,
          headers: {
            ...(cookie && { cookie }),
            ...(c.body && { 'content-type': 'application/x-www-form-urlencoded' }),
          },
          ...(c.body && { body: new URLSearchParams(c.body).toString() }),
        });
      }
      expect(res.status).toBe(c.status);
      expect(header(res, 'cache-control') ?? null).toBe(c.cacheControl);
      expect(header(res, 'vary') ?? null).toBe(c.vary);
      const delta = expiresDelta(res);
      if (typeof c.expires === 'number') expect(Math.abs((delta as number) - c.expires)).toBeLessThanOrEqual(2);
      else expect(delta).toBe(c.expires);
      expect(header(res, 'set-cookie') !== undefined).toBe(c.setCookie);
      expect(header(res, 'mediawiki-api-error') ?? null).toBe(c.apiError);
      if (c.shape) expect(shapeOf(res.body)).toEqual(c.shape);
    });
  }
});

describe.each([
  { layout: 'items in 120 Item:', itemsInMain: false },
  { layout: 'items in namespace 0 (as on Wikidata)', itemsInMain: true },
])('writes with $layout', ({ itemsInMain }) => {
  let wiki: WikibaseWiki;
  let cdn: Awaited<ReturnType<typeof purgeListener>>;
  let admin: string;

  beforeAll(async () => {
    cdn = await purgeListener();
    wiki = await startWikibaseWiki({ itemsInMain, cdn: cdn.hostPort });
    admin = await wikibaseLogin(wiki, 'admin');
  });
  afterAll(async () => {
    await wiki?.stop();
    cdn?.server.close();
  });

  it('siteinfo names the entity namespaces with their content models', async () => {
    const res = await http(`${wiki.api}?action=query&meta=siteinfo&siprop=namespaces&format=json`);
    const ns = (JSON.parse(res.body) as { query: { namespaces: Record<string, { defaultcontentmodel?: string; '*': string }> } }).query.namespaces;
    expect(ns[itemsInMain ? '0' : '120']?.defaultcontentmodel).toBe('wikibase-item');
    expect(ns['122']).toMatchObject({ '*': 'Property', defaultcontentmodel: 'wikibase-property' });
    expect(ns['121']?.['*']).toBe('Item talk');
    expect(ns['123']?.['*']).toBe('Property talk');
  });

  // As the recorded LabUser wbsetlabel of Q7 de: two PURGEs, and 'set' because the seed's Q7
  // has a de label (see the note in
  // test/wiki-extension/WikiedgeWikibase/maintenance/entities.json).
  it('wbsetlabel: PURGEs of the page and its history, a recentchanges row with the autocomment', async () => {
    cdn.urls.length = 0;
    const res = await wbWrite(wiki, admin, 'wbsetlabel', { id: 'Q7', language: 'de', value: 'Potsdam (Stadt)' });
    expect(res.json).toMatchObject({ entity: { id: 'Q7', type: 'item', labels: { de: { language: 'de', value: 'Potsdam (Stadt)' } } }, success: 1 });
    const t = itemTitle(wiki, 'Q7');
    const expected = [`${wiki.url}/w/index.php/${t}`, `${wiki.url}/w/index.php?title=${t}&action=history`];
    await waitFor(() => expected.every((u) => cdn.urls.includes(u)));
    expect(cdn.urls).toEqual(expected);
    const rc = await http(`${wiki.api}?action=query&list=recentchanges&rcprop=title|comment|ids&rclimit=1&format=json&formatversion=2`);
    expect((JSON.parse(rc.body) as { query: { recentchanges: unknown[] } }).query.recentchanges[0]).toMatchObject({
      title: t,
      comment: '/* wbsetlabel-set:1|de */ Potsdam (Stadt)',
      revid: (res.json['entity'] as { lastrevid: number }).lastrevid,
    });
  });

  it('wbmergeitems: PURGEs of both pages; the source answers as a redirect', async () => {
    cdn.urls.length = 0;
    const res = await wbWrite(wiki, admin, 'wbmergeitems', { fromid: 'Q6', toid: 'Q1', ignoreconflicts: 'description' });
    expect(res.json).toMatchObject({ success: 1, redirected: 1, from: { id: 'Q6', type: 'item' }, to: { id: 'Q1', type: 'item' } });
    const expected = ['Q6', 'Q1'].flatMap((id) => {
      const t = itemTitle(wiki, id);
      return [`${wiki.url}/w/index.php/${t}`, `${wiki.url}/w/index.php?title=${t}&action=history`];
    });
    await waitFor(() => expected.every((u) => cdn.urls.includes(u)));
    expect([...new Set(cdn.urls)]).toEqual(expected);
    const get = await http(`${wiki.api}?action=wbgetentities&ids=Q6&props=info&format=json`);
    expect(JSON.parse(get.body)).toMatchObject({ entities: { Q6: { id: 'Q1', title: itemTitle(wiki, 'Q1'), redirects: { from: 'Q6', to: 'Q1' } } } });
    const rc = await http(`${wiki.api}?action=query&list=recentchanges&rcprop=title|comment&rclimit=3&format=json&formatversion=2`);
    expect((JSON.parse(rc.body) as { query: { recentchanges: { comment: string }[] } }).query.recentchanges.map((r) => r.comment)).toEqual([
      '/* wbcreateredirect:0||Q6|Q1 */',
      '/* wbmergeitems-from:0||Q6 */',
      '/* wbmergeitems-to:0||Q1 */',
    ]);
  });
});
