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
  const type = (contentType ?? '').split(';', 1)[0]!.trim().toLowerCase();
  const multipart = type === 'multipart/form-data';
  if (type !== 'application/x-www-form-urlencoded' && !multipart) return { kind: 'none' };
  if (body === undefined) return { kind: 'unreadable' };
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

/** The `boundary` parameter of a multipart Content-Type (quoted or not), as rfc1867.c finds it. */
function boundaryOf(contentType: string): string | undefined {
  const m = /;\s*boundary=(?:"([^"]{1,200})"|([^\s;,]{1,200}))/i.exec(contentType);
  return m ? (m[1] ?? m[2]) : undefined;
}

/**
 * The non-file parts named in `only`, as PHP registers them; undefined when the body is not the
 * multipart form its type says (no opening boundary), or when PHP reads less of it than it holds:
 * past max_input_vars non-file parts PHP registers no more (every part counts, whatever its name:
 * a `title` after 1,000 others is not in `$_POST`, and MediaWiki reads the query string's), past
 * max_input_vars + max_file_uploads parts it reads none.
 */
function multipartFields(text: string, boundary: string, only: ReadonlySet<string>): PhpArray | undefined {
  const delimiter = `--${boundary}`;
  let at = text.startsWith(delimiter) ? 0 : text.indexOf(`\n${delimiter}`);
  if (at === -1) return undefined;
  if (at > 0) at += 1;
  // The parts' variables, in order, as a query string: parsePhpQuery then applies PHP's name
  // rules (`a.b` → `a_b`, `a[]`, later duplicates winning) exactly as for `$_GET`.
  const pairs: string[] = [];
  let parts = 0;
  let variables = 0;
  while (true) {
    const afterDelimiter = at + delimiter.length;
    if (text.startsWith('--', afterDelimiter)) break; // the closing delimiter
    const headersStart = text.indexOf('\n', afterDelimiter);
    if (headersStart === -1) break;
    const blank = headersEnd(text, headersStart + 1);
    if (blank === undefined) break;
    const next = text.indexOf(`\n${delimiter}`, blank.bodyStart);
    const valueEnd = next === -1 ? text.length : next > 0 && text.charCodeAt(next - 1) === 0x0d ? next - 1 : next;
    const disposition = partDisposition(text.slice(headersStart + 1, blank.headersEnd));
    parts++;
    if (disposition && disposition.filename === undefined) variables++;
    if (variables > PHP_DEFAULT_MAX_INPUT_VARS || parts > PHP_DEFAULT_MAX_INPUT_VARS + PHP_DEFAULT_MAX_FILE_UPLOADS) return undefined;
    if (disposition && disposition.filename === undefined && only.has(registeredName(disposition.name)))
      pairs.push(`${percentEncoded(disposition.name)}=${percentEncoded(text.slice(blank.bodyStart, valueEnd))}`);
    if (next === -1) break;
    at = next + 1;
  }
  return parsePhpQuery(pairs.join('&'));
}

/** Where a part's headers end (the empty line) and its body starts. */
function headersEnd(text: string, from: number): { headersEnd: number; bodyStart: number } | undefined {
  let line = from;
  while (line < text.length) {
    const end = text.indexOf('\n', line);
    if (end === -1) return undefined;
    const content = text.slice(line, end).replace(/\r$/, '');
    if (content === '') return { headersEnd: line, bodyStart: end + 1 };
    line = end + 1;
  }
  return undefined;
}

/** The `name` and `filename` of a part's `Content-Disposition: form-data` header. */
function partDisposition(headers: string): { name: string; filename: string | undefined } | undefined {
  for (const line of headers.split('\n')) {
    const colon = line.indexOf(':');
    if (colon === -1 || line.slice(0, colon).trim().toLowerCase() !== 'content-disposition') continue;
    const value = line.slice(colon + 1).replace(/\r$/, '');
    const param = (key: string) => {
      const m = new RegExp(`;\\s*${key}\\s*=\\s*(?:"((?:[^"\\\\]|\\\\.)*)"|([^;\\s]*))`, 'i').exec(value);
      return m ? (m[1] !== undefined ? m[1].replace(/\\(.)/g, '$1') : m[2]!) : undefined;
    };
    const name = param('name');
    return name === undefined ? undefined : { name, filename: param('filename') };
  }
  return undefined;
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
