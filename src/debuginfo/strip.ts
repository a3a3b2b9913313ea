/**
 * Removes MediaWiki's `debuginfo` block from an API answer before it is stored, sent or logged.
 *
 * With `$wgDebugToolbar` on, MediaWiki 1.39 appends the block on the success path only
 * (`ApiMain::executeAction()` → `MWDebug::appendDebugInfoToApiResult()`, which does
 * `$result->addValue( null, 'debuginfo', $debugInfo )`). It echoes the request headers (Cookie
 * included), every SQL query and ~930 included files: ~90 KB per answer.
 *
 * Every printer of 1.39 core is handled, byte for byte:
 * | format (Content-Type)                              | where the block is                                  |
 * |----------------------------------------------------|-----------------------------------------------------|
 * | json, fv1/fv2, utf8/ascii (`application/json`)     | top-level member `"debuginfo":{…}`                  |
 * | JSONP, `callback=` (`text/javascript`)             | same, inside `/**∕cb(…)`                            |
 * | xml, also rsd and opensearch (`text/xml`, `+xml`)  | child `<debuginfo …>…</debuginfo>` of the root      |
 * | php (`application/vnd.php.serialized`)             | top-level pair `s:9:"debuginfo";a:N:{…}`            |
 * | jsonfm/xmlfm/phpfm/rawfm, no format (`text/html`)  | the above, HTML-escaped in `<pre class="api-pretty-content">`, |
 * |                                                    | PLUS a second copy for the toolbar: `mw.config.set({"debugInfo":{…}});` in a `<script>` |
 * | `wrappedhtml=1` (`text/mediawiki-api-prettyprint-wrapped`) | the `<pre>` above, inside the JSON string `"html"` |
 * | `action=help&wrap=1` (`application/json`)          | top-level member, plus the toolbar copy inside the JSON string `help.help` |
 * | none                                               | empty body                                          |
 *
 * Only the top-level member is removed: the word anywhere else (a page title, a nested key) is left
 * alone. Everything is linear scanning with `indexOf`; no regular expression runs over the body.
 * When the body carries the word but cannot be parsed with certainty, `DebuginfoStripError` is
 * thrown so the caller can fail closed instead of leaking.
 */

/** Where the stripped block was found; used as the `format` label of `wikiedge_debuginfo_stripped_total`. */
export type DebuginfoFormat = 'json' | 'jsonp' | 'xml' | 'php' | 'html' | 'wrappedhtml';
export const DEBUGINFO_FORMATS: readonly DebuginfoFormat[] = [
  'json',
  'jsonp',
  'xml',
  'php',
  'html',
  'wrappedhtml',
];

export interface StripResult {
  /** The answer without the block; the same Buffer when nothing was removed. */
  body: Buffer;
  /** The parsed block (for XML, PHP and HTML a best-effort object with the same fields). */
  debuginfo: Record<string, unknown> | undefined;
  /** Set when something was removed. */
  format?: DebuginfoFormat;
}

export class DebuginfoStripError extends Error {
  override readonly name = 'DebuginfoStripError';
}

const WORD = Buffer.from('debuginfo');
/** The toolbar's copy in HTML pages (`MWDebug::getDebugHTML`) is spelled in camelCase. */
const WORD_CAMEL = Buffer.from('debugInfo');

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
    if ((c === 0x69 || c === 0x49) && body[i + 6] === 0x6e && body[i + 7] === 0x66 && body[i + 8] === 0x6f)
      return true;
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
  throw new DebuginfoStripError(
    `cannot tell the format of a body that mentions debuginfo (type ${mime || 'none'})`,
  );
}

// ---------------------------------------------------------------- byte helpers

const QUOTE = 0x22;
const BACKSLASH = 0x5c;

function startsWith(b: Buffer, i: number, s: string): boolean {
  if (i + s.length > b.length) return false;
  for (let k = 0; k < s.length; k++) if (b[i + k] !== s.charCodeAt(k)) return false;
  return true;
}

function isWs(c: number | undefined): boolean {
  return c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;
}

function skipWs(b: Buffer, i: number, end: number): number {
  while (i < end && isWs(b[i])) i++;
  return i;
}

function bytesEqual(b: Buffer, start: number, end: number, word: Buffer): boolean {
  return end - start === word.length && b.compare(word, 0, word.length, start, end) === 0;
}

