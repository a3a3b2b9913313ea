/**
 * `$_GET` and `$_COOKIE` exactly as PHP 8.2 builds them.
 *
 * Whether a request carries a session, and whether two URLs are the same request for MediaWiki,
 * is decided by PHP's view of the query string and the Cookie header, not by a generic parser.
 * This module re-implements that view: php_default_treat_data() and php_register_variable_ex() in
 * main/php_variables.c, php_url_decode()/php_raw_url_decode() in ext/standard/url.c and the
 * symtable key rules of Zend/zend_hash.c. The running PHP 8.2 is the judge: every rule below was
 * checked against it (test/unit/php-*-parse.test.ts hold its literal answers and
 * test/integration/php-input-oracle.test.ts compares against a live `php -S`).
 *
 * Byte strings: PHP strings are bytes. Input and output strings here hold one byte per UTF-16
 * code unit (0-255), which is how Node hands over `req.url` and header values (latin1). `%C3%A9`
 * decodes to the two-unit string '\u00c3\u00a9'; use `Buffer.from(s, 'latin1')` for the bytes and
 * `.toString('utf8')` for text. Code units above 0xFF cannot come from Node's HTTP parser; they
 * are passed through untouched and are never treated as separators, spaces or hex digits.
 *
 * Keys: PHP arrays have integer and string keys, and a symtable turns a string key into an
 * integer exactly when it is the canonical decimal form of a 64-bit integer ("5", "-3", not
 * "05", "-0", "+1", " 1"; _zend_handle_numeric_str_ex in Zend/zend_hash.c). So each PHP key has
 * exactly one string spelling, and this module stores every key as that string: `a[5]` and
 * `a[05]` are keys "5" (integer 5 in PHP) and "05" (string in PHP), distinct in both worlds.
 * Maps keep insertion order, and like PHP's update-in-place a rewritten key keeps its position.
 *
 * What PHP receives is the caller's business, and it can differ from what a client sent: php -S
 * joins two Cookie header lines with ", " (so `a=1` + `b=2` is the single cookie a = "1, b=2"),
 * where Node joins them with "; "; and php -S drops any '?' right after the first one of the
 * request target (`/??a=1` reaches PHP as the query "a=1"). See
 * test/integration/php-input-oracle.test.ts.
 *
 * Cost: a single left-to-right pass with indexOf for separators; no regular expressions on the
 * input; per variable O(length of its name and value); parsing stops after `maxInputVars`
 * variables like PHP, and the input is cut at the first NUL like PHP's C strings.
 */

export type PhpValue = string | PhpArray;
/** An ordered PHP array. Integer keys are stored as their canonical decimal string (see above). */
export type PhpArray = Map<string, PhpValue>;

/** The php.ini settings that shape parsing; defaults are PHP 8.2's. */
export interface PhpInputLimits {
  /** max_input_vars (default 1000): variables after this many are ignored (with a warning in PHP). */
  maxInputVars?: number;
  /** max_input_nesting_level (default 64): a deeper `a[x][y]...` removes the whole `a`. */
  maxInputNestingLevel?: number;
}

export const PHP_DEFAULT_MAX_INPUT_VARS = 1000;

/** Inputs parsed here that had more variables than max_input_vars (reachedMaxInputVars). */
const truncated = new WeakSet<PhpArray>();

/**
 * Whether PHP, at this max_input_vars, stopped reading `arr`'s input before its end. A wiki whose
 * php.ini allows more (many raise it) reads variables the gateway did not: the gateway's view
 * of the request (its key, who is asking) is then not the wiki's, and it must not cache on it.
 */
export function reachedMaxInputVars(arr: PhpArray): boolean {
  return truncated.has(arr);
}
export const PHP_DEFAULT_MAX_INPUT_NESTING_LEVEL = 64;

