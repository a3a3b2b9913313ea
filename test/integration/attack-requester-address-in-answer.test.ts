// Security round 2, class 1: an anonymous answer that holds the requester's own address is never
// shared. With the gateway trusted for X-Forwarded-For (as the README recommends), MediaWiki names
// an anonymous requester by the client's address, and marks previews that print it public: a
// `~~~` signature in action=parse&pst=1 expands to the requester's IP.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { type RunningGateway, startGateway } from '../support/gateway.js';
import { header, http } from '../support/http.js';
import { setWikiToggle } from '../support/wiki.js';

describe('answers holding the requester`s address', () => {
  const wiki = inject('wikiUrl');
  const data = inject('wikiData');
  let gw: RunningGateway;
  beforeAll(async () => {
    // The wiki trusts the gateway's X-Forwarded-For ($wgCdnServersNoPurge); the gateway trusts
    // the test client's (loopback is a trusted proxy by default).
    await setWikiToggle(data, { trustProxy: ['127.0.0.1'] });
    gw = await startGateway(wiki);
  });
  afterAll(async () => {
    await gw.close();
    await setWikiToggle(data, { trustProxy: [] });
  });

  const from = (ip: string) => ({ 'x-forwarded-for': ip });

  it('a signature preview (parse, pst, ~~~) is never served to another client', async () => {
    const q = `${gw.apiUrl}?action=parse&text=${encodeURIComponent('~~~')}&pst=1&contentmodel=wikitext&format=json&uselang=content&requestid=${randomUUID()}`;
    const first = await http(q, { headers: from('203.0.113.7') });
    expect(first.body).toContain('203.0.113.7');
    // The wiki itself would let a shared cache keep it:
    const direct = await http(q.replace(gw.apiUrl, `${wiki}/w/api.php`).concat('&smaxage=60&maxage=60'), {
      headers: from('203.0.113.7'),
    });
    expect(header(direct, 'cache-control')).toMatch(/public/);
    const other = await http(q, { headers: from('198.51.100.9') });
    expect(header(other, 'x-cache')).not.toBe('hit');
    expect(other.body).not.toContain('203.0.113.7');
    expect(other.body).toContain('198.51.100.9');
  });

  it('the general net: any anonymous answer holding the address the wiki was told is not shared', async () => {
    // A page signed by an anonymous editor holds that editor's address; read back by the same
    // address, the answer mentions the requester and is not stored in the shared tier.
    const title = `Signed_${randomUUID()}`;
    const edit = await http(gw.apiUrl, {
      method: 'POST',
      headers: { ...from('203.0.113.21'), 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ action: 'edit', title, text: 'Signed: ~~~~', token: '+\\', format: 'json' }).toString(),
    });
    expect(JSON.parse(edit.body).edit?.result).toBe('Success');
    const q = `${gw.apiUrl}?action=query&prop=revisions&rvprop=content|user&rvslots=main&titles=${title}&format=json&uselang=content`;
    const metrics = async () => (await http(`${gw.adminUrl}/metrics`)).body;
    const count = (text: string) => Number(/wikiedge_not_stored_total\{reason="requester-address"\} (\d+)/.exec(text)?.[1] ?? 0);
    const before = count(await metrics());
    const own = await http(q, { headers: from('203.0.113.21') });
    expect(own.body).toContain('203.0.113.21');
    expect(count(await metrics())).toBe(before + 1);
    const again = await http(q, { headers: from('203.0.113.21') });
    expect(header(again, 'x-cache')).not.toBe('hit');
    // Anyone else's read of the same page is shared as usual (the editor's address in the page
    // history is public: it is not the requester's).
    await http(q, { headers: from('198.51.100.77') });
    const shared = await http(q, { headers: from('198.51.100.78') });
    expect(header(shared, 'x-cache')).toBe('hit');
  });
});
