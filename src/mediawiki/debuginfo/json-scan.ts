/**
 * Scanning JSON as ApiFormatJson writes it (FormatJson::encode, PHP's json_encode): where a string,
 * a value or an object's members start and end, without decoding anything but what is asked for.
 */
import { bytesEqual, isWs, skipWs } from './bytes.js';
import { DebuginfoStripError, fail } from './result.js';

const BACKSLASH = 0x5c; // \
const QUOTE = 0x22; // "

/** Index just past the closing quote of the JSON string starting at `i`. */
export function scanJsonString(b: Buffer, i: number, end: number): number {
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
export function scanJsonValue(b: Buffer, i: number, end: number): number {
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

export interface JsonMember {
  keyStart: number;
  keyEnd: number;
  valueStart: number;
  valueEnd: number;
}

export interface JsonObjectScan {
  open: number;
  close: number;
  members: JsonMember[];
}

/** Scans the members of the JSON object at `i` (one level only). */
export function scanJsonObject(b: Buffer, i: number, end: number): JsonObjectScan {
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

export function findMember(b: Buffer, scan: JsonObjectScan, word: Buffer): number {
  let found = -1;
  scan.members.forEach((m, k) => {
    if (jsonKeyIs(b, m, word)) {
      if (found !== -1) fail('duplicate top-level key', m.keyStart);
      found = k;
    }
  });
  return found;
}

export function parseJsonObject(b: Buffer, start: number, end: number): Record<string, unknown> | undefined {
  let v: unknown;
  try {
    v = JSON.parse(b.toString('utf8', start, end));
  } catch (err) {
    throw new DebuginfoStripError('debuginfo is not valid JSON', { cause: err });
  }
  return v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
}
