/**
 * Proactive negotiation of the content coding (RFC 9110 §12.5.3, Accept-Encoding): which of the
 * codings the gateway can send (`br`, `gzip`, none) a request accepts, best first. Pure, but for
 * a bounded memo: clients send a handful of distinct field values (`gzip, deflate, br, zstd`,
 * `gzip, deflate`, …), so the fresh-hit path reads the answer from a Map instead of parsing.
 *
 * The rules, as RFC 9110 §12.5.3 states them:
 * 1. "If no Accept-Encoding header field is in the request, any content coding is considered
 *    acceptable by the user agent." The same section warns that it "does not imply that the user
 *    agent will be able to correctly process all encodings": curl without `--compressed`, PHP's
 *    file_get_contents, Python's urllib and Java's HttpURLConnection send none and print or parse
 *    what they get as it is. So a request without the field gets identity, as nginx and
 *    Varnish give it.
 * 2. "If the representation has no content coding, then it is acceptable by default unless
 *    specifically excluded by the Accept-Encoding header field stating either "identity;q=0" or
 *    "*;q=0" without a more specific entry for "identity"."
 * 3. "If the representation's content coding is one of the content codings listed in the
 *    Accept-Encoding field value, then it is acceptable unless it is accompanied by a qvalue of
 *    0." `*` "matches any available content coding not explicitly listed in the field"; a coding
 *    neither listed nor matched by `*` is not acceptable.
 * - "When selecting between multiple content codings that have the same purpose, the acceptable
 *   content coding with the highest non-zero qvalue is preferred." Equal weights go to the
 *   smaller answer: br, then gzip, then identity. Identity without an entry of its own (or `*`)
 *   is acceptable but comes after every coding the client weighted (`gzip;q=0.1` gets gzip).
 * - "An Accept-Encoding header field with a field value that is empty implies that the user agent
 *   does not want any content coding in response": identity.
 * - "If a non-empty Accept-Encoding header field is present in a request and none of the
 *   available representations for the response have a content coding that is listed as
 *   acceptable, the origin server SHOULD send a response without any content coding unless the
 *   identity coding is indicated as unacceptable." When identity is refused too (`identity;q=0`
 *   alone, `*;q=0`, `deflate, identity;q=0`) nothing the gateway can send is acceptable: the
 *   answer is 406 Not Acceptable (§15.5.7: "the target resource does not have a current
 *   representation that would be acceptable to the user agent, according to the proactive
 *   negotiation header fields received in the request, and the server is unwilling to supply a
 *   default representation"). Sending identity anyway would also be allowed (§12.1 lets a server
 *   disregard the field); the client said plainly it cannot use it.
 * - `x-gzip` is gzip (§8.4.1.3: "A recipient SHOULD consider "x-gzip" to be equivalent to
 *   "gzip""); codings the gateway does not produce (deflate, zstd, compress) are ignored.
 * - A weight that is not a qvalue (§12.4.2: 0 to 1, at most three decimals) makes its element
 *   ignored, as if absent; a coding listed twice keeps its lowest weight (a refusal stands).
 */

/** The content codings the gateway sends; `identity` is none. */
export type Coding = 'br' | 'gzip' | 'identity';

/** The acceptable codings, best first (never empty), or `not-acceptable` (406). */
export type Preference = readonly Coding[] | 'not-acceptable';

/** Tie-break order: the smaller answer first. */
const CODINGS: readonly Coding[] = ['br', 'gzip', 'identity'];

const IDENTITY_ONLY: Preference = Object.freeze(['identity'] as Coding[]);

/** §12.4.2: qvalue = ( "0" [ "." 0*3DIGIT ] ) / ( "1" [ "." 0*3("0") ] ). */
const QVALUE = /^(?:0(?:\.\d{0,3})?|1(?:\.0{0,3})?)$/;

/** The weight of an element's parameters: the q parameter's, 1 without one, NaN if malformed. */
function weightOf(params: readonly string[]): number {
  for (const param of params) {
    const eq = param.indexOf('=');
    const name = (eq === -1 ? param : param.slice(0, eq)).trim().toLowerCase();
    if (name !== 'q') continue;
    const value = eq === -1 ? '' : param.slice(eq + 1).trim();
    return QVALUE.test(value) ? Number(value) : NaN;
  }
  return 1;
}

/** The preference a field value states (undefined: the field is absent). Not memoised. */
export function parseAcceptEncoding(field: string | undefined): Preference {
  if (field === undefined) return IDENTITY_ONLY;
  const weights = new Map<string, number>();
  for (const element of field.split(',')) {
    const [rawName = '', ...params] = element.split(';');
    let name = rawName.trim().toLowerCase();
    if (name === '') continue; // §5.6.1.2: empty list elements do not count
    if (name === 'x-gzip') name = 'gzip';
    const q = weightOf(params);
    if (Number.isNaN(q)) continue;
    const seen = weights.get(name);
    weights.set(name, seen === undefined ? q : Math.min(seen, q));
  }
  // Empty (or only empty elements): "does not want any content coding".
  if (weights.size === 0) return IDENTITY_ONLY;
  const star = weights.get('*');
  const weight = (coding: Coding): number => {
    const own = weights.get(coding);
    if (own !== undefined) return own;
    if (star !== undefined) return star;
    // Unlisted identity is acceptable, after anything weighted; an unlisted coding is not.
    return coding === 'identity' ? Number.MIN_VALUE : 0;
  };
  const order = CODINGS.map((coding, rank) => ({ coding, q: weight(coding), rank }))
    .filter((c) => c.q > 0)
    .sort((a, b) => b.q - a.q || a.rank - b.rank)
    .map((c) => c.coding);
  return order.length === 0 ? 'not-acceptable' : Object.freeze(order);
}

/**
 * Distinct field values remembered: real clients send a few dozen; a client sending a new value
 * every time only costs its own parse once the memo is full (values past the bound are parsed,
 * not remembered).
 */
const MEMO_MAX = 256;
/** Longer values are parsed each time, not remembered (nothing real is that long). */
const MEMO_MAX_LENGTH = 256;
const memo = new Map<string, Preference>();

/** parseAcceptEncoding, remembered per field value. `field`: the request's header as Node gives it. */
export function preferenceOf(field: string | undefined): Preference {
  if (field === undefined) return IDENTITY_ONLY;
  const known = memo.get(field);
  if (known !== undefined) return known;
  const preference = parseAcceptEncoding(field);
  if (memo.size < MEMO_MAX && field.length <= MEMO_MAX_LENGTH) memo.set(field, preference);
  return preference;
}

/**
 * The coding to send: the client's best that `has` says is ready (stored, or identity, which
 * can always be had), else its first choice (to be made on the fly).
 */
export function chooseCoding(preference: readonly Coding[], has: (coding: Coding) => boolean): Coding {
  for (const coding of preference) if (has(coding)) return coding;
  return preference[0]!;
}

/** Whether a client takes gzip over the answer as it is: gzip comes before identity in its preference (br aside). */
export function prefersGzipToIdentity(preference: readonly Coding[]): boolean {
  for (const coding of preference) {
    if (coding === 'gzip') return true;
    if (coding === 'identity') return false;
  }
  return false;
}
