/**
 * Byte scanning shared by every format parser: no regular expression runs over a body.
 *
 * Byte values (`QUOTE = 0x22`) are not shared from here: each parser declares the ones it compares
 * with. V8 (Node 20) folds a module's own `const` into the comparison, but loads an imported
 * binding on every pass of a scanning loop: importing them made stripping ~3% slower over the
 * fixtures of test/fixtures/debuginfo.
 */

export function startsWith(b: Buffer, i: number, s: string): boolean {
  if (i + s.length > b.length) return false;
  for (let k = 0; k < s.length; k++) if (b[i + k] !== s.charCodeAt(k)) return false;
  return true;
}

export function isWs(c: number | undefined): boolean {
  return c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;
}

export function skipWs(b: Buffer, i: number, end: number): number {
  while (i < end && isWs(b[i])) i++;
  return i;
}

export function bytesEqual(b: Buffer, start: number, end: number, word: Buffer): boolean {
  return end - start === word.length && b.compare(word, 0, word.length, start, end) === 0;
}

export function splice(b: Buffer, start: number, end: number, insert?: Buffer): Buffer {
  return insert ? Buffer.concat([b.subarray(0, start), insert, b.subarray(end)]) : Buffer.concat([b.subarray(0, start), b.subarray(end)]);
}
