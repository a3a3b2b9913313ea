// Attack class 53: a feed filtered by who asks, shared. `action=feedrecentchanges&hidemyself=1`
// hands `hidemyself` to Special:RecentChanges, whose filter (ChangesListSpecialPage::
// registerFilters, the `authorship` group) leaves out the rows whose actor is the current user:
// for an anonymous reader, its IP address. ApiFeedRecentChanges::execute marks the answer public
// all the same. Shared, it lets an anonymous vandal hide their own edits from every reader of the
// feed, and the feed tells everyone whose edits are missing: who fetched it. A boolean API
// parameter is true when present, whatever its value (PresenceBooleanDef). The stand-in below
// answers as MediaWiki 1.39 does (its Cache-Control and Content-Type are the real wiki's).
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { describe, expect, it } from 'vitest';
import { gatewayOnFake } from '../support/gateway-on-fake.js';
import { header, http } from '../support/http.js';

/** The recent changes: page and actor (an anonymous editor is named by its address). */
const CHANGES = [
  { title: 'Vandalised_page', actor: '203.0.113.66' },
  { title: 'Someone_elses_page', actor: '198.51.100.1' },
];

/** A wiki answering action=feedrecentchanges as MediaWiki 1.39 does: public, filtered by its requester on `hidemyself`. */
function feedWiki(req: IncomingMessage, res: ServerResponse): void {
  const query = new URL(req.url ?? '/', 'http://wiki').searchParams;
  const requester = String(req.headers['x-forwarded-for'] ?? '')
    .split(',')[0]!
    .trim();
  const rows = query.has('hidemyself') ? CHANGES.filter((c) => c.actor !== requester) : CHANGES;
  res.writeHead(200, {
    'content-type': 'application/xml; charset=UTF-8',
    'cache-control': 'max-age=15, s-maxage=15, public',
    vary: 'Accept-Encoding, Cookie, Treat-as-Untrusted',
  });
  res.end(
    '<?xml version="1.0"?><feed xmlns="http://www.w3.org/2005/Atom">' +
      rows.map((c) => `<entry><title>${c.title}</title><author><name>${c.actor}</name></author></entry>`).join('') +
      '</feed>',
  );
}

const from = (ip: string) => ({ 'x-forwarded-for': ip });

describe('a recent changes feed filtered by its requester (class 53)', () => {
  const t = gatewayOnFake(feedWiki);

  it.each(['hidemyself=1', 'hidemyself=0', 'hidemyself='])('%s: the vandal`s feed without its edits is never a reader`s', async (param) => {
    const url = `${t.gw.apiUrl}?action=feedrecentchanges&feedformat=atom&${param}&requestid=${randomUUID()}`;
    const vandal = await http(url, { headers: from('203.0.113.66') });
    expect(vandal.body).not.toContain('Vandalised_page');
    const reader = await http(url, { headers: from('198.51.100.9') });
    expect(header(reader, 'x-cache')).toBe('pass');
    expect(reader.body).toContain('Vandalised_page');
  });

  it('nor does a reader`s filtered feed go to the next reader (whose edits it would hide, or show)', async () => {
    const url = `${t.gw.apiUrl}?action=feedrecentchanges&feedformat=atom&hidemyself=1&requestid=${randomUUID()}`;
    const first = await http(url, { headers: from('198.51.100.1') });
    expect(first.body).not.toContain('Someone_elses_page');
    const again = await http(url, { headers: from('198.51.100.1') });
    expect(header(again, 'x-cache')).toBe('pass');
    const vandal = await http(url, { headers: from('203.0.113.66') });
    expect(header(vandal, 'x-cache')).toBe('pass');
    expect(vandal.body).toContain('Someone_elses_page');
    expect(vandal.body).not.toContain('Vandalised_page');
  });

  it('the feed without the filter is everyone`s: shared as before', async () => {
    const url = `${t.gw.apiUrl}?action=feedrecentchanges&feedformat=atom&requestid=${randomUUID()}`;
    // Readers who edited nothing in it (an editor's own read holds its address: class 17's net).
    await http(url, { headers: from('198.51.100.8') });
    const reader = await http(url, { headers: from('198.51.100.9') });
    expect(header(reader, 'x-cache')).toBe('hit');
    expect(reader.body).toContain('Vandalised_page');
  });
});

describe('a requester-filtered feed passes whatever the operator`s module rules (class 53)', () => {
  // An operator's rule for the module (a TTL of its own) does not make the filtered feed shareable.
  const t = gatewayOnFake(feedWiki, { WIKIEDGE_MODULES: JSON.stringify({ feedrecentchanges: { ttlSeconds: 60 } }) });

  it('hidemyself=1 still passes', async () => {
    const url = `${t.gw.apiUrl}?action=feedrecentchanges&feedformat=atom&hidemyself=1&requestid=${randomUUID()}`;
    await http(url, { headers: from('203.0.113.66') });
    const reader = await http(url, { headers: from('198.51.100.9') });
    expect(header(reader, 'x-cache')).toBe('pass');
    expect(reader.body).toContain('Vandalised_page');
  });
});
