/** Text inside an HTML element, escaped as MediaWiki's `Html::element()` escapes it. */
import { startsWith } from './bytes.js';
import { fail } from './result.js';

const AMP_ESC = Buffer.from('&amp;');
const LT_ESC = Buffer.from('&lt;');

/** Inverse of `Html::element()`'s escaping (`&` → `&amp;`, `<` → `&lt;`, nothing else). */
export function htmlTextDecode(b: Buffer): Buffer {
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

export function htmlTextEncode(b: Buffer): Buffer {
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
