// Attack class 53 against the real wiki: `action=feedrecentchanges&hidemyself=1` leaves out the
// changes of the current user (ChangesListSpecialPage's `hidemyself` filter), an anonymous
// reader's being those of its address, and ApiFeedRecentChanges::execute marks the feed public.
// Shared, an anonymous vandal's own fetch would hide their edits from every reader.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { type RunningGateway, startGateway } from '../support/gateway.js';
import { header, http } from '../support/http.js';
import { setWikiToggle } from '../support/wiki.js';

describe('a recent changes feed filtered by its requester (real wiki)', () => {
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

  it('an anonymous vandal`s feed without its edits is never another reader`s', async () => {
    const title = `Vandalised_${randomUUID()}`;
    const edit = await http(gw.apiUrl, {
      method: 'POST',
      headers: { ...from('203.0.113.66'), 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ action: 'edit', title, text: 'vandalism', token: '+\\', format: 'json' }).toString(),
    });
    expect(JSON.parse(edit.body).edit?.result).toBe('Success');
    const q = `action=feedrecentchanges&feedformat=atom&hidemyself=1&days=1&limit=50&requestid=${randomUUID()}`;
    const inFeed = title.replace(/_/g, ' ');
    // The premise: the wiki filters by its requester and lets a shared cache keep the feed.
    const direct = await http(`${wiki}/w/api.php?${q}`, { headers: from('203.0.113.66') });
    expect(header(direct, 'cache-control')).toMatch(/public/);
    expect(direct.body).not.toContain(inFeed);
    const vandal = await http(`${gw.apiUrl}?${q}`, { headers: from('203.0.113.66') });
    expect(vandal.body).not.toContain(inFeed);
    const reader = await http(`${gw.apiUrl}?${q}`, { headers: from('198.51.100.9') });
    expect(header(reader, 'x-cache')).toBe('pass');
    expect(reader.body).toContain(inFeed);
  });
});
