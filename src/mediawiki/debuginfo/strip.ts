/**
 * Removes MediaWiki's `debuginfo` block from an API answer before it is stored, sent or logged.
 *
 * With `$wgDebugToolbar` on, MediaWiki 1.39 appends the block on the success path only
 * (`ApiMain::executeAction()` → `MWDebug::appendDebugInfoToApiResult()`, which does
 * `$result->addValue( null, 'debuginfo', $debugInfo )`). It echoes the request headers (Cookie
 * included), every SQL query and ~930 included files: ~90 KB per answer.
 *
 * Every printer of 1.39 core is handled, byte for byte, each by its own module:
 * | format (Content-Type)                              | where the block is                                  | module |
 * |----------------------------------------------------|-----------------------------------------------------|--------|
 * | json, fv1/fv2, utf8/ascii (`application/json`)     | top-level member `"debuginfo":{…}`                  | json.ts |
 * | JSONP, `callback=` (`text/javascript`)             | same, inside `/**∕cb(…)`                            | jsonp.ts |
 * | xml, also rsd and opensearch (`text/xml`, `+xml`)  | child `<debuginfo …>…</debuginfo>` of the root      | xml.ts |
 * | php (`application/vnd.php.serialized`)             | top-level pair `s:9:"debuginfo";a:N:{…}`            | php.ts |
 * | jsonfm/xmlfm/phpfm/rawfm, no format (`text/html`)  | the above, HTML-escaped in `<pre class="api-pretty-content">`, | html.ts |
 * |                                                    | PLUS a second copy for the toolbar: `mw.config.set({"debugInfo":{…}});` in a `<script>` | |
 * | `wrappedhtml=1` (`text/mediawiki-api-prettyprint-wrapped`) | the `<pre>` above, inside the JSON string `"html"` | wrapped-html.ts |
 * | `action=help&wrap=1` (`application/json`)          | top-level member, plus the toolbar copy inside the JSON string `help.help` | json.ts, help-wrap.ts |
 * | none                                               | empty body                                          | |
 *
 * Only the top-level member is removed: the word anywhere else (a page title, a nested key) is left
 * alone. Everything is linear scanning with `indexOf` (bytes.ts, json-scan.ts); no regular
 * expression runs over the body. When the body carries the word but cannot be parsed with
 * certainty, `DebuginfoStripError` is thrown so the caller can fail closed instead of leaking.
 * This module only tells the format and hands the body to its parser.
 */
import { skipWs, startsWith } from './bytes.js';
import { stripHelpWrapToolbar } from './help-wrap.js';
import { stripHtml, toolbarCopyAt } from './html.js';
import { stripJson } from './json.js';
import { stripJsonp } from './jsonp.js';
import { stripPhp } from './php.js';
import { type DebuginfoFormat, DebuginfoStripError, type StripResult, fail } from './result.js';
import { stripWrappedHtml } from './wrapped-html.js';
import { stripXml } from './xml.js';

export { DEBUGINFO_FORMATS, type DebuginfoFormat, DebuginfoStripError, type StripResult } from './result.js';
export { toolbarCopyAt } from './html.js';

const DEBUG = Buffer.from('debug');

/**
 * Cheap pre-check: false means the body holds neither `debuginfo` nor the toolbar's `debugInfo`
 * and needs no parsing. One `indexOf` pass for "debug" (measured ~15 µs on a real 97 KB answer
 * without the word; two full `indexOf` scans for both spellings cost ~70 µs).
 */
export function mayCarryDebuginfo(body: Buffer): boolean {
  let i = 0;
  for (;;) {
    i = body.indexOf(DEBUG, i);
    if (i === -1) return false;
    const c = body[i + 5];
    if ((c === 0x69 || c === 0x49) && body[i + 6] === 0x6e && body[i + 7] === 0x66 && body[i + 8] === 0x6f) return true;
    i += 5;
  }
}

export function stripDebuginfo(body: Buffer, contentType: string | undefined): StripResult {
  if (!mayCarryDebuginfo(body)) return { body, debuginfo: undefined };
  try {
    const result = stripKnown(body, classify(contentType, body));
    // Every copy, in every format, or none: a toolbar copy this parser did not remove (the help
    // page of action=help&wrap=1 inside xml, php or an HTML rendering, or a format not known
    // yet) makes the whole answer refused rather than sent with the request's cookies.
    const left = toolbarCopyAt(result.body);
    if (left !== -1) fail('a debug toolbar copy (mw.config.set({"debugInfo"…) is left', left);
    return result;
  } catch (err) {
    // Anything unexpected (a JSON.parse SyntaxError, a RangeError) is a parse failure too: fail closed.
    if (err instanceof DebuginfoStripError) throw err;
    throw new DebuginfoStripError('cannot parse a body that mentions debuginfo', { cause: err });
  }
}

function stripKnown(body: Buffer, kind: DebuginfoFormat): StripResult {
  switch (kind) {
    case 'json': {
      const r = stripJson(body, 0, body.length, 'json');
      return stripHelpWrapToolbar(r);
    }
    case 'jsonp': {
      const r = stripJsonp(body);
      return stripHelpWrapToolbar(r, r.body.indexOf(0x28, 4) + 1);
    }
    case 'xml':
      return stripXml(body);
    case 'php':
      return stripPhp(body);
    case 'html':
      return stripHtml(body);
    case 'wrappedhtml':
      return stripWrappedHtml(body);
  }
}

// ---------------------------------------------------------------- classification

function classify(contentType: string | undefined, body: Buffer): DebuginfoFormat {
  const mime = (contentType ?? '').split(';', 1)[0]!.trim().toLowerCase();
  if (mime === 'application/json') return 'json';
  if (mime === 'text/javascript' || mime === 'application/javascript') return 'jsonp';
  if (mime === 'text/mediawiki-api-prettyprint-wrapped') return 'wrappedhtml';
  if (mime === 'text/html') return 'html';
  if (mime === 'application/vnd.php.serialized') return 'php';
  if (mime === 'text/xml' || mime === 'application/xml' || mime.endsWith('+xml')) return 'xml';
  // Unknown or missing type: look at the first bytes.
  const i = skipWs(body, 0, body.length);
  if (startsWith(body, i, '{')) return 'json';
  if (startsWith(body, i, '/**/')) return 'jsonp';
  if (startsWith(body, i, '<!DOCTYPE html') || startsWith(body, i, '<html')) return 'html';
  if (startsWith(body, i, '<')) return 'xml';
  if (startsWith(body, i, 'a:')) return 'php';
  throw new DebuginfoStripError(`cannot tell the format of a body that mentions debuginfo (type ${mime || 'none'})`);
}
