/**
 * format=php (`application/vnd.php.serialized`): ApiFormatPhp writes `serialize()` of the result,
 * and the block is the top-level pair `s:9:"debuginfo";a:N:{…}`.
 */
import { type StripResult, fail } from './result.js';

const QUOTE = 0x22; // "

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
      const n = text === 'INF' ? Infinity : text === '-INF' ? -Infinity : text === 'NAN' ? Number.NaN : Number(text);
      if (text === '' || (Number.isNaN(n) && text !== 'NAN')) fail('bad serialized number', i);
      return [n, semi + 1];
    }
    case 0x73: {
      // s:3:"abc";  (length in bytes)
      const [len, colon] = phpInt(b, i + 2, 0x3a);
      const s = colon + 2;
      if (b[colon + 1] !== QUOTE || b[s + len] !== QUOTE || b[s + len + 1] !== 0x3b) fail('bad serialized string', i);
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
export function stripPhp(b: Buffer): StripResult {
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
    const isDebuginfo = afterKey - keyStart === PHP_KEY.length && b.compare(PHP_KEY, 0, PHP_KEY.length, keyStart, afterKey) === 0;
    const [value, afterValue] = phpValue(b, afterKey, isDebuginfo, 1);
    if (isDebuginfo) {
      if (cut) fail('two debuginfo keys', keyStart);
      cut = [keyStart, afterValue];
      debuginfo = value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
    }
    j = afterValue;
  }
  if (b[j] !== 0x7d || j + 1 !== b.length) fail('trailing bytes after serialized PHP', j);
  if (!cut) return { body: b, debuginfo: undefined };
  const head = Buffer.from(`a:${count - 1}:{`, 'latin1');
  const out = Buffer.concat([head, b.subarray(bodyStart, cut[0]), b.subarray(cut[1])]);
  return { body: out, debuginfo, format: 'php' };
}
