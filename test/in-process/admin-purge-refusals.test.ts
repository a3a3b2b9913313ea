// POST /purge that cannot be done is a 400 in the admin API's shape ({"error": why}), and one that
// removed nothing is a 200 with a count of 0 that says so.
import { describe, expect, it } from 'vitest';
import { gatewayOnFake } from '../support/gateway-on-fake.js';
import { ADMIN_TOKEN, adminPost, answerPublicOrSessionPrivate } from '../support/admin.js';
import { http } from '../support/http.js';

describe('admin purge refusals', () => {
  const t = gatewayOnFake(answerPublicOrSessionPrivate(new Map()), {
    WIKIEDGE_ADMIN_TOKEN: ADMIN_TOKEN,
    WIKIEDGE_MODULES: JSON.stringify({ cirrusdump: { ttlSeconds: 60 } }),
  });

  it.each([
    [
      { module: 'nosuchmodule' },
      "module=nosuchmodule is not a module of MediaWiki 1.39 or Wikibase, nor one named in WIKIEDGE_MODULES (an extension's module: purge by pattern=)",
    ],
    [{ module: 'query+other' }, 'module=query+other is a folded metrics label, not one module'],
    [{ url: '/w/index.php?title=Main_Page' }, 'url= must be an api.php URL (/w/api.php?…), not /w/index.php?title=Main_Page'],
    [{ url: 'http://[bad' }, 'url= must be an api.php URL (/w/api.php?…), not http://[bad'],
    [{ prefix: '/w/index.php?title=' }, 'prefix= must begin with /w/api.php? (every URL key does), not /w/index.php?title='],
    [{ title: 'Foo|Bar' }, 'title=Foo|Bar holds a character no page title may hold (# < > [ ] | { } or a control character)'],
    [{ title: '   ' }, 'title=    names no page'],
    [{ title: 'x'.repeat(300) }, 'title= is longer than 255 bytes, which no page title is'],
    [{ tag: 'not a tag' }, "tag=not a tag is not a dependency tag (`*` or `p:Page_title`, `n:0`, …: GET /cache shows an entry's tags)"],
    [{ all: '0' }, 'all=0: all=1 purges everything'],
    [{}, 'give one of all=1, module=, url=, prefix=, pattern=, title= or tag='],
    [{ module: 'query', title: 'Foo' }, 'give one of all=1, module=, url=, prefix=, pattern=, title= or tag=, not several (module=, title=)'],
  ])('%j: 400', async (body, error) => {
    const res = await adminPost(t.gw.adminUrl, '/purge', body);
    expect(res.status).toBe(400);
    expect(JSON.parse(res.body)).toEqual({ error });
    expect(res.headers['x-cache']).toBe('error');
  });

  it('a module named in WIKIEDGE_MODULES, and a Wikibase one, are modules', async () => {
    for (const module of ['cirrusdump', 'wbgetentities', 'query+siteinfo']) expect((await adminPost(t.gw.adminUrl, '/purge', { module })).status).toBe(200);
  });

  it('a purge that matched nothing: 200, a count of 0, and a note saying so', async () => {
    expect((await http(`${t.gw.apiUrl}?action=query&prop=info&titles=Kept&format=json`)).headers['x-cache']).toBe('miss');
    for (const body of [{ url: '/w/api.php?action=query&titles=Nothing' }, { title: 'Nothing here' }, { module: 'parse' }, { tag: 'p:Nothing' }]) {
      const res = await adminPost(t.gw.adminUrl, '/purge', body);
      expect(res.status).toBe(200);
      expect(JSON.parse(res.body)).toEqual({ purged: 0, note: 'nothing matched: no entry was removed' });
    }
    expect((await http(`${t.gw.apiUrl}?action=query&prop=info&titles=Kept&format=json`)).headers['x-cache']).toBe('hit');
  });
});