/**
 * `$_GET` for a raw query string (the bytes after `?`, without the `?`; nothing decoded).
 *
 * As php_default_treat_data(PARSE_GET): split on arg_separator.input, whose default is "&" only
 * (`;` and `,` are plain characters); names and values go through php_url_decode (`+` is a space,
 * `%XX` with two hex digits is a byte, any other `%` stays); a later duplicate overwrites an
 * earlier one in place.
 */
export function parsePhpQuery(query: string, limits?: PhpInputLimits): PhpArray {
  return treatData(query, false, limits);
}

/**
 * `$_POST` for an `application/x-www-form-urlencoded` body (latin1: one char per byte), as
 * main/php_variables.c add_post_vars() reads it: the same names and values as a query, but the
 * body is not a C string (a NUL does not end it), every `&`-separated token counts towards
 * max_input_vars, empty ones included, and the variable that passes the limit is registered
 * before PHP stops (`while (add_post_var(...)) if (++cnt > max_vars) return FAILURE;`).
 */
export function parsePhpForm(body: string, limits?: PhpInputLimits): PhpArray {
  return treatData(body, false, limits, true);
}

/**
 * `$_COOKIE` for one Cookie header value as PHP receives it (for several header lines, pass the
 * value PHP would see; Node joins them as `a=1; b=2`).
 *
 * As php_default_treat_data(PARSE_COOKIE): split on ";" only (not ","), leading whitespace of
 * each name dropped, names NOT url-decoded, values decoded with php_raw_url_decode (`+` stays
 * `+`), and the FIRST of duplicate plain names wins.
 */
export function parsePhpCookies(cookieHeader: string, limits?: PhpInputLimits): PhpArray {
  return treatData(cookieHeader, true, limits);
}

/**
 * The value of a top-level parameter when it is a string; undefined when absent or an array
 * (MediaWiki's WebRequest::getVal() returns the default for arrays). `name` is the PHP key,
 * i.e. already mangled (`a_b` for a parameter sent as `a.b` or `a b`).
 */
export function phpStringParam(arr: PhpArray, name: string): string | undefined {
  const v = arr.get(name);
  return typeof v === 'string' ? v : undefined;
}

/**
 * A parameter as MediaWiki reads it as text (WebRequest::getVal: its bytes are UTF-8; the NFC
 * clean-up it also does is titles.ts's): what names a page or an entity. phpStringParam's value
 * holds one byte per code unit, so `%E6%BC%A2` would otherwise be the three-character 'æ¼¢', a
 * title of another page (and one over 255 bytes for a long title the wiki took whole).
 */
export function phpTextParam(arr: PhpArray, name: string): string | undefined {
  const v = phpStringParam(arr, name);
  return v === undefined ? undefined : textOfBytes(v);
}

/** A byte string (one byte per code unit) read as UTF-8; ASCII is its own. */
export function textOfBytes(bytes: string): string {
  for (let i = 0; i < bytes.length; i++) if (bytes.charCodeAt(i) > 0x7f) return Buffer.from(bytes, 'latin1').toString('utf8');
  return bytes;
}

/** True when any top-level value is an array, i.e. PHP's `name[...]` syntax took effect. */
export function hasArrayShapes(arr: PhpArray): boolean {
  for (const v of arr.values()) {
    if (typeof v !== 'string') return true;
  }
  return false;
}

// ---------------------------------------------------------------------------------------------

const AMP = 38; // &
const SEMI = 59; // ;
const PLUS = 43; // +
const PERCENT = 37; // %
const SPACE = 32;
const DOT = 46;
const LBRACKET = 91;
const RBRACKET = 93;
const UNDERSCORE = 95;

const LONG_MAX = 9223372036854775807n;

/** isxdigit() values of bytes, -1 for non-hex (ext/standard/url.c php_url_decode uses isxdigit). */
const HEX = new Int8Array(256).fill(-1);
for (let i = 0; i < 10; i++) HEX[48 + i] = i;
for (let i = 0; i < 6; i++) {
  HEX[65 + i] = 10 + i;
  HEX[97 + i] = 10 + i;
}

