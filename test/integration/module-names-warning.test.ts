// WIKIEDGE_MODULES names checked against the real wiki's paraminfo once it answers: a name the
// wiki does not have is warned about at start (in the background), the real ones are not.
import { afterAll, describe, expect, inject, it } from 'vitest';
import { type RunningGateway, startGateway } from '../support/gateway.js';
import { http } from '../support/http.js';

describe('WIKIEDGE_MODULES checked against the wiki', () => {
  let gw: RunningGateway | undefined;
  afterAll(() => gw?.close());

  it('warns about the names MediaWiki 1.39 does not know, once the wiki answers', async () => {
    gw = await startGateway(inject('wikiUrl'), {
      WIKIEDGE_MODULES: JSON.stringify({
        parse: { pass: true },
        filearchive: { shareAnonymousPrivate: true },
        siteinfo: { ttlSeconds: 30 },
        'query+siteinfo': { ttlSeconds: 30 },
        wbgetentitiez: { pass: true },
      }),
    });
    // Start is not held up by the check: the gateway serves before the probe has even started.
    expect((await http(`${gw.apiUrl}?action=query&meta=siteinfo&format=json`)).status).toBe(200);
    gw.built.upstreamProbe.start();
    const deadline = Date.now() + 20_000;
    const warning = () => gw!.logs.find((l) => Array.isArray(l['unknownModules']));
    while (!warning() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    expect(warning()?.['level']).toBe(40);
    expect(warning()?.['unknownModules']).toEqual(['query+siteinfo (did you mean siteinfo?)', 'wbgetentitiez']);
    expect(String(warning()?.['msg'])).toContain('WIKIEDGE_MODULES');
  });
});
