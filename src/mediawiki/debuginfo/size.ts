/**
 * Reads the sizes MediaWiki's `debuginfo` block reports (`memory`, `memoryPeak`, `includes[].size`).
 *
 * `memory`, `memoryPeak` and each `includes[].size` are `Language::formatSize()` output in the
 * *user* language (`uselang`), e.g. "1.29 MB", "1,29 MB" (de), "1,29 Mio" (fr, with U+202F),
 * "١٫٢٩ ميجابايت" (ar). MediaWiki 1.39 (`Language::formatComputingNumbers( $size, 1024, "size-$1bytes" )`):
 *   - base **1024**; the unit advances while the value is >= 1024, so the number is below 1024
 *     (1024 itself after rounding, e.g. "1,024 KB" for 1048575 bytes);
 *   - bytes and KB are rounded to whole numbers, MB and above to 2 decimals;
 *   - the message `size-bytes`/`size-kilobytes`/… is fetched with `$1` unsubstituted, so PLURAL
 *     always picks the "other" form ("1 bytes"), and then `formatNum()` output replaces `$1`:
 *     localised digits (digitTransformTable) and separators (separatorTransformTable / ICU).
 */
import { UNITS } from './units.js';

/** Code points of the digit zero of every decimal-digit script a MediaWiki digitTransformTable uses (and a few more). */
const DIGIT_ZEROS = [
  0x30, 0x660, 0x6f0, 0x7c0, 0x966, 0x9e6, 0xa66, 0xae6, 0xb66, 0xbe6, 0xc66, 0xce6, 0xd66, 0xde6, 0xe50, 0xed0, 0xf20, 0x1040, 0x1090, 0x17e0, 0x1810, 0x1946,
  0x19d0, 0x1a80, 0x1a90, 0x1b50, 0x1bb0, 0x1c40, 0x1c50, 0xa8d0, 0xa900, 0xa9d0, 0xa9f0, 0xaa50, 0xabf0, 0xff10,
];
const DIGITS: ReadonlyMap<string, number> = (() => {
  const m = new Map<string, number>();
  for (const zero of DIGIT_ZEROS) for (let d = 0; d < 10; d++) m.set(String.fromCharCode(zero + d), d);
  // lzh (Literary Chinese) writes numbers with CJK numerals and 點 as the decimal point.
  [...'〇一二三四五六七八九'].forEach((c, d) => {
    m.set(c, d);
  });
  return m;
})();

/** Grouping or decimal separators formatNum() writes (`,` `.` U+066B U+066C NBSP NNBSP `'` `’` 點). */
const SEPARATORS = new Set([',', '.', '\u066b', '\u066c', '\u00a0', '\u202f', ' ', "'", '\u2019', '點']);
/** Separators that are only ever decimal marks. */
const DECIMAL_ONLY = new Set(['\u066b', '點']);

/**
 * Bytes from `Language::formatSize()` output in any language MediaWiki 1.39 ships, or undefined
 * when the text is not such output (or is ambiguous: ur writes "بائٹ" for any byte count, with no
 * number at all). The result is as precise as the text: "1.29 MB" → 1.29 × 1024².
 */
export function parseFormattedSize(text: string): number | undefined {
  if (typeof text !== 'string' || text.length === 0 || text.length > 64) return undefined;
  const s = text.normalize('NFC');
  const chars = [...s];
  const first = chars.findIndex((c) => DIGITS.has(c));
  if (first === -1) return undefined;
  // The number: digits, and separators that sit between two digits.
  let end = first;
  const digits: number[] = [];
  const seps: { at: number; char: string }[] = [];
  while (end < chars.length) {
    const c = chars[end]!;
    const d = DIGITS.get(c);
    if (d !== undefined) {
      digits.push(d);
      end++;
    } else if (SEPARATORS.has(c) && end + 1 < chars.length && DIGITS.has(chars[end + 1]!)) {
      seps.push({ at: digits.length, char: c });
      end++;
    } else break;
  }
  const before = chars.slice(0, first).join('').trim();
  const after = chars.slice(end).join('').trim();
  if (before !== '' && after !== '') return undefined;
  const unit = (before || after).split(/\s+/).join(' ');
  const exponent = UNITS.get(unit);
  if (exponent === undefined) return undefined;
  const value = readNumber(digits, seps, exponent >= 2);
  if (value === undefined) return undefined;
  return value * 1024 ** exponent;
}

/**
 * Separators are told apart by position, not by language: bytes and KB are whole numbers, so every
 * separator groups thousands (followed by 3 digits); from MB up the value has at most 2 decimals,
 * so a last separator followed by 1-2 digits is the decimal mark.
 */
function readNumber(digits: number[], seps: { at: number; char: string }[], mayHaveDecimals: boolean): number | undefined {
  let decimals = 0;
  let grouping = seps;
  const last = seps[seps.length - 1];
  if (last) {
    const tail = digits.length - last.at;
    if (tail !== 3 || DECIMAL_ONLY.has(last.char)) {
      if (!mayHaveDecimals || tail > 2) return undefined;
      decimals = tail;
      grouping = seps.slice(0, -1);
    }
  }
  const intEnd = digits.length - decimals;
  for (let k = 0; k < grouping.length; k++) {
    const g = grouping[k]!;
    const next = k + 1 < grouping.length ? grouping[k + 1]!.at : intEnd;
    if (next - g.at !== 3 || DECIMAL_ONLY.has(g.char)) return undefined;
    if (grouping[0]!.char !== g.char) return undefined;
  }
  if (decimals > 0 && grouping.length > 0 && grouping[0]!.char === last!.char) return undefined;
  let n = 0;
  for (const d of digits) n = n * 10 + d;
  return n / 10 ** decimals;
}