function hexValue(c: number): number {
  return c < 256 ? HEX[c]! : -1;
}

/**
 * C isspace() as PHP uses it (C / C.UTF-8 locale): space, \t \n \v \f \r. Bytes >= 0x80
 * (e.g. 0x85, 0xA0) are not, as checked on PHP 8.2.
 */
function isCSpace(c: number): boolean {
  return c === SPACE || (c >= 9 && c <= 13);
}

/**
 * php_url_decode (plus = true) / php_raw_url_decode (plus = false) of s[start, end).
 * ext/standard/url.c: `%` decodes only when followed by two isxdigit() chars; otherwise it is
 * kept, so `%zz`, `%4` and a trailing `%` stay literal. With cutAtNul the result stops at the
 * first decoded NUL, because PHP then handles the name as a C string (php_register_variable_safe
 * passes `var` to php_register_variable_ex, which uses strlen()).
 */
function urlDecode(s: string, start: number, end: number, plus: boolean, cutAtNul: boolean): string {
  let i = start;
  for (; i < end; i++) {
    const c = s.charCodeAt(i);
    if (c === PERCENT || (c === PLUS && plus)) break;
  }
  if (i === end) return s.slice(start, end);
  let out = '';
  let seg = start;
  while (i < end) {
    const c = s.charCodeAt(i);
    if (c === PLUS && plus) {
      out += s.slice(seg, i) + ' ';
      seg = ++i;
    } else if (c === PERCENT && i + 2 < end) {
      const hi = hexValue(s.charCodeAt(i + 1));
      const lo = hi < 0 ? -1 : hexValue(s.charCodeAt(i + 2));
      if (lo < 0) {
        i++;
        continue;
      }
      const byte = (hi << 4) | lo;
      out += s.slice(seg, i);
      if (byte === 0 && cutAtNul) return out;
      out += String.fromCharCode(byte);
      i += 3;
      seg = i;
    } else {
      i++;
    }
  }
  return out + s.slice(seg, end);
}

/** Mutable state of one parse: the array being built and PHP's nNextFreeElement per nested array. */
interface ParseState {
  readonly top: PhpArray;
  readonly cookie: boolean;
  readonly maxNesting: number;
  /**
   * HashTable.nNextFreeElement of nested arrays (absent = ZEND_LONG_MIN, "never had an integer
   * key"). Zend/zend_hash.c _zend_hash_index_add_or_update_i: an integer key h with h >= next
   * sets next = h + 1 (capped at ZEND_LONG_MAX), and a `[]` append uses next, or 0 while it is
   * still ZEND_LONG_MIN. So after `a[-3]` the next `a[]` is -2 (checked on PHP 8.2), after
   * `a[9223372036854775807]` an append fails and the value is dropped. The top-level array never
   * needs this: a top-level name cannot be empty, so it is never appended to.
   */
  next: Map<PhpArray, bigint> | undefined;
}

/**
 * main/php_variables.c php_default_treat_data() for PARSE_GET and PARSE_COOKIE.
 */
