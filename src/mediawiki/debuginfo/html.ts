/**
 * The HTML renderings (`text/html`): jsonfm/xmlfm/phpfm/rawfm and no format. ApiFormatBase writes
 * the result of the underlying printer HTML-escaped in `<pre class="api-pretty-content">`, and with
 * the toolbar on, the page carries a second copy for it: `mw.config.set({"debugInfo":{…}});`.
 */
import { bytesEqual, skipWs, splice, startsWith } from './bytes.js';
import { htmlTextDecode, htmlTextEncode } from './html-text.js';
import { stripJson } from './json.js';
import { parseJsonObject, scanJsonObject, scanJsonString } from './json-scan.js';
import { stripJsonp } from './jsonp.js';
import { stripPhp } from './php.js';
import { type StripResult, WORD, WORD_CAMEL, fail } from './result.js';
import { stripXml } from './xml.js';

const QUOTE = 0x22; // "

/** How far before `debugInfo` the toolbar's `mw.config.set(` may be, escapes included (`({\\&quot;`). */
const TOOLBAR_LOOKBACK = 48;
const CONFIG_SET_CALL = Buffer.from('config.set(');

/**
 * Where a debug toolbar copy (`mw.config.set({"debugInfo":…`, MWDebug::getHTMLDebugLog's
 * script) starts in `b`, in any encoding of its quotes, or -1. Only the word right after a
 * `config.set(` counts: the word in page text is left alone.
 */
export function toolbarCopyAt(b: Buffer): number {
  let i = b.indexOf(WORD_CAMEL);
  while (i !== -1) {
    const window = b.subarray(Math.max(0, i - TOOLBAR_LOOKBACK), i);
    const at = window.lastIndexOf(CONFIG_SET_CALL);
    if (at !== -1) return i - window.length + at;
    i = b.indexOf(WORD_CAMEL, i + WORD_CAMEL.length);
  }
  return -1;
}

const PRE_OPEN = Buffer.from('<pre class="api-pretty-content">');
const PRE_CLOSE = Buffer.from('</pre>');

function stripPreContent(text: Buffer): StripResult {
  const i = skipWs(text, 0, text.length);
  if (startsWith(text, i, '{')) return stripJson(text, 0, text.length, 'json');
  if (startsWith(text, i, '/**/')) return stripJsonp(text);
  if (startsWith(text, i, '<')) return stripXml(text);
  if (startsWith(text, i, 'a:')) return stripPhp(text);
  fail('unknown content in <pre class="api-pretty-content">', i);
}

const CONFIG_SET = Buffer.from('mw.config.set(');

/**
 * The toolbar's copy: `MWDebug::getDebugHTML()` emits
 * `ResourceLoader::makeConfigSetScript(['debugInfo' => …])` = `mw.config.set({"debugInfo":{…}});`
 * (JSON with JSON_HEX_TAG|JSON_HEX_AMP, pretty when ResourceLoader is in debug mode), inside an
 * inline `<script>` that OutputPage may share with other statements. Only that statement is cut.
 */
function stripToolbarScripts(b: Buffer): {
  body: Buffer;
  debuginfo: Record<string, unknown> | undefined;
  n: number;
} {
  const cuts: [number, number][] = [];
  let debuginfo: Record<string, unknown> | undefined;
  let from = 0;
  for (;;) {
    const at = b.indexOf(CONFIG_SET, from);
    if (at === -1) break;
    from = at + CONFIG_SET.length;
    const open = skipWs(b, from, b.length);
    if (b[open] !== 0x7b) continue;
    const firstKey = skipWs(b, open + 1, b.length);
    if (b[firstKey] !== QUOTE) continue;
    const keyEnd = scanJsonString(b, firstKey, b.length);
    if (!bytesEqual(b, firstKey + 1, keyEnd - 1, WORD_CAMEL)) continue;
    const scan = scanJsonObject(b, open, b.length);
    if (scan.members.length !== 1) fail('toolbar config with other keys', open);
    const close = skipWs(b, scan.close + 1, b.length);
    if (b[close] !== 0x29 || b[close + 1] !== 0x3b) fail('toolbar config not closed by ");"', close);
    const m = scan.members[0]!;
    debuginfo ??= parseJsonObject(b, m.valueStart, m.valueEnd);
    cuts.push([at, close + 2]);
    from = close + 2;
  }
  if (cuts.length === 0) return { body: b, debuginfo: undefined, n: 0 };
  const parts: Buffer[] = [];
  let i = 0;
  for (const [s, e] of cuts) {
    parts.push(b.subarray(i, s));
    i = e;
  }
  parts.push(b.subarray(i));
  return { body: Buffer.concat(parts), debuginfo, n: cuts.length };
}

const PAGE_MODULES = Buffer.from('RLPAGEMODULES=[');
const DEBUG_MODULE = Buffer.from(',"mediawiki.debug"');

/**
 * With the toolbar on, OutputPage also queues the `mediawiki.debug` module, which reads the config
 * we just removed; take it out of `RLPAGEMODULES=[…]` so the page is what MediaWiki sends with the
 * toolbar off (verified against the lab wiki, debug on vs off).
 */
function dropDebugModule(b: Buffer): Buffer {
  const list = b.indexOf(PAGE_MODULES);
  if (list === -1) return b;
  const close = b.indexOf(0x5d, list);
  const at = b.indexOf(DEBUG_MODULE, list);
  if (at === -1 || close === -1 || at > close) return b;
  return splice(b, at, at + DEBUG_MODULE.length);
}

export function stripHtml(b: Buffer): StripResult {
  let body = b;
  let debuginfo: Record<string, unknown> | undefined;
  let stripped = false;
  const preOpen = body.indexOf(PRE_OPEN);
  if (preOpen !== -1) {
    const start = preOpen + PRE_OPEN.length;
    const end = body.indexOf(PRE_CLOSE, start);
    if (end === -1) fail('unclosed <pre class="api-pretty-content">', preOpen);
    const escaped = body.subarray(start, end);
    if (escaped.indexOf(WORD) !== -1) {
      const text = htmlTextDecode(escaped);
      // Prove the decode is exact before trusting a re-encode.
      if (!htmlTextEncode(text).equals(escaped)) fail('<pre> content does not round-trip', start);
      const inner = stripPreContent(text);
      if (inner.format) {
        body = splice(body, start, end, htmlTextEncode(inner.body));
        debuginfo = inner.debuginfo;
        stripped = true;
      }
    }
  } else if (body.indexOf(WORD) !== -1 && body.indexOf('api-pretty-header') !== -1) {
    // An API pretty-print page whose result is not in the plain <pre> (e.g. a highlighter hook):
    // the block may be in there, in a shape we do not know.
    fail('API result page without <pre class="api-pretty-content">', 0);
  }
  const toolbar = stripToolbarScripts(body);
  if (toolbar.n > 0) {
    body = dropDebugModule(toolbar.body);
    debuginfo ??= toolbar.debuginfo;
    stripped = true;
  }
  return stripped ? { body, debuginfo, format: 'html' } : { body: b, debuginfo: undefined };
}
