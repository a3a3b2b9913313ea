// Compressed answers against the real wiki (src/compression): for json, formatversion=2, xml,
// JSONP and the HTML renderings, the gzip and br bodies decode to exactly the identity body; Vary
// names Accept-Encoding and Content-Length is the length sent; HEAD has the GET's headers; a
// client without Accept-Encoding gets identity, one refusing identity and everything else gets
// 406 (RFC 9110 §12.5.3, §15.5.7); answers not stored (passes) are compressed for their client;
// and with $wgDebugToolbar on, no coding brings debuginfo back.
import { randomUUID } from 'node:crypto';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { type RunningGateway, startGateway } from '../support/gateway.js';
import { withoutVolatile } from '../support/http.js';
import { setWikiToggle } from '../support/wiki.js';

const wiki = inject('wikiUrl');
const wikiData = inject('wikiData');

interface Got {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  /** As sent. */
  wire: Buffer;
  /** Decoded by its Content-Encoding. */
  body: Buffer;
}

async function get(url: string, acceptEncoding?: string, method: 'GET' | 'HEAD' | 'POST' = 'GET', body?: string): Promise<Got> {
  const headers: Record<string, string> = acceptEncoding === undefined ? {} : { 'accept-encoding': acceptEncoding };
  if (body) headers['content-type'] = 'application/x-www-form-urlencoded';
  const res = await request(url, { method, headers, body: body ?? null });
  const wire = Buffer.from(await res.body.arrayBuffer());
  const coding = res.headers['content-encoding'];
  const decoded = wire.length === 0 ? wire : coding === 'gzip' ? gunzipSync(wire) : coding === 'br' ? brotliDecompressSync(wire) : wire;
  return { status: res.statusCode, headers: res.headers, wire, body: decoded };
}

const h = (r: Got, name: string) => {
  const v = r.headers[name];
  return Array.isArray(v) ? v.join(', ') : v;
};

/** Headers that describe the answer (not the request: no Date, Age, X-Request-Id, X-Cache). */
const described = (r: Got) =>
  Object.fromEntries(Object.entries(r.headers).filter(([k]) => !['date', 'age', 'x-request-id', 'x-cache', 'connection', 'keep-alive'].includes(k)));

/** Large enough to be stored compressed (siteinfo's namespaces: ~1.6 KB in json). */
const FORMATS: { name: string; query: string }[] = [
  { name: 'json', query: 'format=json' },
  { name: 'formatversion=2', query: 'format=json&formatversion=2' },
  { name: 'xml', query: 'format=xml' },
  { name: 'JSONP', query: 'format=json&callback=cb' },
  // An HTML rendering the client asked to be cached (smaxage/maxage: MediaWiki then says public).
  { name: 'jsonfm (cached)', query: 'format=jsonfm&smaxage=300&maxage=300' },
];

