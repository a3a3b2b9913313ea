// Proves the integration harness itself: the wiki from scripts/wiki/setup.sh, its seed data, the
// WikiedgeBadges test extension, the lab.json toggles, real logins and the upstream request log.
import { afterEach, describe, expect, inject, it } from 'vitest';
import { LAB_USER, LAB_USER_PASS, loginCookies, setWikiToggle, upstreamRequestCount } from '../support/wiki.js';

const wikiUrl = inject('wikiUrl');
const wikiData = inject('wikiData');
const api = `${wikiUrl}/w/api.php`;

async function getJson(query: string, headers: Record<string, string> = {}) {
  const res = await fetch(`${api}?${query}`, { headers });
  return { res, body: (await res.json()) as Record<string, unknown> };
}

describe('wiki harness', () => {
  afterEach(async () => {
    await setWikiToggle(wikiData, { debug: false, badges: [] });
  });

  it('serves MediaWiki 1.39.x', async () => {
    const { body } = await getJson('action=query&meta=siteinfo&siprop=general&format=json');
    const general = (body['query'] as { general: { generator: string; scriptpath: string } }).general;
    expect(general.generator).toMatch(/^MediaWiki 1\.39\.\d+/);
    expect(general.scriptpath).toBe('/w');
  });

  it('has the 3 seeded deleted files in list=filearchive', async () => {
    const { res, body } = await getJson('action=query&list=filearchive&format=json');
    const rows = (body['query'] as { filearchive: { name: string }[] }).filearchive;
    // Other tests of the suite delete files of their own on this wiki (invalidation-by-purges).
    expect(rows.map((r) => r.name)).toEqual(expect.arrayContaining(['Lab-blue.png', 'Lab-green.png', 'Lab-red.png']));
    expect(res.headers.get('cache-control')).toBe('private, must-revalidate, max-age=0');
  });

  it('answers action=wbavailablebadges like Wikibase: empty list, public for an hour', async () => {
    const res = await fetch(`${api}?action=wbavailablebadges&format=json`);
    expect(await res.text()).toBe('{"badges":[]}');
    expect(res.headers.get('cache-control')).toBe('max-age=3600, s-maxage=3600, public');
    expect(res.headers.get('vary')).toBe('Accept-Encoding, Treat-as-Untrusted, Cookie');
  });

  it('takes the badge list from lab.json without a restart', async () => {
    await setWikiToggle(wikiData, { badges: ['Q1', 'Q2'] });
    const { body } = await getJson('action=wbavailablebadges&format=json');
    expect(body).toEqual({ badges: ['Q1', 'Q2'] });
    await setWikiToggle(wikiData, { badges: [] });
    expect((await getJson('action=wbavailablebadges&format=json')).body).toEqual({ badges: [] });
  });

  it('flips debuginfo through lab.json', async () => {
    const query = 'action=query&meta=siteinfo&format=json';
    expect((await getJson(query)).body).not.toHaveProperty('debuginfo');
    await setWikiToggle(wikiData, { debug: true });
    expect((await getJson(query)).body).toHaveProperty('debuginfo.mwVersion');
  });

  it('logs LabUser in with clientlogin', async () => {
    const cookie = await loginCookies(wikiUrl, LAB_USER, LAB_USER_PASS);
    expect(cookie).toMatch(/(^|; )wiki_session=[^;]+/);
    const { body } = await getJson('action=query&meta=userinfo&format=json', { cookie });
    const info = (body['query'] as { userinfo: { id: number; name: string } }).userinfo;
    expect(info.name).toBe(LAB_USER);
    expect(info.id).toBeGreaterThan(0);
    const anon = await getJson('action=query&meta=userinfo&format=json');
    expect((anon.body['query'] as { userinfo: { id: number } }).userinfo.id).toBe(0);
  });

  it('counts one requests.log line per request', async () => {
    const isSiteinfo = (line: string) => line.startsWith('GET /w/api.php?') && line.includes('meta=siteinfo');
    const before = await upstreamRequestCount(wikiData);
    const siteinfoBefore = await upstreamRequestCount(wikiData, isSiteinfo);
    await getJson('action=query&meta=siteinfo&format=json');
    expect(await upstreamRequestCount(wikiData)).toBe(before + 1);
    await getJson('action=query&list=filearchive&format=json');
    await fetch(api, { method: 'POST', body: new URLSearchParams({ action: 'query', format: 'json' }) });
    expect(await upstreamRequestCount(wikiData)).toBe(before + 3);
    expect(await upstreamRequestCount(wikiData, isSiteinfo)).toBe(siteinfoBefore + 1);
    expect(await upstreamRequestCount(wikiData, (l) => l === 'POST /w/api.php')).toBeGreaterThanOrEqual(1);
  });
});
