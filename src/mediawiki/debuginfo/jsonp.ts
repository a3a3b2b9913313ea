/** format=json with `callback=` (`text/javascript`): the JSON object of json.ts inside `/**∕cb(…)`. */
import { startsWith } from './bytes.js';
import { stripJson } from './json.js';
import { type StripResult, fail } from './result.js';

/** `/**∕cb(…)`: `ApiFormatJson` strips the callback to `[][.'"_A-Za-z0-9]`, so the first `(` opens the JSON. */
export function stripJsonp(b: Buffer): StripResult {
  if (!startsWith(b, 0, '/**/')) fail('JSONP without the /**/ prefix', 0);
  const open = b.indexOf(0x28, 4);
  if (open === -1) fail('JSONP without "("', 4);
  for (let k = 4; k < open; k++) {
    const c = b[k]!;
    const ok = (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a) || '][.\'"_'.includes(String.fromCharCode(c));
    if (!ok) fail('unexpected byte in JSONP callback', k);
  }
  if (b[b.length - 1] !== 0x29) fail('JSONP not closed by ")"', b.length - 1);
  const r = stripJson(b, open + 1, b.length - 1, 'jsonp');
  return r.format ? r : { body: b, debuginfo: undefined };
}
