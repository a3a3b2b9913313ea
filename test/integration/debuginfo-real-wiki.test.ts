// The real wiki in debug mode ($wgDebugToolbar): its debuginfo block (which echoes the request's
// Cookie header) never reaches a client through the gateway nor its cache, in any format, while its
// figures become metrics. Also the two other modes, WIKIEDGE_DEBUGINFO=pass and off.
import { randomUUID } from 'node:crypto';
import { brotliDecompressSync, gunzipSync, inflateSync } from 'node:zlib';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { type RunningGateway, startGateway } from '../support/gateway.js';
import { storedAnswers } from '../support/entries.js';
import { http } from '../support/http.js';
import { LAB_USER, LAB_USER_PASS, loginCookies, setWikiToggle } from '../support/wiki.js';

const wiki = inject('wikiUrl');
const wikiData = inject('wikiData');

interface Raw {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  /** The body as it came over the wire, and decoded (gzip/deflate/br) when it was encoded. */
  wire: Buffer;
  body: string;
}

async function get(url: string, headers: Record<string, string> = {}): Promise<Raw> {
  const res = await request(url, { headers });
  const wire = Buffer.from(await res.body.arrayBuffer());
  const enc = String(res.headers['content-encoding'] ?? '');
  const decoded = enc === 'gzip' ? gunzipSync(wire) : enc === 'deflate' ? inflateSync(wire) : enc === 'br' ? brotliDecompressSync(wire) : wire;
  return { status: res.statusCode, headers: res.headers, wire, body: decoded.toString('utf8') };
}

const xcache = (r: Raw) => String(r.headers['x-cache'] ?? '');

/** Sum of every sample of `name` in a scrape (optionally only those whose labels contain `filter`). */
async function metric(gw: RunningGateway, name: string, filter = ''): Promise<number> {
  const text = (await http(`${gw.adminUrl}/metrics`)).body;
  let sum = 0;
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue;
    if (filter && !line.includes(filter)) continue;
    sum += Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return sum;
}

async function scrapeText(gw: RunningGateway): Promise<string> {
  return (await http(`${gw.adminUrl}/metrics`)).body;
}

/** Every body held in the gateway's cache, both tiers (read through purgeWhere with a predicate that keeps all). */
function storedBodies(gw: RunningGateway): string[] {
  const bodies: string[] = [];
  gw.built.gateway.store.purgeWhere((entry) => {
    // Stored compressed: what the client would get, decoded.
    for (const answer of storedAnswers(entry)) bodies.push(answer.toString('utf8'));
    return false;
  });
  return bodies;
}

const leaks = (text: string, secret: string) => text.includes(secret) || /debuginfo/i.test(text) || text.includes(encodeURIComponent(secret));

/** The formats MediaWiki 1.39 emits debuginfo in. `cacheable`: the gateway stores the answer (anonymous). */
const FORMATS: { name: string; query: string; cacheable: boolean }[] = [
  { name: 'json fv1', query: 'format=json', cacheable: true },
  { name: 'json fv2', query: 'format=json&formatversion=2', cacheable: true },
  { name: 'json utf8', query: 'format=json&formatversion=2&utf8=1', cacheable: true },
  { name: 'JSONP', query: 'format=json&callback=cb', cacheable: true },
  { name: 'format omitted (HTML)', query: '', cacheable: false },
  { name: 'jsonfm', query: 'format=jsonfm', cacheable: false },
  { name: 'xml', query: 'format=xml', cacheable: true },
  { name: 'xmlfm', query: 'format=xmlfm', cacheable: false },
  { name: 'php', query: 'format=php', cacheable: true },
  { name: 'wrappedhtml', query: 'format=jsonfm&wrappedhtml=1', cacheable: false },
];

