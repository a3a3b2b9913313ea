// Attack class 52 against the real wiki: `prop=revisions&rvdifftotext=~~~&rvdifftotextpst=1`
// (and list=allrevisions' `arvdifftotextpst`) pre-save-transforms the supplied text as the current
// user (ApiQueryRevisionsBase::extractDeprecatedContent), so the diff holds the anonymous
// requester's signature, its address, marked up piece by piece (`203</ins>.<ins …>0</ins>…`)
// where no byte search finds it, and MediaWiki calls the answer public.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { type RunningGateway, startGateway } from '../support/gateway.js';
import { header, http } from '../support/http.js';
import { setWikiToggle } from '../support/wiki.js';

describe('the requester`s address through a diff against pre-save-transformed text (real wiki)', () => {
  const wiki = inject('wikiUrl');
  const data = inject('wikiData');
  let gw: RunningGateway;
  beforeAll(async () => {
    // The wiki trusts the gateway's X-Forwarded-For; the gateway trusts the test client's.
    await setWikiToggle(data, { trustProxy: ['127.0.0.1'] });
    gw = await startGateway(wiki);
  });
  afterAll(async () => {
    await gw.close();
    await setWikiToggle(data, { trustProxy: [] });
  });

  const from = (ip: string) => ({ 'x-forwarded-for': ip });

  it.each([
    ['prop=revisions', 'action=query&prop=revisions&titles=Main_Page&rvdifftotext=~~~&rvdifftotextpst=1'],
    // The oldest revision (Main Page's first): the same diff, whatever the other tests edited.
    ['list=allrevisions', 'action=query&list=allrevisions&arvdir=newer&arvlimit=1&arvdifftotext=~~~&arvdifftotextpst=1'],
  ])('%s: one anonymous reader`s signature is never another`s answer', async (_what, query) => {
    const q = `${query}&format=json&uselang=content&requestid=${randomUUID()}`;
    // The premise: the wiki would let a shared cache keep it, and the address is not there as bytes.
    const direct = await http(`${wiki}/w/api.php?${q}&smaxage=60&maxage=60`, { headers: from('203.0.113.7') });
    expect(header(direct, 'cache-control')).toMatch(/public/);
    expect(direct.body).toContain('>113</ins>');
    expect(direct.body).not.toContain('203.0.113.7');
    const first = await http(`${gw.apiUrl}?${q}`, { headers: from('203.0.113.7') });
    expect(first.body).toContain('>113</ins>');
    const other = await http(`${gw.apiUrl}?${q}`, { headers: from('198.51.100.9') });
    expect(header(other, 'x-cache')).not.toBe('hit');
    expect(other.body).not.toContain('>113</ins>');
    expect(other.body).toContain('>198</ins>');
  });
});
