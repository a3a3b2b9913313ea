// A write's pages were read from the query string wherever the body did not give a string: a
// body naming `title[]=` (an array, which MediaWiki reads as no title at all: WebRequest's data is
// `$_POST + $_GET` and getVal() returns null for an array), or a body the gateway could not read
// whole (past max_input_vars, or too large to hold; a multipart body's parts past max_input_vars
// were not even counted). The wiki edited the page the body named by
// `pageid`, and the gateway invalidated the namespaces of whatever titles the query string
// listed: one anonymous edit of a sandbox emptied every Template: and MediaWiki: list. Now the
// body's shape wins as in PHP, and an unreadable body's pages come from the answer alone
// (src/steps/pass.ts invalidateWrite).
import { describe, expect, it } from 'vitest';
import { gatewayOnFake } from '../support/gateway-on-fake.js';
import { header, http } from '../support/http.js';
import { sandboxEditWiki, templatesCached } from '../support/sandbox-edit-wiki.js';

const FORM = { 'content-type': 'application/x-www-form-urlencoded' };

describe('an anonymous edit of the sandbox, with other titles in the query string', () => {
  // The page the body named by pageid, whatever the query string says.
  const pair = gatewayOnFake(sandboxEditWiki().handler);

  it('a body naming `title[]`: the query string`s titles are not the edited page', async () => {
    const list = await templatesCached(pair);
    const w = await http(`${pair.gw.apiUrl}?title=Template:Infobox|MediaWiki:Common.css`, {
      method: 'POST',
      headers: FORM,
      body: 'action=edit&pageid=1&title%5B%5D=&appendtext=x&format=json&token=%2B%5C',
    });
    expect(w.body).toContain('"Sandbox"');
    await pair.gw.built.gateway.afterAnswers.settled(5_000);
    expect(header(await http(list), 'x-cache')).toContain('hit');
  });

  it('a body past max_input_vars: its pages are the answer`s alone', async () => {
    const list = await templatesCached(pair);
    const padding = Array.from({ length: 1_001 }, (_, i) => `p${i}=`).join('&');
    const w = await http(`${pair.gw.apiUrl}?title=Template:Infobox`, {
      method: 'POST',
      headers: FORM,
      body: `action=edit&pageid=1&appendtext=x&format=json&token=%2B%5C&${padding}`,
    });
    expect(w.body).toContain('"Sandbox"');
    await pair.gw.built.gateway.afterAnswers.settled(5_000);
    expect(header(await http(list), 'x-cache')).toContain('hit');
  });

  it('a multipart body whose `title` comes after 1,000 other parts: PHP never reads it', async () => {
    const list = await templatesCached(pair);
    const boundary = 'wikiedgeboundary';
    const part = (name: string, value: string) => `--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`;
    const body = [
      part('action', 'edit'),
      part('pageid', '1'),
      part('appendtext', 'x'),
      part('format', 'json'),
      part('token', '+\\'),
      ...Array.from({ length: 1_000 }, (_, i) => part(`p${i}`, '')),
      part('title', 'Template:Infobox|MediaWiki:Common.css'),
      `--${boundary}--\r\n`,
    ].join('');
    const w = await http(`${pair.gw.apiUrl}?title=Sandbox`, {
      method: 'POST',
      headers: { 'content-type': `multipart/form-data; boundary=${boundary}` },
      body,
    });
    expect(w.body).toContain('"Sandbox"');
    await pair.gw.built.gateway.afterAnswers.settled(5_000);
    expect(header(await http(list), 'x-cache')).toContain('hit');
  });

  it('the control: the edited page`s own namespace goes', async () => {
    const mainList = `${pair.gw.apiUrl}?action=query&list=allpages&apnamespace=0&format=json`;
    await http(mainList);
    await pair.gw.built.gateway.afterAnswers.settled(5_000);
    expect(header(await http(mainList), 'x-cache')).toContain('hit');
    await http(pair.gw.apiUrl, { method: 'POST', headers: FORM, body: 'action=edit&pageid=1&appendtext=x&format=json&token=%2B%5C' });
    await pair.gw.built.gateway.afterAnswers.settled(5_000);
    expect(header(await http(mainList), 'x-cache')).not.toContain('hit');
  });
});