describe('debuginfo from the real wiki, WIKIEDGE_DEBUGINFO=strip (the default)', () => {
  let gw: RunningGateway;
  let session: string;
  beforeAll(async () => {
    gw = await startGateway(wiki);
    session = await loginCookies(wiki, LAB_USER, LAB_USER_PASS);
    await setWikiToggle(wikiData, { debug: true });
  });
  afterAll(async () => {
    await setWikiToggle(wikiData, { debug: false });
    await gw?.close();
  });

  for (const f of FORMATS) {
    it(`${f.name}: the wiki echoes the cookie in debuginfo; through the gateway nothing of it arrives or is stored`, async () => {
      const id = randomUUID();
      const q = `action=query&meta=siteinfo&requestid=${id}${f.query ? `&${f.query}` : ''}`;
      const secretA = `a${randomUUID().replaceAll('-', '')}`;
      const secretB = `b${randomUUID().replaceAll('-', '')}`;
      // Not a credential cookie: the request stays anonymous (shared tier), and the wiki echoes it.
      const direct = await get(`${wiki}/w/api.php?${q}`, { cookie: `probe=${secretA}` });
      expect(direct.status).toBe(200);
      expect(direct.body).toContain(secretA); // so this test can fail
      expect(direct.body).toMatch(/debuginfo/i);

      const first = await get(`${gw.apiUrl}?${q}`, { cookie: `probe=${secretA}`, 'accept-encoding': 'gzip' });
      expect(first.status).toBe(200);
      expect(leaks(first.body, secretA), first.body.slice(0, 300)).toBe(false);
      expect(first.wire.includes(secretA)).toBe(false);
      // Another anonymous client: served from the cache when the answer is storable, never with A's cookie.
      const second = await get(`${gw.apiUrl}?${q}`, { cookie: `probe=${secretB}`, 'accept-encoding': 'gzip' });
      expect(leaks(second.body, secretA) || leaks(second.body, secretB)).toBe(false);
      if (f.cacheable) {
        expect(xcache(first)).toBe('miss');
        expect(xcache(second)).toBe('hit');
        expect(second.body).toBe(first.body);
      } else {
        expect(xcache(second)).not.toBe('hit');
      }
      for (const body of storedBodies(gw)) expect(leaks(body, secretA), body.slice(0, 300)).toBe(false);
    });
  }

  it('a logged-in request: the wiki echoes its session cookie, the gateway never shows or stores it', async () => {
    const sessionValue = /(?:^|;\s*)wiki_session=([^;]+)/.exec(session)?.[1];
    expect(sessionValue).toMatch(/^[a-z0-9]{32}$/);
    const id = randomUUID();
    for (const format of ['format=json', 'format=json&formatversion=2', 'format=xml', 'format=php', '']) {
      const q = `action=query&meta=userinfo&requestid=${id}${format ? `&${format}` : ''}`;
      const direct = await get(`${wiki}/w/api.php?${q}`, { cookie: session });
      expect(direct.body, format).toContain(sessionValue!);
      expect(direct.body).toContain(LAB_USER);
      const first = await get(`${gw.apiUrl}?${q}`, { cookie: session, 'accept-encoding': 'gzip' });
      const second = await get(`${gw.apiUrl}?${q}`, { cookie: session, 'accept-encoding': 'gzip' });
      expect(first.body).toContain(LAB_USER);
      for (const r of [first, second]) expect(leaks(r.body, sessionValue!), format).toBe(false);
      if (format !== '') {
        expect(xcache(first), format).toBe('miss');
        expect(xcache(second), format).toBe('hit');
        expect(second.body).toBe(first.body);
      }
    }
    for (const body of storedBodies(gw)) expect(leaks(body, sessionValue!)).toBe(false);
  });

  it('N answers in debug mode grow wikiedge_wiki_processing_seconds by N', async () => {
    const N = 5;
    const before = await metric(gw, 'wikiedge_wiki_processing_seconds_count');
    const strippedBefore = await metric(gw, 'wikiedge_debuginfo_stripped_total', 'format="json"');
    const id = randomUUID();
    for (let i = 0; i < N; i++) {
      const r = await get(`${gw.apiUrl}?action=wbavailablebadges&format=json&requestid=${id}-${i}`);
      expect(xcache(r)).toBe('miss');
    }
    // hits are not the wiki's answers: they must not count again
    await get(`${gw.apiUrl}?action=wbavailablebadges&format=json&requestid=${id}-0`);
    expect((await metric(gw, 'wikiedge_wiki_processing_seconds_count')) - before).toBe(N);
    expect((await metric(gw, 'wikiedge_wiki_processing_seconds_count', 'module="wbavailablebadges"')) > 0).toBe(true);
    expect((await metric(gw, 'wikiedge_debuginfo_stripped_total', 'format="json"')) - strippedBefore).toBe(N);
    const text = await scrapeText(gw);
    expect(text).toMatch(/^wikiedge_wiki_sql_queries_count \d+/m);
    expect(text).toMatch(/^wikiedge_wiki_memory_bytes_count [1-9]\d*/m);
    expect(await metric(gw, 'wikiedge_wiki_memory_unparsed_total')).toBe(0);
  });

  it('wikiedge_upstream_info carries the wiki’s versions (MediaWiki 1.39.x)', async () => {
    await get(`${gw.apiUrl}?action=query&meta=siteinfo&format=json&requestid=${randomUUID()}`);
    const lines = (await scrapeText(gw)).split('\n').filter((l) => l.startsWith('wikiedge_upstream_info{'));
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/mw_version="1\.39\.\d+"/);
    expect(lines[0]).toMatch(/php_engine="PHP"/);
    expect(lines[0]).toMatch(/php_version="8\.[0-9.]+[^"]*"/);
    expect(lines[0]).toMatch(/ 1$/);
  });

  describe('with debug off', () => {
    beforeAll(() => setWikiToggle(wikiData, { debug: false }));
    afterAll(() => setWikiToggle(wikiData, { debug: true }));

    it('requests are still counted, and nothing is parsed: the debuginfo figures do not move', async () => {
      const before = {
        requests: await metric(gw, 'wikiedge_requests_total'),
        processing: await metric(gw, 'wikiedge_wiki_processing_seconds_count'),
        sql: await metric(gw, 'wikiedge_wiki_sql_queries_count'),
        stripped: await metric(gw, 'wikiedge_debuginfo_stripped_total'),
        unparsed: await metric(gw, 'wikiedge_wiki_memory_unparsed_total'),
      };
      const id = randomUUID();
      for (const f of FORMATS) {
        const r = await get(`${gw.apiUrl}?action=query&meta=siteinfo&requestid=${id}${f.query ? `&${f.query}` : ''}`);
        expect(r.status).toBe(200);
        expect(r.body).not.toMatch(/debuginfo/i);
      }
      expect((await metric(gw, 'wikiedge_requests_total')) - before.requests).toBe(FORMATS.length);
      expect(await metric(gw, 'wikiedge_wiki_processing_seconds_count')).toBe(before.processing);
      expect(await metric(gw, 'wikiedge_wiki_sql_queries_count')).toBe(before.sql);
      expect(await metric(gw, 'wikiedge_debuginfo_stripped_total')).toBe(before.stripped);
      expect(await metric(gw, 'wikiedge_wiki_memory_unparsed_total')).toBe(before.unparsed);
    });
  });
});