function treatData(input: string, cookie: boolean, limits: PhpInputLimits | undefined, post = false): PhpArray {
  const maxVars = limits?.maxInputVars ?? PHP_DEFAULT_MAX_INPUT_VARS;
  const state: ParseState = {
    top: new Map(),
    cookie,
    maxNesting: limits?.maxInputNestingLevel ?? PHP_DEFAULT_MAX_INPUT_NESTING_LEVEL,
    next: undefined,
  };
  // SG(request_info).query_string / cookie_data are C strings: nothing after a NUL exists (a
  // POST body is read with its length).
  let n = post ? -1 : input.indexOf('\0');
  if (n === -1) n = input.length;
  // separator = PG(arg_separator).input ("&") for GET, ";\0" for cookies; php_strtok_r skips
  // empty tokens, so "a=1&&b=2" and "a=1;;b=2" have two variables and empty tokens count for
  // nothing (not even max_input_vars).
  const sep = cookie ? ';' : '&';
  const sepCode = cookie ? SEMI : AMP;
  let count = 0;
  let pos = 0;
  // Position of the next '=' at or after pos (-2: not looked up yet, -1: none). Cached so that
  // tokens without '=' do not rescan the rest of the input each time (linear, not quadratic).
  let eqNext = -2;
  while (pos < n) {
    if (input.charCodeAt(pos) === sepCode) {
      pos++;
      // add_post_var registers nothing for an empty token, but counts it.
      if (post && ++count > maxVars) {
        truncated.add(state.top);
        break;
      }
      continue;
    }
    let end = input.indexOf(sep, pos);
    if (end === -1 || end > n) end = n;
    // val = strchr(var, '=') on the NUL-terminated token.
    if (eqNext !== -1 && eqNext < pos) eqNext = input.indexOf('=', pos);
    const eq = eqNext !== -1 && eqNext < end ? eqNext : -1;
    let nameStart = pos;
    pos = end + 1;
    if (cookie) {
      // "Remove leading spaces from cookie names, needed for multi-cookie header where ; can be
      // followed by a space": while (isspace(*var)) var++; if (var == val || *var == '\0') skip.
      // Such tokens are skipped before the max_input_vars count.
      while (nameStart < end && isCSpace(input.charCodeAt(nameStart))) nameStart++;
      if (nameStart === eq || nameStart === end) continue;
    }
    // if (++count > max_input_vars) { warning; break; }  Every GET token counts, even "=x"
    // whose empty name is dropped later. (A POST registers first and counts after: below.)
    if (!post && ++count > maxVars) {
      truncated.add(state.top);
      break;
    }
    const nameEnd = eq === -1 ? end : eq;
    // No '=' gives the empty string. Values are binary-safe (a decoded %00 stays).
    const value = eq === -1 ? '' : urlDecode(input, eq + 1, end, !cookie, false);
    // Cookie names are not decoded at all (PHP >= 7.4.11/8.0, CVE-2020-7070: `if (arg !=
    // PARSE_COOKIE) php_url_decode(var, ...)`), so `%41=x` is the cookie "%41".
    let name = cookie ? input.slice(nameStart, nameEnd) : urlDecode(input, nameStart, nameEnd, true, true);
    // A body's raw NUL ends the name too (php_register_variable_safe takes it as a C string).
    if (post && name.includes('\0')) name = name.slice(0, name.indexOf('\0'));
    registerVariable(state, name, value);
    if (post && ++count > maxVars) {
      truncated.add(state.top);
      break;
    }
  }
  return state.top;
}

/** Replaces ' ' and '.' (and, when withBracket, '[') by '_'. */
function mangle(s: string, withBracket: boolean): string {
  let out = '';
  let seg = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c === SPACE || c === DOT || (withBracket && c === LBRACKET)) {
      out += s.slice(seg, i) + '_';
      seg = i + 1;
    }
  }
  return seg === 0 ? s : out + s.slice(seg);
}

/**
 * main/php_variables.c php_register_variable_ex(), for a name already decoded and cut at NUL.
 */
function registerVariable(state: ParseState, name: string, value: string): void {
  const len = name.length;
  // "ignore leading spaces in the variable name": while (*var_name==' ') var_name++;  (only ' ')
  let s = 0;
  while (s < len && name.charCodeAt(s) === SPACE) s++;
  // "ensure that we don't have spaces or dots in the variable name (not binary safe)": ' ' and
  // '.' become '_' up to the first '[', which starts the array part (is_array = 1).
  let i = s;
  let mangled = false;
  for (; i < len; i++) {
    const c = name.charCodeAt(i);
    if (c === SPACE || c === DOT) mangled = true;
    else if (c === LBRACKET) break;
  }
  // var_len==0: "empty variable name, or variable name with a space in it" is dropped. This
  // drops "=x", " =x", "[x]=1", "%00a=1" (cut at NUL), but not "." (becomes "_").
  if (i === s) return;
  let varName = s === 0 && i === len ? name : name.slice(s, i);
  if (mangled) varName = mangle(varName, false);
  // (The "this" and "GLOBALS" checks only apply when registering into a symbol table, never
  // into $_GET/$_COOKIE.)
  if (i === len) plainVar(state, state.top, varName, value, name, s);
  else registerArray(state, name, s, i, varName, value);
}