describe('compressed answers from the real wiki', () => {
  let gw: RunningGateway;
  beforeAll(async () => {
    // br for an entry as soon as one br client asks (the default waits for 4).
    gw = await startGateway(wiki, { WIKIEDGE_BROTLI_AFTER_HITS: '1' });
  });
  afterAll(() => gw?.close());

  for (const f of FORMATS) {
    it(`${f.name}: identity, gzip and br of one entry are one answer; Vary, Content-Length and HEAD right`, async () => {
      const url = `${gw.apiUrl}?action=query&meta=siteinfo&siprop=namespaces&${f.query}&requestid=${randomUUID()}`;
      const miss = await get(url);
      expect(h(miss, 'x-cache')).toBe('miss');
      expect(h(miss, 'content-encoding')).toBeUndefined();
      const identity = miss.body;
      expect(identity.length).toBeGreaterThan(1024);

      const gzip = await get(url, 'gzip, deflate');
      expect(h(gzip, 'x-cache')).toBe('hit');
      expect(h(gzip, 'content-encoding')).toBe('gzip');
      expect(gzip.body.equals(identity)).toBe(true);
      expect(gzip.wire.length).toBeLessThan(identity.length / 2);

      // The first br client gets the gzip and asks for the br, made in the background.
      let br = await get(url, 'gzip, deflate, br');
      for (let i = 0; i < 100 && h(br, 'content-encoding') !== 'br'; i++) {
        await new Promise((r) => setTimeout(r, 20));
        br = await get(url, 'gzip, deflate, br');
      }
      expect(h(br, 'content-encoding')).toBe('br');
      expect(br.body.equals(identity)).toBe(true);
      expect(br.wire.length).toBeLessThan(gzip.wire.length);

      const again = await get(url);
      for (const r of [miss, gzip, br, again]) {
        expect(h(r, 'vary')).toMatch(/(^|, *)Accept-Encoding(,|$)/i);
        expect(h(r, 'content-length')).toBe(String(r.wire.length));
      }
      expect(again.body.equals(identity)).toBe(true);
      expect(h(again, 'content-encoding')).toBeUndefined();

      // HEAD: the GET's headers for the same Accept-Encoding, no body.
      for (const [ae, got] of [
        [undefined, again],
        ['gzip', gzip],
        ['br', br],
      ] as const) {
        const head = await get(url, ae, 'HEAD');
        expect(head.wire.length).toBe(0);
        expect(described(head)).toEqual(described(got));
      }
    });
  }

  it('no Accept-Encoding, an empty one, or identity: identity (RFC 9110 §12.5.3)', async () => {
    const url = `${gw.apiUrl}?action=query&meta=siteinfo&siprop=namespaces&format=json&requestid=${randomUUID()}`;
    const first = await get(url);
    for (const ae of [undefined, '', 'identity', 'compress', 'gzip;q=0']) {
      const r = await get(url, ae);
      expect(h(r, 'content-encoding'), String(ae)).toBeUndefined();
      expect(r.body.equals(first.body)).toBe(true);
    }
  });

  it('identity;q=0 and *;q=0: 406 in the request`s format, varying by Accept-Encoding; with gzip accepted, gzip', async () => {
    const q = `action=query&meta=siteinfo&siprop=namespaces&requestid=${randomUUID()}`;
    for (const ae of ['identity;q=0', '*;q=0', 'deflate, identity;q=0']) {
      const json = await get(`${gw.apiUrl}?${q}&format=json`, ae);
      expect(json.status, ae).toBe(406);
      expect(h(json, 'vary')).toBe('Accept-Encoding');
      expect(h(json, 'mediawiki-api-error')).toBe('wikiedge-not-acceptable');
      expect(JSON.parse(json.body.toString()).error.code).toBe('wikiedge-not-acceptable');
      const xml = await get(`${gw.apiUrl}?${q}&format=xml`, ae);
      expect(xml.status).toBe(406);
      expect(xml.body.toString()).toContain('code="wikiedge-not-acceptable"');
    }
    const full = await get(`${gw.apiUrl}?${q}&format=json`);
    const gzip = await get(`${gw.apiUrl}?${q}&format=json`, 'gzip, identity;q=0');
    expect(h(gzip, 'content-encoding')).toBe('gzip');
    expect(gzip.body.equals(full.body)).toBe(true);
    // A small answer (stored as it is) is compressed for a client that refuses identity.
    const small = `${gw.apiUrl}?action=wbavailablebadges&format=json&requestid=${randomUUID()}`;
    const plain = await get(small);
    expect(plain.body.length).toBeLessThan(1024);
    const made = await get(small, 'br, identity;q=0');
    expect(h(made, 'content-encoding')).toBe('br');
    expect(made.body.equals(plain.body)).toBe(true);
  });

  it('answers not stored are compressed for their client: the HTML rendering (a pass) and a POST', async () => {
    const html = `${gw.apiUrl}?action=query&meta=siteinfo&siprop=namespaces&requestid=${randomUUID()}`;
    const plain = await get(html);
    expect(h(plain, 'x-cache')).toBe('pass');
    for (const ae of ['gzip', 'br', 'gzip, deflate, br']) {
      const r = await get(html, ae);
      expect(h(r, 'x-cache')).toBe('pass');
      expect(h(r, 'content-encoding')).toBe(ae === 'gzip' ? 'gzip' : 'br');
      expect(h(r, 'content-length')).toBe(String(r.wire.length));
      expect(h(r, 'vary')).toMatch(/Accept-Encoding/);
      // The page says its request id and its time: the rest is the same page.
      expect(withoutVolatile(r.body.toString())).toBe(withoutVolatile(plain.body.toString()));
    }
    const form = `action=query&meta=siteinfo&siprop=namespaces&format=json&requestid=${randomUUID()}`;
    const posted = await get(gw.apiUrl, 'gzip', 'POST', form);
    expect(h(posted, 'x-cache')).toBe('pass');
    expect(h(posted, 'content-encoding')).toBe('gzip');
    const asGet = await get(`${gw.apiUrl}?${form}`);
    expect(posted.body.equals(asGet.body)).toBe(true);
  });
});

describe('debuginfo never comes back through a coding', () => {
  let gw: RunningGateway;
  beforeAll(async () => {
    gw = await startGateway(wiki, { WIKIEDGE_BROTLI_AFTER_HITS: '1' });
    await setWikiToggle(wikiData, { debug: true });
  });
  afterAll(async () => {
    await setWikiToggle(wikiData, { debug: false });
    await gw?.close();
  });

  it.each(['format=json', 'format=json&formatversion=2', 'format=xml', 'format=json&callback=cb', 'format=jsonfm', ''])(
    '%s: stripped before it is stored or compressed, in every coding',
    async (format) => {
      const url = `${gw.apiUrl}?action=query&meta=siteinfo&siprop=namespaces&${format}&requestid=${randomUUID()}`;
      const direct = await get(`${wiki}/w/api.php?action=query&meta=siteinfo&siprop=namespaces&${format}`);
      expect(direct.body.toString()).toMatch(/debuginfo|debugInfo/);
      const answers = [await get(url), await get(url, 'gzip'), await get(url, 'br'), await get(url, 'gzip, deflate, br')];
      // The cached formats get their br in the background: ask until it is there.
      for (let i = 0; i < 50 && !answers.some((r) => h(r, 'content-encoding') === 'br'); i++) {
        await new Promise((r) => setTimeout(r, 20));
        answers.push(await get(url, 'gzip, deflate, br'));
      }
      expect(answers.some((r) => h(r, 'content-encoding') === 'gzip')).toBe(true);
      expect(answers.some((r) => h(r, 'content-encoding') === 'br')).toBe(true);
      for (const r of answers) {
        expect(r.status).toBe(200);
        expect(r.body.toString()).not.toMatch(/debuginfo|debugInfo/);
      }
    },
  );
});