describe('WIKIEDGE_DEBUGINFO=pass and off, the wiki in debug mode', () => {
  let pass: RunningGateway;
  let off: RunningGateway;
  beforeAll(async () => {
    pass = await startGateway(wiki, { WIKIEDGE_DEBUGINFO: 'pass' });
    off = await startGateway(wiki, { WIKIEDGE_DEBUGINFO: 'off' });
    await setWikiToggle(wikiData, { debug: true });
  });
  afterAll(async () => {
    await setWikiToggle(wikiData, { debug: false });
    await pass?.close();
    await off?.close();
  });

  it('pass: debuginfo reaches the client, its figures are recorded, and nothing carrying it is stored', async () => {
    const id = randomUUID();
    const before = await metric(pass, 'wikiedge_wiki_processing_seconds_count');
    const q = `action=wbavailablebadges&format=json&requestid=${id}`;
    const first = await get(`${pass.apiUrl}?${q}`, { cookie: `probe=${id}` });
    const second = await get(`${pass.apiUrl}?${q}`, { cookie: `probe=${id}` });
    for (const r of [first, second]) {
      expect(r.status).toBe(200);
      expect(JSON.parse(r.body).debuginfo).toBeTypeOf('object');
      expect(xcache(r)).not.toBe('hit');
    }
    expect(first.body).toContain(id);
    expect((await metric(pass, 'wikiedge_wiki_processing_seconds_count')) - before).toBe(2);
    expect(await metric(pass, 'wikiedge_not_stored_total', 'reason="debuginfo"')).toBeGreaterThanOrEqual(2);
    expect(await metric(pass, 'wikiedge_debuginfo_stripped_total')).toBe(0);
    for (const body of storedBodies(pass)) expect(body).not.toMatch(/debuginfo/i);
  });

  it('off: the answer is not parsed (the debuginfo histograms do not grow)', async () => {
    const id = randomUUID();
    const before = await metric(off, 'wikiedge_wiki_processing_seconds_count');
    const r = await get(`${off.apiUrl}?action=query&meta=siteinfo&format=json&requestid=${id}`);
    expect(r.status).toBe(200);
    expect(r.body).toContain('debuginfo'); // not looked at, so not removed either
    expect(await metric(off, 'wikiedge_wiki_processing_seconds_count')).toBe(before);
    expect(await metric(off, 'wikiedge_wiki_sql_queries_count')).toBe(0);
    expect(await metric(off, 'wikiedge_debuginfo_stripped_total')).toBe(0);
    expect((await scrapeText(off)).split('\n').some((l) => l.startsWith('wikiedge_upstream_info{'))).toBe(false);
  });

  it('off: one client’s cookie, echoed by a wiki left in debug mode, is never served to another client', async () => {
    // `off` promises not to parse; it cannot promise the wiki is not in debug mode. An answer that
    // echoes client A's Cookie header must not become a shared entry served to client B.
    const id = randomUUID();
    const q = `action=wbavailablebadges&format=json&requestid=${id}`;
    const secretA = `a${randomUUID().replaceAll('-', '')}`;
    await get(`${off.apiUrl}?${q}`, { cookie: `probe=${secretA}` });
    const b = await get(`${off.apiUrl}?${q}`, { cookie: 'probe=b' });
    expect(b.body.includes(secretA), `x-cache: ${xcache(b)}`).toBe(false);
  });
});
