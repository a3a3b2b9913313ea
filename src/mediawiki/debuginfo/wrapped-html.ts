/**
 * `wrappedhtml=1` (`text/mediawiki-api-prettyprint-wrapped`): ApiFormatBase wraps the HTML
 * rendering of html.ts in a JSON object, as the JSON string `"html"`.
 */
import { skipWs } from './bytes.js';
import { stripHtml } from './html.js';
import { stripJson } from './json.js';
import { findMember, scanJsonObject } from './json-scan.js';
import { rewriteJsonStringHtml } from './json-string.js';
import { type StripResult, fail } from './result.js';

const QUOTE = 0x22; // "

/** `wrappedhtml=1`: `{"status":…,"html":"<pre class=…>…</pre>",…}` (FormatJson::ALL_OK). */
export function stripWrappedHtml(b: Buffer): StripResult {
  const top = stripJson(b, 0, b.length, 'wrappedhtml');
  const body = top.body;
  const i = skipWs(body, 0, body.length);
  if (body[i] !== 0x7b) fail('expected a JSON object', i);
  const scan = scanJsonObject(body, i, body.length);
  const k = findMember(body, scan, Buffer.from('html'));
  if (k === -1) return top;
  const m = scan.members[k]!;
  if (body[m.valueStart] !== QUOTE) return top;
  const r = rewriteJsonStringHtml(body, m.valueStart, m.valueEnd, stripHtml);
  if (!r) return top;
  return { body: r.body, debuginfo: top.debuginfo ?? r.debuginfo, format: 'wrappedhtml' };
}
