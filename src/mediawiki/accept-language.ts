/**
 * What of a request's Accept-Language MediaWiki's answer can depend on. For a reader without a
 * session, LanguageConverter::getPreferredVariant() takes the language variant from this header
 * (includes/language/LanguageConverter.php getHeaderVariant, 1.39: the first of the languages
 * WebRequest::getAcceptLang() lists, by q, that is a variant of the converter, or falls back to
 * one), and the parser converts what it renders to it: a Chinese or Serbian wiki's `action=parse`
 * answers Traditional or Simplified, Latin or Cyrillic, as the header says. ApiMain sends no
 * `Vary: Accept-Language` for it (includes/api/ApiMain.php sendCacheHeaders), so the key must
 * hold it (docs/SECURITY.md class 51).
 *
 * Only codes of the languages that have a converter matter (includes/language/
 * LanguageConverterFactory.php, 1.39: ban, crh, gan, iu with ike-cans and ike-latn, kk, ku, shi,
 * sr, tg, tly, uz, zh): validateVariant() and getVariantFallbacks() take nothing else (the
 * deprecated codes it maps first, LanguageCode::DEPRECATED_LANGUAGE_CODE_MAPPING, map to no
 * variant). So the key holds those codes, with their q, in the order the header gives them: two
 * headers with the same such list choose the same variant for every converter, and a browser
 * sending `en-US,en;q=0.9` shares the entry of a client sending none. English's converter (its
 * one other variant, en-x-piglatin, exists only with $wgUsePigLatinVariant, a test setting) is
 * left out: keying on `en` would split every English reader's entries.
 *
 * The header is read as WebRequest::getAcceptLang() reads it (includes/WebRequest.php:1190):
 * lower-cased byte by byte (PHP 8's strtolower is ASCII only), then every match of its pattern,
 * whose `\s` in PCRE without /u is ASCII whitespace only. Its matches are not the comma-separated
 * items: `[a-z]{1,8}` cuts a run of letters every eight, so `aaaaaaaazh-tw` names `zh-tw`.
 */

/** The languages whose converter takes a variant from Accept-Language (see the module comment). */
export const VARIANT_LANGUAGES: ReadonlySet<string> = new Set(['ban', 'crh', 'gan', 'iu', 'ike', 'kk', 'ku', 'shi', 'sr', 'tg', 'tly', 'uz', 'zh']);

/**
 * Some VARIANT_LANGUAGES code in the header, in any case: a code the pattern keeps holds its
 * language's letters, so a header without any (`en-US,en;q=0.9`) names none. Read on every hit
 * of a client that sends the header (fresh-hit.ts): a test, nothing allocated.
 */
const MAY_NAME_A_VARIANT = new RegExp([...VARIANT_LANGUAGES].join('|'), 'i');

/** WebRequest::getAcceptLang()'s pattern (its `/x` comments and spaces removed, `\s` as PCRE reads it). */
const ACCEPT_LANG = /([a-z]{1,8}(?:-[a-z]{1,8})*|\*)[\t\n\v\f\r ]*(?:;[\t\n\v\f\r ]*q[\t\n\v\f\r ]*=[\t\n\v\f\r ]*(1(?:\.0{0,3})?|0(?:\.[0-9]{0,3})?)?)?/g;

/**
 * The header's codes of languages with variants, each with the q it was given (`zh-tw;0.8`; no q:
 * `zh-tw;`), joined by commas; undefined when it names none (or is absent). Over-precise where
 * that is harmless: `q=0.5` and `q=0.50`, or a code PHP drops for its q of 0, make other keys.
 */
export function variantPreferences(header: string | undefined): string | undefined {
  if (header === undefined || !MAY_NAME_A_VARIANT.test(header)) return undefined;
  // PHP 8's strtolower: ASCII letters only.
  const lower = header.replace(/[A-Z]+/g, (s) => s.toLowerCase());
  let out: string | undefined;
  for (const match of lower.matchAll(ACCEPT_LANG)) {
    const code = match[1]!;
    const dash = code.indexOf('-');
    if (!VARIANT_LANGUAGES.has(dash === -1 ? code : code.slice(0, dash))) continue;
    const item = `${code};${match[2] ?? ''}`;
    out = out === undefined ? item : `${out},${item}`;
  }
  return out;
}