function fail(what: string, at: number): never {
  throw new DebuginfoStripError(`${what} at byte ${at}`);
}

// ---------------------------------------------------------------- JSON

/** Index just past the closing quote of the JSON string starting at `i`. */
function scanJsonString(b: Buffer, i: number, end: number): number {
  let j = i + 1;
  for (;;) {
    const q = b.indexOf(QUOTE, j);
    if (q === -1 || q >= end) fail('unterminated JSON string', i);
    let k = q - 1;
    while (b[k] === BACKSLASH) k--;
    if ((q - 1 - k) % 2 === 0) return q + 1;
    j = q + 1;
  }
}

/** Index just past the JSON value starting at `i` (brackets matched, strings skipped). */
function scanJsonValue(b: Buffer, i: number, end: number): number {
  const c = b[i];
  if (c === QUOTE) return scanJsonString(b, i, end);
  if (c === 0x7b || c === 0x5b) {
    const stack: number[] = [];
    let j = i;
    while (j < end) {
      const d = b[j]!;
      if (d === QUOTE) {
        j = scanJsonString(b, j, end);
        continue;
      }
      if (d === 0x7b) stack.push(0x7d);
      else if (d === 0x5b) stack.push(0x5d);
      else if (d === 0x7d || d === 0x5d) {
        if (stack.pop() !== d) fail('mismatched JSON bracket', j);
        if (stack.length === 0) return j + 1;
      }
      j++;
    }
    fail('unterminated JSON container', i);
  }
  // number, true, false, null
  let j = i;
  while (j < end) {
    const d = b[j];
    if (d === 0x2c || d === 0x7d || d === 0x5d || isWs(d)) break;
    j++;
  }
  if (j === i) fail('expected a JSON value', i);
  return j;
}

interface JsonMember {
  keyStart: number;
  keyEnd: number;
  valueStart: number;
  valueEnd: number;
}

interface JsonObjectScan {
  open: number;
  close: number;
  members: JsonMember[];
}

/** Scans the members of the JSON object at `i` (one level only). */
function scanJsonObject(b: Buffer, i: number, end: number): JsonObjectScan {
  if (b[i] !== 0x7b) fail('expected a JSON object', i);
  const members: JsonMember[] = [];
  let j = skipWs(b, i + 1, end);
  if (b[j] === 0x7d) return { open: i, close: j, members };
  for (;;) {
    if (b[j] !== QUOTE) fail('expected a JSON key', j);
    const keyStart = j;
    const keyEnd = scanJsonString(b, j, end);
    j = skipWs(b, keyEnd, end);
    if (b[j] !== 0x3a) fail('expected ":"', j);
    const valueStart = skipWs(b, j + 1, end);
    const valueEnd = scanJsonValue(b, valueStart, end);
    members.push({ keyStart, keyEnd, valueStart, valueEnd });
    j = skipWs(b, valueEnd, end);
    if (b[j] === 0x2c) {
      j = skipWs(b, j + 1, end);
      continue;
    }
    if (b[j] === 0x7d) return { open: i, close: j, members };
    fail('expected "," or "}"', j);
  }
}

function jsonKeyIs(b: Buffer, m: JsonMember, word: Buffer): boolean {
  const s = m.keyStart + 1;
  const e = m.keyEnd - 1;
  if (b.indexOf(BACKSLASH, s) === -1 || b.indexOf(BACKSLASH, s) >= e) return bytesEqual(b, s, e, word);
  // An escaped key (never written by MediaWiki, but decode it rather than be fooled).
  return JSON.parse(b.toString('utf8', m.keyStart, m.keyEnd)) === word.toString('latin1');
}

function findMember(b: Buffer, scan: JsonObjectScan, word: Buffer): number {
  let found = -1;
  scan.members.forEach((m, k) => {
    if (jsonKeyIs(b, m, word)) {
      if (found !== -1) fail('duplicate top-level key', m.keyStart);
      found = k;
    }
  });
  return found;
}

/** The byte range to cut so that the member and one separating comma go, and nothing else. */
function memberCut(scan: JsonObjectScan, k: number): [number, number] {
  const m = scan.members[k]!;
  if (scan.members.length === 1) return [scan.open + 1, scan.close]; // → "{}", as PHP writes an empty object
  if (k > 0) return [scan.members[k - 1]!.valueEnd, m.valueEnd]; // ',<ws>"debuginfo":…'
  return [m.keyStart, scan.members[1]!.keyStart]; // '"debuginfo":…,<ws>'
}

