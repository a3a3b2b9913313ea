/**
 * JSON strings as PHP writes them, for the two answers that carry an HTML page inside one
 * (`wrappedhtml=1`, `action=help&wrap=1`): the page is decoded, stripped, and written back with
 * the escaping MediaWiki used, so the answer stays byte for byte what the wiki would send.
 */
import { splice } from './bytes.js';
import { type StripResult, fail } from './result.js';

/**
 * `json_encode($s, JSON_UNESCAPED_SLASHES [| JSON_UNESCAPED_UNICODE])` as PHP 8.2 writes it (checked
 * with php -r): `\"`, `\\`, `\b\f\n\r\t`, other controls as lowercase `\u00xx`, U+2028/2029 always
 * escaped, and without UNESCAPED_UNICODE every non-ASCII UTF-16 unit as lowercase `\uxxxx`.
 */
export function phpJsonString(s: string, unescapedUnicode: boolean): string {
  let out = '"';
  let last = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    let rep: string | undefined;
    if (c === 0x22) rep = '\\"';
    else if (c === 0x5c) rep = '\\\\';
    else if (c < 0x20) {
      rep = c === 0x08 ? '\\b' : c === 0x0c ? '\\f' : c === 0x0a ? '\\n' : c === 0x0d ? '\\r' : c === 0x09 ? '\\t' : '\\u' + c.toString(16).padStart(4, '0');
    } else if (c === 0x2028 || c === 0x2029 || (!unescapedUnicode && c > 0x7e && c !== 0x7f)) {
      rep = '\\u' + c.toString(16).padStart(4, '0');
    }
    if (rep !== undefined) {
      out += s.slice(last, i) + rep;
      last = i + 1;
    }
  }
  return out + s.slice(last) + '"';
}

/**
 * Rewrites the HTML held in the JSON string token [start, end) with `rewrite`, proving first that
 * re-encoding the untouched string gives back exactly the original token.
 */
export function rewriteJsonStringHtml(b: Buffer, start: number, end: number, rewrite: (html: Buffer) => StripResult): StripResult | undefined {
  const token = b.subarray(start, end);
  const text = JSON.parse(token.toString('utf8')) as unknown;
  if (typeof text !== 'string') return undefined;
  const original = token.toString('utf8');
  const unicode = phpJsonString(text, true) === original;
  if (!unicode && phpJsonString(text, false) !== original) fail('JSON string does not round-trip', start);
  const html = Buffer.from(text, 'utf8');
  const r = rewrite(html);
  if (!r.format) return undefined;
  return {
    ...r,
    body: splice(b, start, end, Buffer.from(phpJsonString(r.body.toString('utf8'), unicode), 'utf8')),
  };
}
