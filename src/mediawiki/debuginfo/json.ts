/**
 * format=json (`application/json`), formatversion 1 and 2, utf8/ascii: ApiFormatJson writes the
 * result as one JSON object, and the block is its top-level member `"debuginfo":{…}`.
 */
import { skipWs, splice } from './bytes.js';
import { type JsonObjectScan, findMember, parseJsonObject, scanJsonObject, scanJsonValue } from './json-scan.js';
import { type DebuginfoFormat, type StripResult, WORD, fail } from './result.js';

const QUOTE = 0x22; // "

/** The byte range to cut so that the member and one separating comma go, and nothing else. */
function memberCut(scan: JsonObjectScan, k: number): [number, number] {
  const m = scan.members[k]!;
  if (scan.members.length === 1) return [scan.open + 1, scan.close]; // → "{}", as PHP writes an empty object
  if (k > 0) return [scan.members[k - 1]!.valueEnd, m.valueEnd]; // ',<ws>"debuginfo":…'
  return [m.keyStart, scan.members[1]!.keyStart]; // '"debuginfo":…,<ws>'
}

/** JSON object at [start, end) (surrounded by whitespace only). */
export function stripJson(b: Buffer, start: number, end: number, format: DebuginfoFormat): StripResult {
  const i = skipWs(b, start, end);
  if (b[i] !== 0x7b) {
    // A top-level array (opensearch) or scalar has no top-level member.
    if (b[i] === 0x5b || b[i] === QUOTE) {
      if (skipWs(b, scanJsonValue(b, i, end), end) !== end) fail('trailing bytes after JSON', i);
      return { body: b, debuginfo: undefined };
    }
    fail('expected a JSON object', i);
  }
  const scan = scanJsonObject(b, i, end);
  if (skipWs(b, scan.close + 1, end) !== end) fail('trailing bytes after JSON', scan.close + 1);
  const k = findMember(b, scan, WORD);
  if (k === -1) return { body: b, debuginfo: undefined };
  const m = scan.members[k]!;
  const debuginfo = parseJsonObject(b, m.valueStart, m.valueEnd);
  const [cs, ce] = memberCut(scan, k);
  return { body: splice(b, cs, ce), debuginfo, format };
}