function parseJsonObject(b: Buffer, start: number, end: number): Record<string, unknown> | undefined {
  let v: unknown;
  try {
    v = JSON.parse(b.toString('utf8', start, end));
  } catch (err) {
    throw new DebuginfoStripError('debuginfo is not valid JSON', { cause: err });
  }
  return v !== null && typeof v === 'object' && !Array.isArray(v)
    ? (v as Record<string, unknown>)
    : undefined;
}

function splice(b: Buffer, start: number, end: number, insert?: Buffer): Buffer {
  return insert
    ? Buffer.concat([b.subarray(0, start), insert, b.subarray(end)])
    : Buffer.concat([b.subarray(0, start), b.subarray(end)]);
}

/** JSON object at [start, end) (surrounded by whitespace only). */
function stripJson(b: Buffer, start: number, end: number, format: DebuginfoFormat): StripResult {
  const i = skipWs(b, start, end);
  if (b[i] !== 0x7b) {
    // A top-level array (opensearch) or scalar has no top-level member.
    if (b[i] === 0x5b || b[i] === QUOTE) {
      if (skipWs(b, scanJsonValue(b, i, end), end) !== end) fail('trailing bytes after JSON', i);
      return { body: b, debuginfo: undefined };
    }
    fail('expected a JSON object', i);
  }
  const scan = scanJsonObject(b, i, end);
  if (skipWs(b, scan.close + 1, end) !== end) fail('trailing bytes after JSON', scan.close + 1);
  const k = findMember(b, scan, WORD);
  if (k === -1) return { body: b, debuginfo: undefined };
  const m = scan.members[k]!;
  const debuginfo = parseJsonObject(b, m.valueStart, m.valueEnd);
  const [cs, ce] = memberCut(scan, k);
  return { body: splice(b, cs, ce), debuginfo, format };
}

/** `/**∕cb(…)`: `ApiFormatJson` strips the callback to `[][.'"_A-Za-z0-9]`, so the first `(` opens the JSON. */
function stripJsonp(b: Buffer): StripResult {
  if (!startsWith(b, 0, '/**/')) fail('JSONP without the /**/ prefix', 0);
  const open = b.indexOf(0x28, 4);
  if (open === -1) fail('JSONP without "("', 4);
  for (let k = 4; k < open; k++) {
    const c = b[k]!;
    const ok =
      (c >= 0x30 && c <= 0x39) ||
      (c >= 0x41 && c <= 0x5a) ||
      (c >= 0x61 && c <= 0x7a) ||
      '][.\'"_'.includes(String.fromCharCode(c));
    if (!ok) fail('unexpected byte in JSONP callback', k);
  }
  if (b[b.length - 1] !== 0x29) fail('JSONP not closed by ")"', b.length - 1);
  const r = stripJson(b, open + 1, b.length - 1, 'jsonp');
  return r.format ? r : { body: b, debuginfo: undefined };
}

// ---------------------------------------------------------------- PHP-compatible JSON string encoding

/**
 * `json_encode($s, JSON_UNESCAPED_SLASHES [| JSON_UNESCAPED_UNICODE])` as PHP 8.2 writes it (checked
 * with php -r): `\"`, `\\`, `\b\f\n\r\t`, other controls as lowercase `\u00xx`, U+2028/2029 always
 * escaped, and without UNESCAPED_UNICODE every non-ASCII UTF-16 unit as lowercase `\uxxxx`.
 */
