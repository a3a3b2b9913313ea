/**
 * `$_POST` as PHP 8.2 builds it from a request body, for the parameters that name the modules a
 * request runs: MediaWiki reads them from `$_POST + $_GET` (WebRequest::__construct: the body's
 * value wins over the query's), so a POSTed login, edit or logout runs the module its form names,
 * whatever the query string says.
 *
 * PHP fills `$_POST` for two content types only (main/php_content_types.c):
 * - `application/x-www-form-urlencoded`: the body parsed as a query string is (php_std_post_handler,
 *   the same treat_data rules as `$_GET`: php-input.ts);
 * - `multipart/form-data; boundary=…` (main/rfc1867.c): each part without a `filename` is a
 *   variable named by its Content-Disposition `name`, its value the part's bytes as they are
 *   (nothing decoded), registered with the same name rules as `$_GET`.
 * Any other type leaves `$_POST` empty: the query string alone names the modules.
 */
import { type PhpArray, parsePhpForm, parsePhpQuery, PHP_DEFAULT_MAX_INPUT_VARS, reachedMaxInputVars } from './php-input.js';

/**
 * PHP's max_file_uploads default: with max_multipart_body_parts at its default (-1), a body of more
 * than max_input_vars + max_file_uploads parts is refused whole (main/rfc1867.c).
 */
const PHP_DEFAULT_MAX_FILE_UPLOADS = 20;

/** What a body says about `$_POST`: its variables, none (not a form), or unknown (a form not read). */
export type PostedForm = { readonly kind: 'form'; readonly post: PhpArray } | { readonly kind: 'none' } | { readonly kind: 'unreadable' };

/**
 * The form a body holds. `body` is the body read whole, or undefined when it was not (too large
 * to hold: it was streamed on as it came).
 * @param only the variables wanted (their PHP names); multipart parts named otherwise are skipped
 */
export function postedForm(contentType: string | undefined, body: Buffer | undefined, only: ReadonlySet<string>): PostedForm {
  const type = phpMediaType(contentType ?? '');
  const multipart = type === 'multipart/form-data';
  if (type !== 'application/x-www-form-urlencoded' && !multipart) return { kind: 'none' };
  if (body === undefined) return { kind: 'unreadable' };
  // Past post_max_size PHP fills no `$_POST` at all (SAPI.c sapi_read_post_data); a wiki may allow
  // more, so a body past PHP's default is not read here either way.
  if (body.length > PHP_DEFAULT_POST_MAX_SIZE) return { kind: 'unreadable' };
  if (!multipart) {
    const post = parsePhpForm(body.toString('latin1'));
    // Past max_input_vars a wiki allowing more reads variables we did not.
    return reachedMaxInputVars(post) ? { kind: 'unreadable' } : { kind: 'form', post };
  }
  const boundary = boundaryOf(contentType ?? '');
  if (boundary === undefined) return { kind: 'unreadable' };
  const fields = multipartFields(body.toString('latin1'), boundary, only);
  return fields === undefined ? { kind: 'unreadable' } : { kind: 'form', post: fields };
}

/** `$_POST + $_GET`: MediaWiki's request data, the body's variables first. */
export function requestData(get: PhpArray, post: PhpArray): PhpArray {
  if (post.size === 0) return get;
  const data = new Map(get);
  for (const [name, value] of post) data.set(name, value);
  return data;
}

/**
 * The media type as PHP's SAPI reads it (main/SAPI.c sapi_read_post_data): cut at the first `;`,
 * `,` or space, ASCII lowercased, nothing trimmed. `application/x-www-form-urlencoded, x` is a
 * form to PHP (a trim and a split on `;` alone read it as none, and the query string's `title`
 * was taken for the body's); ` multipart/form-data` is none.
 */
function phpMediaType(contentType: string): string {
  const end = contentType.search(/[;, ]/);
  return asciiLower(end === -1 ? contentType : contentType.slice(0, end));
}

function asciiLower(s: string): string {
  return s.replace(/[A-Z]+/g, (upper) => upper.toLowerCase());
}

