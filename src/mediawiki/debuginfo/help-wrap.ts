/**
 * `action=help&wrap=1` (`application/json`): besides the top-level member that json.ts removes,
 * ApiHelp puts the help page, toolbar copy included, in the JSON string `help.help`.
 */
import { skipWs } from './bytes.js';
import { stripHtml } from './html.js';
import { findMember, scanJsonObject } from './json-scan.js';
import { rewriteJsonStringHtml } from './json-string.js';
import { type StripResult, WORD_CAMEL } from './result.js';

const QUOTE = 0x22; // "

/**
 * `action=help&wrap=1`: the help page (with the toolbar's copy) is the JSON string `help.help`
 * of the JSON object that starts at `from` (0, or inside a JSONP callback).
 */
export function stripHelpWrapToolbar(r: StripResult, from = 0): StripResult {
  const b = r.body;
  if (b.indexOf(WORD_CAMEL) === -1) return r;
  const i = skipWs(b, from, b.length);
  if (b[i] !== 0x7b) return r;
  const top = scanJsonObject(b, i, b.length);
  const k = findMember(b, top, Buffer.from('help'));
  if (k === -1) return r;
  const helpValue = top.members[k]!;
  if (b[helpValue.valueStart] !== 0x7b) return r;
  const inner = scanJsonObject(b, helpValue.valueStart, helpValue.valueEnd);
  const h = findMember(b, inner, Buffer.from('help'));
  if (h === -1) return r;
  const m = inner.members[h]!;
  if (b[m.valueStart] !== QUOTE) return r;
  const done = rewriteJsonStringHtml(b, m.valueStart, m.valueEnd, stripHtml);
  if (!done) return r;
  return { body: done.body, debuginfo: r.debuginfo ?? done.debuginfo, format: r.format ?? 'json' };
}