function phpJsonString(s: string, unescapedUnicode: boolean): string {
  let out = '"';
  let last = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    let rep: string | undefined;
    if (c === 0x22) rep = '\\"';
    else if (c === 0x5c) rep = '\\\\';
    else if (c < 0x20) {
      rep =
        c === 0x08
          ? '\\b'
          : c === 0x0c
            ? '\\f'
            : c === 0x0a
              ? '\\n'
              : c === 0x0d
                ? '\\r'
                : c === 0x09
                  ? '\\t'
                  : '\\u' + c.toString(16).padStart(4, '0');
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
function rewriteJsonStringHtml(
  b: Buffer,
  start: number,
  end: number,
  rewrite: (html: Buffer) => StripResult,
): StripResult | undefined {
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

/** `wrappedhtml=1`: `{"status":…,"html":"<pre class=…>…</pre>",…}` (FormatJson::ALL_OK). */
function stripWrappedHtml(b: Buffer): StripResult {
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

/**
 * `action=help&wrap=1`: the help page (with the toolbar's copy) is the JSON string `help.help`
 * of the JSON object that starts at `from` (0, or inside a JSONP callback).
 */
function stripHelpWrapToolbar(r: StripResult, from = 0): StripResult {
  const b = r.body;
  if (b.indexOf(WORD_CAMEL) === -1) return r;
  const i = skipWs(b, from, b.length);
  if (b[i] !== 0x7b) return r;
  const top = scanJsonObject(b, i, b.length);
  const k = findMember(b, top, Buffer.from('help'));
  if (k === -1) return r;
  const helpValue = top.members[k]!;
  if (b[helpValue.valueStart] !== 0x7b) return r;
  const inner = scanJsonObject(b, helpValue.valueStart, helpValue.valueEnd);
  const h = findMember(b, inner, Buffer.from('help'));
  if (h === -1) return r;
  const m = inner.members[h]!;
  if (b[m.valueStart] !== QUOTE) return r;
  const done = rewriteJsonStringHtml(b, m.valueStart, m.valueEnd, stripHtml);
  if (!done) return r;
  return { body: done.body, debuginfo: r.debuginfo ?? done.debuginfo, format: r.format ?? 'json' };
}

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

// ---------------------------------------------------------------- HTML (the *fm formats)

const PRE_OPEN = Buffer.from('<pre class="api-pretty-content">');
const PRE_CLOSE = Buffer.from('</pre>');
const AMP_ESC = Buffer.from('&amp;');
const LT_ESC = Buffer.from('&lt;');

/** Inverse of `Html::element()`'s escaping (`&` → `&amp;`, `<` → `&lt;`, nothing else). */
function htmlTextDecode(b: Buffer): Buffer {
  const lt = b.indexOf(0x3c);
  if (lt !== -1) fail('raw "<" in escaped HTML text', lt);
  const out = Buffer.allocUnsafe(b.length);
  let o = 0;
  let i = 0;
  for (;;) {
    const amp = b.indexOf(0x26, i);
    const stop = amp === -1 ? b.length : amp;
    o += b.copy(out, o, i, stop);
    if (amp === -1) break;
    if (startsWith(b, amp, '&amp;')) {
      out[o++] = 0x26;
      i = amp + 5;
    } else if (startsWith(b, amp, '&lt;')) {
      out[o++] = 0x3c;
      i = amp + 4;
    } else fail('entity that Html::element() does not write', amp);
  }
  return out.subarray(0, o);
}

function htmlTextEncode(b: Buffer): Buffer {
  const parts: Buffer[] = [];
  let i = 0;
  for (let k = 0; k < b.length; k++) {
    const c = b[k];
    if (c === 0x26 || c === 0x3c) {
      parts.push(b.subarray(i, k), c === 0x26 ? AMP_ESC : LT_ESC);
      i = k + 1;
    }
  }
  parts.push(b.subarray(i));
  return Buffer.concat(parts);
}

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

function stripHtml(b: Buffer): StripResult {
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

// ---------------------------------------------------------------- XML

interface XmlElement {
  name: string;
  attrs: Record<string, string>;
  children: XmlElement[];
  text: string;
}

function isNameEnd(c: number | undefined): boolean {
  return c === undefined || isWs(c) || c === 0x2f || c === 0x3e;
}

/** Index of the `>` closing the tag opened at `lt`, skipping quoted attribute values. */
function tagEnd(b: Buffer, lt: number): number {
  let j = lt + 1;
  while (j < b.length) {
    const c = b[j];
    if (c === QUOTE || c === 0x27) {
      const q = b.indexOf(c, j + 1);
      if (q === -1) fail('unterminated attribute value', j);
      j = q + 1;
      continue;
    }
    if (c === 0x3e) return j;
    if (c === 0x3c) fail('"<" inside a tag', j);
    j++;
  }
  fail('unterminated tag', lt);
}

function findOrFail(b: Buffer, needle: string, from: number): number {
  const i = b.indexOf(needle, from);
  if (i === -1) fail(`missing "${needle}"`, from);
  return i;
}

/**
 * ApiFormatXml writes the root element (`api`, or `rsd` / `SearchSuggestion` for the custom
 * printers) with the block as a direct child: `<debuginfo mwVersion=… memory=…><log>…</debuginfo>`.
 * xmlfm pretty-prints with newline + 2-space indentation; that whitespace goes with the element.
 */
function stripXml(b: Buffer): StripResult {
  const names: string[] = [];
  let start = -1;
  let cut: [number, number] | undefined;
  let i = 0;
  for (;;) {
    const lt = b.indexOf(0x3c, i);
    if (lt === -1) break;
    const c = b[lt + 1];
    if (c === 0x3f) {
      i = findOrFail(b, '?>', lt + 2) + 2;
    } else if (c === 0x21) {
      if (startsWith(b, lt, '<!--')) i = findOrFail(b, '-->', lt + 4) + 3;
      else if (startsWith(b, lt, '<![CDATA[')) i = findOrFail(b, ']]>', lt + 9) + 3;
      else i = tagEnd(b, lt) + 1;
    } else if (c === 0x2f) {
      const gt = tagEnd(b, lt);
      let ne = lt + 2;
      while (!isNameEnd(b[ne])) ne++;
      const name = b.toString('latin1', lt + 2, ne);
      if (names.pop() !== name) fail(`mismatched </${name}>`, lt);
      if (start !== -1 && names.length === 1) {
        if (cut) fail('two debuginfo elements', start);
        cut = [start, gt + 1];
        start = -1;
      }
      i = gt + 1;
    } else {
      const gt = tagEnd(b, lt);
      let ne = lt + 1;
      while (!isNameEnd(b[ne])) ne++;
      if (ne === lt + 1) fail('empty tag name', lt);
      const selfClosing = b[gt - 1] === 0x2f;
      const childOfRoot = names.length === 1 && bytesEqual(b, lt + 1, ne, WORD);
      if (childOfRoot) {
        if (cut) fail('two debuginfo elements', lt);
        start = lt;
      }
      if (selfClosing) {
        if (childOfRoot) {
          cut = [lt, gt + 1];
          start = -1;
        }
      } else {
        names.push(b.toString('latin1', lt + 1, ne));
      }
      i = gt + 1;
    }
  }
  if (names.length !== 0) fail('unclosed XML element', b.length);
  if (!cut) return { body: b, debuginfo: undefined };
  // Take the indentation in front of the element too (whitespace-only text after a tag).
  let s = cut[0];
  while (s > 0 && isWs(b[s - 1])) s--;
  if (b[s - 1] !== 0x3e) s = cut[0];
  const element = parseXmlElement(b.subarray(cut[0], cut[1]));
  return { body: splice(b, s, cut[1]), debuginfo: xmlDebuginfoObject(element), format: 'xml' };
}

function decodeXmlEntities(s: string): string {
  if (!s.includes('&')) return s;
  let out = '';
  let i = 0;
  for (;;) {
    const amp = s.indexOf('&', i);
    if (amp === -1) return out + s.slice(i);
    out += s.slice(i, amp);
    const semi = s.indexOf(';', amp);
    const ent = semi === -1 || semi - amp > 10 ? '' : s.slice(amp + 1, semi);
    let rep: string | undefined;
    if (ent === 'amp') rep = '&';
    else if (ent === 'lt') rep = '<';
    else if (ent === 'gt') rep = '>';
    else if (ent === 'quot') rep = '"';
    else if (ent === 'apos') rep = "'";
    else if (ent.startsWith('#x') || ent.startsWith('#X')) rep = codePoint(Number.parseInt(ent.slice(2), 16));
    else if (ent.startsWith('#')) rep = codePoint(Number.parseInt(ent.slice(1), 10));
    if (rep === undefined) {
      out += '&';
      i = amp + 1;
    } else {
      out += rep;
      i = semi + 1;
    }
  }
}

function codePoint(n: number): string | undefined {
  return Number.isInteger(n) && n >= 0 && n <= 0x10ffff ? String.fromCodePoint(n) : undefined;
}

/** A small tree for the (already bounded and validated) debuginfo element. */
function parseXmlElement(b: Buffer): XmlElement {
  const root: XmlElement = { name: '#root', attrs: {}, children: [], text: '' };
  const stack: XmlElement[] = [root];
  let i = 0;
  for (;;) {
    const lt = b.indexOf(0x3c, i);
    const textEnd = lt === -1 ? b.length : lt;
    if (textEnd > i) stack[stack.length - 1]!.text += decodeXmlEntities(b.toString('utf8', i, textEnd));
    if (lt === -1) break;
    const gt = tagEnd(b, lt);
    if (b[lt + 1] === 0x2f) {
      stack.pop();
      i = gt + 1;
      continue;
    }
    const selfClosing = b[gt - 1] === 0x2f;
    const tag = b.toString('utf8', lt + 1, selfClosing ? gt - 1 : gt);
    const el: XmlElement = { name: '', attrs: {}, children: [], text: '' };
    let k = 0;
    while (k < tag.length && !/\s/.test(tag[k]!)) k++;
    el.name = tag.slice(0, k);
    // attributes: name="value" pairs (values never hold a raw '"': htmlspecialchars ENT_QUOTES)
    for (;;) {
      const eq = tag.indexOf('="', k);
      if (eq === -1) break;
      const close = tag.indexOf('"', eq + 2);
      if (close === -1) break;
      el.attrs[tag.slice(k, eq).trim()] = decodeXmlEntities(tag.slice(eq + 2, close));
      k = close + 1;
    }
    stack[stack.length - 1]!.children.push(el);
    if (!selfClosing) stack.push(el);
    i = gt + 1;
  }
  const el = root.children[0];
  if (!el) fail('empty debuginfo element', 0);
  return el;
}

/** Containers MWDebug marks with setIndexedTagName: log/line, debugLog/msg, queries/query, includes/queries. */
const XML_LISTS = new Set(['log', 'debugLog', 'queries', 'includes']);
const XML_NUMBERS = new Set(['time']);

function xmlItem(el: XmlElement): unknown {
  const attrNames = Object.keys(el.attrs).filter((a) => a !== 'xml:space');
  if (attrNames.length === 0 && el.children.length === 0) return el.text;
  return xmlObject(el);
}

function xmlObject(el: XmlElement): Record<string, unknown> {
  const o: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(el.attrs)) {
    if (k === 'xml:space') continue;
    o[k] = XML_NUMBERS.has(k) && v !== '' && Number.isFinite(Number(v)) ? Number(v) : v;
  }
  for (const child of el.children) {
    o[child.name] = XML_LISTS.has(child.name) ? child.children.map(xmlItem) : xmlItem(child);
  }
  return o;
}

function xmlDebuginfoObject(el: XmlElement): Record<string, unknown> {
  return xmlObject(el);
}

// ---------------------------------------------------------------- PHP serialize()

const PHP_MAX_DEPTH = 512;

/** Reads the unsigned decimal at `i` up to `stop`; returns [value, index of stop]. */
function phpInt(b: Buffer, i: number, stop: number): [number, number] {
  let j = i;
  let n = 0;
  while (b[j]! >= 0x30 && b[j]! <= 0x39) {
    n = n * 10 + (b[j]! - 0x30);
    j++;
  }
  if (j === i || b[j] !== stop || j - i > 15) fail('bad length in serialized PHP', i);
  return [n, j];
}

/**
 * Parses (build = true) or skips one serialize() value at `i`. Returns [value, end]. The API's
 * result data holds only arrays and scalars (no objects: ApiFormatPhp passes 'Types' => []).
 */
function phpValue(b: Buffer, i: number, build: boolean, depth: number): [unknown, number] {
  const t = b[i];
  if (b[i + 1] !== (t === 0x4e ? 0x3b : 0x3a)) fail('bad serialized PHP value', i);
  switch (t) {
    case 0x4e: // N;
      return [null, i + 2];
    case 0x62: {
      // b:0; b:1;
      if (b[i + 3] !== 0x3b || (b[i + 2] !== 0x30 && b[i + 2] !== 0x31)) fail('bad serialized bool', i);
      return [b[i + 2] === 0x31, i + 4];
    }
    case 0x69: // i:-12;
    case 0x64: {
      // d:0.5; d:1.0E-5; d:INF; d:NAN;
      const semi = b.indexOf(0x3b, i + 2);
      if (semi === -1 || semi - i > 40) fail('bad serialized number', i);
      const text = b.toString('latin1', i + 2, semi);
      const n =
        text === 'INF' ? Infinity : text === '-INF' ? -Infinity : text === 'NAN' ? Number.NaN : Number(text);
      if (text === '' || (Number.isNaN(n) && text !== 'NAN')) fail('bad serialized number', i);
      return [n, semi + 1];
    }
    case 0x73: {
      // s:3:"abc";  (length in bytes)
      const [len, colon] = phpInt(b, i + 2, 0x3a);
      const s = colon + 2;
      if (b[colon + 1] !== QUOTE || b[s + len] !== QUOTE || b[s + len + 1] !== 0x3b)
        fail('bad serialized string', i);
      return [build ? b.toString('utf8', s, s + len) : undefined, s + len + 2];
    }
    case 0x61: {
      // a:2:{k;v;k;v;}
      if (depth > PHP_MAX_DEPTH) fail('serialized PHP nested too deeply', i);
      const [count, colon] = phpInt(b, i + 2, 0x3a);
      if (b[colon + 1] !== 0x7b) fail('bad serialized array', i);
      let j = colon + 2;
      const keys: (string | number)[] = [];
      const values: unknown[] = [];
      for (let n = 0; n < count; n++) {
        if (b[j] !== 0x69 && b[j] !== 0x73) fail('bad serialized array key', j);
        const [k, afterKey] = phpValue(b, j, build, depth + 1);
        const [v, afterValue] = phpValue(b, afterKey, build, depth + 1);
        if (build) {
          keys.push(k as string | number);
          values.push(v);
        }
        j = afterValue;
      }
      if (b[j] !== 0x7d) fail('serialized array not closed', j);
      if (!build) return [undefined, j + 1];
      const isList = keys.every((k, n) => k === n);
      if (isList) return [values, j + 1];
      const o: Record<string, unknown> = {};
      keys.forEach((k, n) => {
        o[String(k)] = values[n];
      });
      return [o, j + 1];
    }
    default:
      fail('unsupported serialized PHP type', i);
  }
}

const PHP_KEY = Buffer.from('s:9:"debuginfo";');

/** Top-level `a:N:{…}`: cut the pair `s:9:"debuginfo";a:M:{…}` and write `a:N-1:{`. */
function stripPhp(b: Buffer): StripResult {
  if (b[0] !== 0x61 || b[1] !== 0x3a) {
    // serialize() of a non-array has no member at all
    const [, end] = phpValue(b, 0, false, 0);
    if (end !== b.length) fail('trailing bytes after serialized PHP', end);
    return { body: b, debuginfo: undefined };
  }
  const [count, colon] = phpInt(b, 2, 0x3a);
  if (b[colon + 1] !== 0x7b) fail('bad serialized array', 0);
  const bodyStart = colon + 2;
  let j = bodyStart;
  let cut: [number, number] | undefined;
  let debuginfo: Record<string, unknown> | undefined;
  for (let n = 0; n < count; n++) {
    const keyStart = j;
    if (b[j] !== 0x69 && b[j] !== 0x73) fail('bad serialized array key', j);
    const [, afterKey] = phpValue(b, j, false, 1);
    const isDebuginfo =
      afterKey - keyStart === PHP_KEY.length &&
      b.compare(PHP_KEY, 0, PHP_KEY.length, keyStart, afterKey) === 0;
    const [value, afterValue] = phpValue(b, afterKey, isDebuginfo, 1);
    if (isDebuginfo) {
      if (cut) fail('two debuginfo keys', keyStart);
      cut = [keyStart, afterValue];
      debuginfo =
        value !== null && typeof value === 'object' && !Array.isArray(value)
          ? (value as Record<string, unknown>)
          : undefined;
    }
    j = afterValue;
  }
  if (b[j] !== 0x7d || j + 1 !== b.length) fail('trailing bytes after serialized PHP', j);
  if (!cut) return { body: b, debuginfo: undefined };
  const head = Buffer.from(`a:${count - 1}:{`, 'latin1');
  const out = Buffer.concat([head, b.subarray(bodyStart, cut[0]), b.subarray(cut[1])]);
  return { body: out, debuginfo, format: 'php' };
}
