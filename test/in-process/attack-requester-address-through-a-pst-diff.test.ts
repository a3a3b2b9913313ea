// Attack class 52: the requester's address in a shared answer, through a diff against
// pre-save-transformed text. `action=query&prop=revisions&rvdifftotext=~~~&rvdifftotextpst=1`
// makes MediaWiki pre-save-transform the supplied text as the current user
// (ApiQueryRevisionsBase::extractDeprecatedContent: ContentTransformer::preSaveTransform with
// $this->getUser()), so `~~~` becomes the anonymous requester's signature, its IP address, while
// getCacheMode says public. The diff marks the address up piece by piece
// (`203</ins>.<ins …>0</ins>…`), and the client writes the text, so it may have the name printed
// in any spelling (`{{subst:urlencode:{{subst:REVISIONUSER}}}}`: `2001%3ADB8%3A…`): the byte search
// for the address finds neither. The same holds for every module of ApiQueryRevisionsBase
// (prop=deletedrevisions `drv`, list=allrevisions `arv`, list=alldeletedrevisions `adr`) and for
// each as a generator (`g` before the prefix). The stand-in below answers as MediaWiki 1.39 does
// (the diffs below are the real wiki's, trimmed to the added line).
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { describe, expect, it } from 'vitest';
import { gatewayOnFake } from '../support/gateway-on-fake.js';
import { header, http } from '../support/http.js';

/** The name MediaWiki gives an anonymous requester: the first address of the X-Forwarded-For it trusts. */
function requesterOf(req: IncomingMessage): string {
  const address = String(req.headers['x-forwarded-for'] ?? '')
    .split(',')[0]!
    .trim();
  // IPUtils::sanitizeIP: IPv6 in upper case, `::` expanded.
  if (!address.includes(':')) return address;
  const [head, tail] = address.split('::') as [string, string | undefined];
  const words = [
    ...head.split(':'),
    ...Array<string>(8 - head.split(':').length - (tail ? tail.split(':').length : 0)).fill('0'),
    ...(tail ? tail.split(':') : []),
  ];
  return words.map((w) => Number.parseInt(w, 16).toString(16).toUpperCase()).join(':');
}

const INS = '<ins class="diffchange diffchange-inline">';

/**
 * The diff of the supplied text, pre-save-transformed as `name`, as DifferenceEngine marks it up
 * against the page: `~~~` is `[[Special:Contributions/<name>|<name>]]`, every piece of the address
 * in its own <ins>; `{{subst:urlencode:{{subst:REVISIONUSER}}}}` is the name urlencoded
 * (`2001%3ADB8%3A0%3A0%3A0%3A0%3A0%3A7`, one <ins>). Both as the real wiki answers them.
 */
function signatureDiff(text: string, name: string): string {
  if (text.includes('urlencode')) return `<td class="diff-addedline diff-side-added"><div>${INS}${encodeURIComponent(name)}</ins></div></td>`;
  const marked = name
    .split(/([.:])/)
    .map((p) => (p === '.' || p === ':' ? `</ins>${p}${INS}` : p))
    .join('');
  return `<td class="diff-addedline diff-side-added"><div>[[Special:${INS}Contributions</ins>/${INS}${marked}|${marked}</ins>]]</div></td>`;
}

/** A wiki answering the revision modules as MediaWiki 1.39 does, public whatever the requester. */
function revisionsWiki(req: IncomingMessage, res: ServerResponse): void {
  const query = new URL(req.url ?? '/', 'http://wiki').searchParams;
  const text = [...query].find(([name]) => name.endsWith('difftotext'))?.[1] ?? '';
  // The transform runs only when the request asks for it: otherwise the diff shows the text as sent.
  const pst = [...query.keys()].some((name) => name.endsWith('difftotextpst'));
  const body = pst ? signatureDiff(text, requesterOf(req)) : `<td class="diff-addedline diff-side-added"><div>${INS}${text}</ins></div></td>`;
  res.writeHead(200, {
    'content-type': 'application/json; charset=utf-8',
    'cache-control': 's-maxage=300, max-age=300, public',
    vary: 'Accept-Encoding, Treat-as-Untrusted, Cookie',
  });
  res.end(JSON.stringify({ batchcomplete: '', query: { pages: { '1': { revisions: [{ revid: 1, diff: { '*': body } }] } } } }));
}