/** The `is_array` loop of php_register_variable_ex(); `ip` is the position of the first '['. */
function registerArray(state: ParseState, name: string, s: number, ip: number, varName: string, value: string): void {
  const len = name.length;
  let table = state.top;
  let index: string | null = varName;
  let nest = 0;
  for (;;) {
    if (++nest > state.maxNesting) {
      // "too many levels of nesting": zend_symtable_str_del(track_vars_array, var, var_len)
      // removes the whole top-level variable, including what earlier variables put there.
      state.top.delete(varName);
      return;
    }
    ip++;
    const indexS = ip;
    // if (isspace(*ip)) ip++;  one whitespace char may precede ']': `a[ ]` appends like `a[]`,
    // but `a[ x]` has the key " x" and `a[  ]` the key "  ".
    if (ip < len && isCSpace(name.charCodeAt(ip))) ip++;
    let newIndex: string | null;
    if (ip < len && name.charCodeAt(ip) === RBRACKET) {
      newIndex = null;
    } else {
      const close = name.indexOf(']', ip);
      if (close === -1) {
        // "not an index; un-terminate the var name": the '[' becomes '_' and, in PHP 8.2.35, so do
        // ' ', '.' and '[' in the rest ("a[b.c" is "a_b_c", "a[b[c" is "a_b_c"). That only
        // changes the key when this is the first '[': deeper down `index` is the previous key,
        // still NUL-terminated at its ']' ("a[b][c" stores a[b]), or NULL (append).
        if (nest === 1) index = varName + '_' + mangle(name.slice(indexS), true);
        plainVar(state, table, index, value, name, s);
        return;
      }
      newIndex = name.slice(indexS, close);
      ip = close;
    }
    // Find or create the array at table[index]: a missing key is added at the end, an existing
    // non-array value is replaced by an empty array in place (so `a=1&a[x]=2` gives a=[x=>2] at
    // a's position), and `[]` appends (zend_hash_next_index_insert; on failure give up).
    let child: PhpArray;
    if (index === null) {
      child = new Map();
      if (!append(state, table, child)) return;
    } else {
      // The key descended into must not be a forbidden one (isForbidden): `a[__Host-x][y]=1`
      // stops here and leaves `a` as an empty array.
      if (isForbidden(index, name, s)) return;
      const existing = table.get(index);
      if (existing === undefined) {
        child = new Map();
        setKey(state, table, index, child);
      } else if (typeof existing === 'string') {
        child = new Map();
        table.set(index, child);
      } else {
        child = existing;
      }
    }
    table = child;
    index = newIndex;
    // Only "][" continues; anything else after ']' ends the name: `a[x]y[z]` is a[x].
    ip++;
    if (ip < len && name.charCodeAt(ip) === LBRACKET) continue;
    plainVar(state, table, index, value, name, s);
    return;
  }
}

/** The `plain_var:` label of php_register_variable_ex(). */
function plainVar(state: ParseState, table: PhpArray, index: string | null, value: string, name: string, s: number): void {
  if (index === null) {
    append(state, table, value);
    return;
  }
  if (isForbidden(index, name, s)) return;
  // "According to rfc2965, more specific paths are listed above the less specific ones. If we
  // encounter a duplicate cookie name, we should skip it": first wins, but only for plain names
  // in $_COOKIE itself; nested keys (`a[x]=1; a[x]=2`) still overwrite, and `a=1; a[x]=2`
  // still turns a into an array.
  if (state.cookie && table === state.top) {
    if (!table.has(index)) table.set(index, value);
    return;
  }
  setKey(state, table, index, value);
}