/**
 * The boundary as main/rfc1867.c finds it: the first `boundary` in the whole header (as written,
 * else in any case), the first `=` after it, then a quoted value up to its closing quote, or the
 * rest up to a `,` or `;` (spaces kept). `xboundary=A; boundary=B` is split on A.
 */
function boundaryOf(contentType: string): string | undefined {
  let at = contentType.indexOf('boundary');
  if (at === -1) at = asciiLower(contentType).indexOf('boundary');
  const eq = at === -1 ? -1 : contentType.indexOf('=', at);
  if (eq === -1) return undefined;
  let value = contentType.slice(eq + 1);
  if (value.startsWith('"')) {
    const close = value.indexOf('"', 1);
    if (close === -1) return undefined;
    value = value.slice(1, close);
  } else {
    const end = value.search(/[,;]/);
    if (end !== -1) value = value.slice(0, end);
  }
  return value === '' || value.length > MAX_BOUNDARY_LENGTH ? undefined : value;
}

/** PHP's post_max_size default (8M; Debian's php.ini keeps it). */
const PHP_DEFAULT_POST_MAX_SIZE = 8 * 1024 * 1024;

/** PHP's multipart buffer (rfc1867.c FILLUNIT, 5 KiB): a header line as long is read as two. */
const MAX_HEADER_LINE = 4 * 1024;

/** Longer boundaries are refused as unreadable (RFC 2046 §5.1.1 allows 70 characters). */
const MAX_BOUNDARY_LENGTH = 200;

/**
 * The non-file parts named in `only`, as PHP registers them; undefined (unreadable) whenever PHP
 * may read the body otherwise than this does, or reads less of it than it holds. PHP's reader
 * (main/rfc1867.c) has quirks no client relies on; a body that would meet one is not read here
 * at all, and the write is then named by its answer alone (steps/pass.ts):
 * - delimiters: the body starts with one, and every line that begins like one is exactly one
 *   (`--B`), but the last, which closes (`--B--`). PHP ends a value at any `\n--B…` but starts
 *   the next part only at a line that is exactly `--B`, and reads on past `--B--`;
 * - part headers: `Name: value` lines only (PHP folds a line that starts with a space into the one
 *   before, and keeps a name that ends in a space, which then names no header);
 * - one Content-Disposition, `form-data` then `name` and at most a `filename`, each once, quoted
 *   without quotes, backslashes or `;` inside, or bare tokens (PHP keeps the last of two names,
 *   reads single quotes and unescapes `\"` only, and takes `name =` for another parameter);
 * - a value with no line (a delimiter right after the empty line that ends a part's headers),
 *   the delimiter anywhere inside a line of a part's content;
 * - a header line of 4 KiB or more (PHP reads one of 5 KiB as two), a NUL in a header (PHP cuts
 *   the value there), anything after the closing delimiter's line;
 * - past max_input_vars non-file parts PHP registers no more (every part counts, whatever its
 *   name: a `title` after 1,000 others is not in `$_POST`, and MediaWiki reads the query string's),
 *   past max_input_vars + max_file_uploads parts it reads no more.
 * test/in-process/post-form-oracle.test.ts holds this against PHP itself (php -S).
 */