describe('the requester`s address through a diff against pre-save-transformed text (class 52)', () => {
  // The default trusted proxies: loopback (the test client) is one, so its X-Forwarded-For is the
  // requester the wiki is told.
  const t = gatewayOnFake(revisionsWiki);
  const from = (ip: string) => ({ 'x-forwarded-for': ip });

  const pstRequests: [string, string][] = [
    ['prop=revisions', 'action=query&prop=revisions&titles=Main_Page&rvdifftotext=~~~&rvdifftotextpst=1'],
    ['list=allrevisions', 'action=query&list=allrevisions&arvlimit=1&arvdifftotext=~~~&arvdifftotextpst=1'],
    ['prop=deletedrevisions', 'action=query&prop=deletedrevisions&titles=Main_Page&drvdifftotext=~~~&drvdifftotextpst=1'],
    ['list=alldeletedrevisions', 'action=query&list=alldeletedrevisions&adrlimit=1&adrdifftotext=~~~&adrdifftotextpst=1'],
    ['generator=revisions', 'action=query&generator=revisions&titles=Main_Page&grvdifftotext=~~~&grvdifftotextpst=1'],
    ['generator=allrevisions', 'action=query&generator=allrevisions&garvdifftotext=~~~&garvdifftotextpst=1'],
    // A boolean API parameter is true when present, whatever its value (PresenceBooleanDef).
    ['rvdifftotextpst=0 (true: present)', 'action=query&prop=revisions&titles=Main_Page&rvdifftotext=~~~&rvdifftotextpst=0'],
  ];

  it.each(pstRequests)('%s: one anonymous reader`s signature is never another`s answer', async (_what, q) => {
    const url = `${t.gw.apiUrl}?${q}&format=json&requestid=${randomUUID()}`;
    const first = await http(url, { headers: from('203.0.113.7') });
    expect(first.body).toContain('>113</ins>');
    // The premise: the address is in the answer, but not as bytes the general net could find.
    expect(first.body).not.toContain('203.0.113.7');
    const other = await http(url, { headers: from('198.51.100.9') });
    expect(header(other, 'x-cache')).not.toBe('hit');
    expect(other.body).not.toContain('>113</ins>');
    expect(other.body).toContain('>51</ins>');
  });

  it('an IPv6 reader`s name, marked up by the diff, is never shared', async () => {
    const url = `${t.gw.apiUrl}?action=query&prop=revisions&titles=Main_Page&rvdifftotext=~~~&rvdifftotextpst=1&format=json&requestid=${randomUUID()}`;
    const first = await http(url, { headers: from('2001:db8::7') });
    expect(first.body).toContain('>7</ins>]]');
    const other = await http(url, { headers: from('2001:db8::9') });
    expect(header(other, 'x-cache')).not.toBe('hit');
    expect(other.body).not.toContain('>7</ins>]]');
  });

  it('a name the supplied text urlencodes ({{subst:urlencode:{{subst:REVISIONUSER}}}}) is never shared', async () => {
    const text = encodeURIComponent('{{subst:urlencode:{{subst:REVISIONUSER}}}}');
    const url = `${t.gw.apiUrl}?action=query&prop=revisions&titles=Main_Page&rvdifftotext=${text}&rvdifftotextpst=1&format=json&requestid=${randomUUID()}`;
    const first = await http(url, { headers: from('2001:db8::7') });
    expect(first.body).toContain('2001%3ADB8%3A0%3A0%3A0%3A0%3A0%3A7');
    const other = await http(url, { headers: from('2001:db8::9') });
    expect(header(other, 'x-cache')).not.toBe('hit');
    expect(other.body).not.toContain('2001%3ADB8%3A0%3A0%3A0%3A0%3A0%3A7');
  });

  it('the same diff without the transform prints no one: shared as before', async () => {
    const url = `${t.gw.apiUrl}?action=query&prop=revisions&titles=Main_Page&rvdifftotext=~~~&format=json&requestid=${randomUUID()}`;
    await http(url, { headers: from('203.0.113.7') });
    const other = await http(url, { headers: from('198.51.100.9') });
    expect(header(other, 'x-cache')).toBe('hit');
  });
});
