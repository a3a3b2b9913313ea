// The gateway's own errors (a wiki it cannot reach: 502) take the shape of the wiki's errors for
// the same format parameters: MediaWiki's error formatter for the five `errorformat` values
// ApiMain knows and the back-compatible `error` object for any other (ApiMain::__construct), each
// format's fields (ApiErrorFormatter::formatMessageInternal: `text`, `html`, `key` and `params`,
// the code alone), formatversion 1's `*`, XML's elements and attributes (ApiFormatXml), and JSONP
// for any callback, stripped of what it may not hold (ApiFormatJson::execute). The oracle is the
// real wiki's own error for an unknown action.
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { type RunningGateway, startGateway } from '../support/gateway.js';
import { header, http } from '../support/http.js';

/** The answer's structure: every field's name and type, values left out. */
function shape(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(shape);
  if (typeof value === 'object' && value !== null) {
    return Object.fromEntries(
      Object.entries(value)
        .filter(([k]) => k !== 'servedby' && k !== 'data')
        .sort(([a], [b]) => a.localeCompare(b))
        // A message's parameters are its own (raw: the wiki's message has some, ours none).
        .map(([k, v]) => [k, k === 'params' && Array.isArray(v) ? 'array' : shape(v)]),
    );
  }
  return typeof value;
}

// The JSON inside a JSONP answer (`/**/cb({...})`), and the callback name.
function unwrap(body: string): { callback: string | undefined; json: unknown } {
  const m = /^\/\*\*\/([^(]*)\(([\s\S]*)\)$/.exec(body);
  return m ? { callback: m[1], json: JSON.parse(m[2]!) } : { callback: undefined, json: JSON.parse(body) };
}

/** An XML answer's structure: each element's name and its attributes' names, in order. */
function xmlShape(body: string): string[] {
  return [...body.matchAll(/<([A-Za-z_][\w:.-]*)((?:\s+[\w:.-]+="[^"]*")*)\s*\/?>/g)].map(
    ([, name, attrs]) =>
      `${name}(${[...attrs!.matchAll(/([\w:.-]+)=/g)]
        .map((a) => a[1])
        .sort()
        .join(',')})`,
  );
}

describe('gateway errors beside the wiki’s', () => {
  const wiki = inject('wikiUrl');
  let gw: RunningGateway;
  beforeAll(async () => {
    // Nothing listens on port 1: every miss is the gateway's own 502.
    gw = await startGateway('http://127.0.0.1:1');
  });
  afterAll(() => gw.close());

  const CASES = [
    'format=json',
    'format=json&formatversion=2',
    ...['plaintext', 'wikitext', 'html', 'raw', 'none', 'bc', 'foo', '', 'HTML'].flatMap((f) => [
      `format=json&errorformat=${f}`,
      `format=json&formatversion=2&errorformat=${f}`,
    ]),
    'format=json&callback=cb',
    'format=json&callback=my-cb%3Balert(1)',
    'format=json&formatversion=2&errorformat=plaintext&callback=a.b%5B0%5D',
  ];

  it.each(['bc', 'plaintext', 'html', 'raw', 'none'].flatMap((f) => [`format=xml&errorformat=${f}`, `format=xml&formatversion=2&errorformat=${f}`]))(
    '%s',
    async (params) => {
      const ours = await http(`${gw.apiUrl}?action=query&meta=siteinfo&${params}`);
      const theirs = await http(`${wiki}/w/api.php?action=nosuch&${params}`);
      expect(ours.status).toBe(502);
      expect(header(ours, 'content-type')).toBe(header(theirs, 'content-type'));
      // A message's parameters are its own (raw: the wiki's message has some, ours none).
      const upToParams = (body: string) => xmlShape(body.replace(/<params>[\s\S]*<\/params>/, '<params />'));
      expect(upToParams(ours.body)).toEqual(upToParams(theirs.body));
    },
  );

  it.each(CASES)('%s', async (params) => {
    const ours = await http(`${gw.apiUrl}?action=query&meta=siteinfo&${params}`);
    const theirs = await http(`${wiki}/w/api.php?action=nosuch&${params}`);
    expect(ours.status).toBe(502);
    expect(header(ours, 'content-type')).toBe(header(theirs, 'content-type'));
    const [a, b] = [unwrap(ours.body), unwrap(theirs.body)];
    expect(a.callback).toBe(b.callback);
    expect(shape(a.json)).toEqual(shape(b.json));
  });
});
