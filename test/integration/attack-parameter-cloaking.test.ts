// Attack classes 5 and 6: two requests share an entry only if PHP parses them the same, and
// cacheability never follows a path shape.
import { randomUUID } from 'node:crypto';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { type RunningGateway, startGateway } from '../support/gateway.js';
import { header, rawTarget } from '../support/http.js';

describe('parameter cloaking and path confusion against the real wiki', () => {
  let gw: RunningGateway;
  beforeAll(async () => {
    gw = await startGateway(inject('wikiUrl'));
  });
  afterAll(() => gw.close());
  // The target is sent byte for byte (a URL object would resolve `/./` and `//` first).
  const get = (target: string, headers: Record<string, string> = {}) => rawTarget(gw.url, target, { headers });

  it('%61ction and action, + and %20, duplicate order: same PHP view, same entry', async () => {
    const id = randomUUID();
    await get(`/w/api.php?action=wbavailablebadges&format=json&requestid=${id}`);
    expect(header(await get(`/w/api.php?%61ction=wbavailablebadges&format=json&requestid=${id}`), 'x-cache')).toBe('hit');
    expect(header(await get(`/w/api.php?format=json&action=query&action=wbavailablebadges&requestid=${id}`), 'x-cache')).toBe('hit');
  });

  it('duplicates in the other order are another request (PHP keeps the last)', async () => {
    const id = randomUUID();
    await get(`/w/api.php?action=wbavailablebadges&format=json&requestid=${id}`);
    const other = await get(`/w/api.php?action=wbavailablebadges&action=query&meta=siteinfo&format=json&requestid=${id}`);
    expect(header(other, 'x-cache')).not.toBe('hit');
    expect(JSON.parse(other.body).query.general).toBeDefined();
  });

  it('; is not a separator: action=query;list=x is not action=query&list=x', async () => {
    const id = randomUUID();
    await get(`/w/api.php?action=query&meta=siteinfo&format=json&requestid=${id}`);
    const cloaked = await get(`/w/api.php?action=query&meta=siteinfo;list=filearchive&format=json&requestid=${id}`);
    expect(header(cloaked, 'x-cache')).not.toBe('hit');
  });

  it('array shapes pass', async () => {
    const res = await get(`/w/api.php?action=query&meta=siteinfo&format=json&x[]=1&requestid=${randomUUID()}`);
    expect(header(res, 'x-cache')).toBe('pass');
  });

  it('a GET with a body passes', async () => {
    const res = await request(`${gw.apiUrl}?action=wbavailablebadges&format=json&requestid=${randomUUID()}`, {
      method: 'GET',
      body: 'action=query&list=filearchive',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    await res.body.dump();
    expect(res.headers['x-cache']).toBe('pass');
  });

  it.each(['/w/api.php/x.css', '/w/./api.php', '//w/api.php', '/w/%61pi.php', '/w/api.php%2Fx.css'])(
    '%s is never cached, whatever its extension',
    async (path) => {
      const target = `${path}?action=wbavailablebadges&format=json&requestid=${randomUUID()}`;
      const first = await get(target);
      const second = await get(target);
      expect(header(first, 'x-cache')).not.toBe('hit');
      expect(header(second, 'x-cache')).not.toBe('hit');
    },
  );

  it('an absolute-form target with a foreign host cannot plant an entry for other hosts', async () => {
    const id = randomUUID();
    await rawTarget(gw.url, `http://evil.example/w/api.php?action=wbavailablebadges&format=json&requestid=${id}`);
    // Whatever it got, the entry (if any) is the wiki's own answer for that query: the wiki
    // never saw the foreign host (it receives its own Host).
    const clean = await get(`/w/api.php?action=wbavailablebadges&format=json&requestid=${id}`);
    expect(JSON.parse(clean.body)).toMatchObject({ badges: expect.any(Array) });
  });
});