function multipartFields(text: string, boundary: string, only: ReadonlySet<string>): PhpArray | undefined {
  const delimiter = `--${boundary}`;
  const lines = text.split('\n');
  const content = (i: number) => (lines[i]!.endsWith('\r') ? lines[i]!.slice(0, -1) : lines[i]!);
  if (lines.length < 2 || content(0) !== delimiter) return undefined;
  // The parts' variables, in order, as a query string: parsePhpQuery then applies PHP's name
  // rules (`a.b` → `a_b`, `a[]`, later duplicates winning) exactly as for `$_GET`.
  const pairs: string[] = [];
  let parts = 0;
  let variables = 0;
  let line = 1;
  while (true) {
    // The part's headers, up to the empty line.
    let disposition: { name: string; filename: string | undefined } | undefined;
    let dispositions = 0;
    for (; line < lines.length && content(line) !== ''; line++) {
      // PHP reads header lines through a 5 KiB buffer, a longer one as several (rfc1867.c
      // next_line), and cuts a header's value at a NUL (smart_string_appends).
      if (lines[line]!.length >= MAX_HEADER_LINE || content(line).includes('\0')) return undefined;
      const header = /^([!#$%&'*+.^_`|~0-9A-Za-z-]+):[ \t]*(.*)$/.exec(content(line));
      if (!header) return undefined;
      if (asciiLower(header[1]!) !== 'content-disposition') continue;
      dispositions++;
      disposition = formDataParameters(header[2]!);
    }
    if (line >= lines.length || dispositions !== 1 || disposition === undefined) return undefined;
    // The value: up to the next line that begins like a delimiter, without the line end before it.
    const valueStart = line + 1;
    let next = valueStart;
    while (next < lines.length && !content(next).startsWith(delimiter)) next++;
    // A delimiter right after the headers' empty line: PHP looks for `\n--B` past that line's
    // end, and the value runs on over the next part.
    if (next >= lines.length || next === valueStart) return undefined;
    // The delimiter inside a line of the content: a file part PHP does not read (`filename=""`,
    // a name with unbalanced brackets, past max_file_uploads or MAX_FILE_SIZE) it scans line by
    // line through its 5 KiB buffer (find_boundary), and a line of 5 KiB is read as two, the
    // second of which may be exactly `--B`.
    for (let i = valueStart; i < next; i++) if (lines[i]!.includes(delimiter)) return undefined;
    parts++;
    if (disposition.filename === undefined) variables++;
    if (variables > PHP_DEFAULT_MAX_INPUT_VARS || parts > PHP_DEFAULT_MAX_INPUT_VARS + PHP_DEFAULT_MAX_FILE_UPLOADS) return undefined;
    if (disposition.filename === undefined && only.has(registeredName(disposition.name))) {
      const value = lines.slice(valueStart, next).join('\n');
      pairs.push(`${percentEncoded(disposition.name)}=${percentEncoded(value.endsWith('\r') ? value.slice(0, -1) : value)}`);
    }
    const after = content(next);
    if (after === `${delimiter}--`) {
      // Nothing after the closing delimiter but its line end: PHP reads on past it for a line
      // that is exactly `--B`, and a long line it reads as several may end in one.
      if (next + 2 < lines.length || (next + 1 < lines.length && lines[next + 1] !== '')) return undefined;
      break;
    }
    if (after !== delimiter) return undefined;
    line = next + 1;
  }
  return parsePhpQuery(pairs.join('&'));
}

/**
 * A Content-Disposition value of the one shape PHP and this read alike: `form-data`, then `name`
 * and optionally `filename`, each once; undefined for anything else.
 */
function formDataParameters(value: string): { name: string; filename: string | undefined } | undefined {
  const pieces = value.replace(/[ \t]+$/, '').split(';');
  if (asciiLower(pieces[0]!) !== 'form-data') return undefined;
  const found = new Map<string, string>();
  for (const piece of pieces.slice(1)) {
    const m = /^[ \t]*([A-Za-z]+)=(?:"([^"\\;']*)"|([^"\\;'\s=]+))$/.exec(piece);
    if (!m) return undefined;
    const key = asciiLower(m[1]!);
    if ((key !== 'name' && key !== 'filename') || found.has(key)) return undefined;
    found.set(key, m[2] ?? m[3]!);
  }
  const name = found.get('name');
  return name === undefined || name === '' ? undefined : { name, filename: found.get('filename') };
}

/** A variable name as PHP registers it at the top level (php_register_variable_ex), for the `only` test. */
function registeredName(raw: string): string {
  const bracket = raw.indexOf('[');
  const base = bracket === -1 ? raw : raw.slice(0, bracket);
  return base.replace(/^ +/, '').replace(/[. ]/g, '_');
}

/** Every byte of a latin1 string as `%XX` but for letters and digits: parsePhpQuery decodes it back. */
function percentEncoded(s: string): string {
  let out = '';
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    const plain = (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a);
    out += plain ? s[i] : `%${(c & 0xff).toString(16).padStart(2, '0')}`;
  }
  return out;
}