/**
 * php_is_forbidden_variable_name() in main/php_variables.c: "Discard variable if mangling made it
 * start with __Host-, where pre-mangling it did not start with __Host-", same for __Secure-.
 * CVE-2022-31629 added this check for the top-level name only; the PHP 8.2.35 we test against
 * has the later form, which applies it to EVERY key PHP stores or descends into, at any depth,
 * against the whole original name (after its leading spaces), so:
 *   `..Host-x=1` and `_[Host-x=1` (mangled to `__Host-x`) are dropped, `%5F_Host-x` (decoded
 *   before) and ` __Host-x` are kept; `a[__Host-x]=1` stores nothing (a becomes an empty array),
 *   `__Host-a[__Host-b]=1` is kept, `__Host-a[__Secure-b]=1` is not.
 */
function isForbidden(key: string, name: string, s: number): boolean {
  if (key.charCodeAt(0) !== UNDERSCORE) return false;
  if (key.startsWith('__Host-') && !name.startsWith('__Host-', s)) return true;
  if (key.startsWith('__Secure-') && !name.startsWith('__Secure-', s)) return true;
  return false;
}

/** zend_symtable_update: sets table[key], tracking integer keys of nested arrays. */
function setKey(state: ParseState, table: PhpArray, key: string, value: PhpValue): void {
  table.set(key, value);
  if (table === state.top) return;
  const h = integerKey(key);
  if (h === undefined) return;
  const next = state.next?.get(table);
  if (next === undefined || h >= next) {
    nextFree(state).set(table, h < LONG_MAX ? h + 1n : LONG_MAX);
  }
}

function nextFree(state: ParseState): Map<PhpArray, bigint> {
  if (state.next === undefined) state.next = new Map();
  return state.next;
}

/** zend_hash_next_index_insert; false when PHP's insert fails (the key nNextFreeElement exists). */
function append(state: ParseState, table: PhpArray, value: PhpValue): boolean {
  const h = state.next?.get(table) ?? 0n;
  const key = h.toString();
  if (table.has(key)) return false;
  table.set(key, value);
  nextFree(state).set(table, h < LONG_MAX ? h + 1n : LONG_MAX);
  return true;
}

/**
 * ZEND_HANDLE_NUMERIC_STR (Zend/zend_hash.h, _zend_handle_numeric_str_ex in zend_hash.c): the
 * integer a symtable uses for this key, or undefined when it stays a string. Optional '-', then
 * digits without a leading zero (except "0" itself; "-0" is a string), at most 19 digits, within
 * [ZEND_LONG_MIN, ZEND_LONG_MAX].
 */
function integerKey(key: string): bigint | undefined {
  const len = key.length;
  if (len === 0) return undefined;
  let i = 0;
  if (key.charCodeAt(0) === 45) i = 1;
  const first = key.charCodeAt(i);
  if (!(first >= 48 && first <= 57)) return undefined;
  if (first === 48 && len > 1) return undefined;
  if (len - i > 19) return undefined;
  for (let j = i + 1; j < len; j++) {
    const c = key.charCodeAt(j);
    if (!(c >= 48 && c <= 57)) return undefined;
  }
  const v = BigInt(key);
  if (v > LONG_MAX || v < -LONG_MAX - 1n) return undefined;
  return v;
}

/** ApiBase::explodeMultiValue(): a value starting with U+001F is split on U+001F, anything else on `|`. */
export function split(value: string | undefined): string[] {
  if (value === undefined || value === '') return [];
  return value.startsWith('\x1f') ? value.slice(1).split('\x1f') : value.split('|');
}
