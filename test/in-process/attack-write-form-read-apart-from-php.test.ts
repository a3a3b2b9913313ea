// A write's pages were read from the form as the gateway parsed it, where PHP parsed it otherwise:
// PHP cuts the media type at the first `;`, `,` or space (main/SAPI.c sapi_read_post_data), so
// `application/x-www-form-urlencoded, x` is a form to PHP, which edits the body's `title`, and was
// none to the gateway, which took the query string's `title` for the edited page; PHP finds the
// multipart boundary at the first `boundary` of the header (main/rfc1867.c), so `xboundary=A;
// boundary=B` splits on A for PHP and was split on B here. One anonymous edit of the sandbox then
// emptied the lists of every namespace the query string named and, naming a Property: page,
// every answer showing a statement. Now a write's pages are those its answer names, the request's
// only when the answer names none (src/policy/changes.ts changeFromWrite), and the form is read
// as PHP reads it or not at all (src/mediawiki/php-post.ts).
import { describe, expect, it } from 'vitest';
import { gatewayOnFake } from '../support/gateway-on-fake.js';
import { header, http } from '../support/http.js';
import { sandboxEditWiki, templatesCached } from '../support/sandbox-edit-wiki.js';

const wiki = sandboxEditWiki();
/** What the gateway read as the edited pages, had it read the query string. */
const DECOY = `?action=edit&title=${encodeURIComponent('Template:Infobox')}`;
const EDIT = 'action=edit&title=Sandbox&appendtext=x&format=json&token=%2B%5C';

describe('an anonymous edit of the sandbox whose form the gateway read apart from PHP', () => {
  const pair = gatewayOnFake(wiki.handler);

  it('a form-encoded body whose Content-Type goes on after a comma: the Template: list stays', async () => {
    const list = await templatesCached(pair);
    const w = await http(`${pair.gw.apiUrl}${DECOY}`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded, x' }, body: EDIT });
    expect(w.body).toContain('"Sandbox"');
    await pair.gw.built.gateway.afterAnswers.settled(5_000);
    expect(header(await http(list), 'x-cache')).toContain('hit');
  });

  it('a multipart body with two boundary parameters, split by PHP on the first: the Template: list stays', async () => {
    const list = await templatesCached(pair);
    const part = (b: string, name: string, value: string) => `--${b}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`;
    // PHP reads the parts delimited by AAA (the edit of the sandbox); a reader of `boundary=`
    // alone found the BBB part naming a template, or nothing and then the query string.
    const body = [
      part('AAA', 'action', 'edit'),
      part('AAA', 'title', 'Sandbox'),
      part('AAA', 'appendtext', 'x'),
      part('AAA', 'token', '+\\'),
      '--AAA--\r\n',
      part('BBB', 'title', 'Template:Infobox'),
      '--BBB--\r\n',
    ].join('');
    const w = await http(`${pair.gw.apiUrl}${DECOY}&format=json`, {
      method: 'POST',
      headers: { 'content-type': 'multipart/form-data; xboundary=AAA; boundary=BBB' },
      body,
    });
    expect(w.body).toContain('"Sandbox"');
    await pair.gw.built.gateway.afterAnswers.settled(5_000);
    expect(header(await http(list), 'x-cache')).toContain('hit');
  });

  it('the control: an edit whose answer names the template empties the Template: list', async () => {
    const list = await templatesCached(pair);
    wiki.edited = 'Template:Infobox';
    try {
      const w = await http(pair.gw.apiUrl, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: 'action=edit&title=Template:Infobox&appendtext=x&format=json&token=%2B%5C',
      });
      expect(w.body).toContain('"Template:Infobox"');
    } finally {
      wiki.edited = 'Sandbox';
    }
    await pair.gw.built.gateway.afterAnswers.settled(5_000);
    expect(header(await http(list), 'x-cache')).not.toContain('hit');
  });
});
