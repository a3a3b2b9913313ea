/**
 * format=xml (`text/xml`), and the custom XML printers of action=rsd (`application/rsd+xml`) and
 * action=opensearch&format=xml: the block is the child `<debuginfo …>…</debuginfo>` of the root.
 */
import { bytesEqual, isWs, splice, startsWith } from './bytes.js';
import { type StripResult, WORD, fail } from './result.js';

const QUOTE = 0x22; // "

interface XmlElement {
  name: string;
  attrs: Record<string, string>;
  children: XmlElement[];
  text: string;
}

function isNameEnd(c: number | undefined): boolean {
  return c === undefined || isWs(c) || c === 0x2f || c === 0x3e;
}

/** Index of the `>` closing the tag opened at `lt`, skipping quoted attribute values. */
function tagEnd(b: Buffer, lt: number): number {
  let j = lt + 1;
  while (j < b.length) {
    const c = b[j];
    if (c === QUOTE || c === 0x27) {
      const q = b.indexOf(c, j + 1);
      if (q === -1) fail('unterminated attribute value', j);
      j = q + 1;
      continue;
    }
    if (c === 0x3e) return j;
    if (c === 0x3c) fail('"<" inside a tag', j);
    j++;
  }
  fail('unterminated tag', lt);
}

function findOrFail(b: Buffer, needle: string, from: number): number {
  const i = b.indexOf(needle, from);
  if (i === -1) fail(`missing "${needle}"`, from);
  return i;
}

/**
 * ApiFormatXml writes the root element (`api`, or `rsd` / `SearchSuggestion` for the custom
 * printers) with the block as a direct child: `<debuginfo mwVersion=… memory=…><log>…</debuginfo>`.
 * xmlfm pretty-prints with newline + 2-space indentation; that whitespace goes with the element.
 */
export function stripXml(b: Buffer): StripResult {
  const names: string[] = [];
  let start = -1;
  let cut: [number, number] | undefined;
  let i = 0;
  for (;;) {
    const lt = b.indexOf(0x3c, i);
    if (lt === -1) break;
    const c = b[lt + 1];
    if (c === 0x3f) {
      i = findOrFail(b, '?>', lt + 2) + 2;
    } else if (c === 0x21) {
      if (startsWith(b, lt, '<!--')) i = findOrFail(b, '-->', lt + 4) + 3;
      else if (startsWith(b, lt, '<![CDATA[')) i = findOrFail(b, ']]>', lt + 9) + 3;
      else i = tagEnd(b, lt) + 1;
    } else if (c === 0x2f) {
      const gt = tagEnd(b, lt);
      let ne = lt + 2;
      while (!isNameEnd(b[ne])) ne++;
      const name = b.toString('latin1', lt + 2, ne);
      if (names.pop() !== name) fail(`mismatched </${name}>`, lt);
      if (start !== -1 && names.length === 1) {
        if (cut) fail('two debuginfo elements', start);
        cut = [start, gt + 1];
        start = -1;
      }
      i = gt + 1;
    } else {
      const gt = tagEnd(b, lt);
      let ne = lt + 1;
      while (!isNameEnd(b[ne])) ne++;
      if (ne === lt + 1) fail('empty tag name', lt);
      const selfClosing = b[gt - 1] === 0x2f;
      const childOfRoot = names.length === 1 && bytesEqual(b, lt + 1, ne, WORD);
      if (childOfRoot) {
        if (cut) fail('two debuginfo elements', lt);
        start = lt;
      }
      if (selfClosing) {
        if (childOfRoot) {
          cut = [lt, gt + 1];
          start = -1;
        }
      } else {
        names.push(b.toString('latin1', lt + 1, ne));
      }
      i = gt + 1;
    }
  }
  if (names.length !== 0) fail('unclosed XML element', b.length);
  if (!cut) return { body: b, debuginfo: undefined };
  // Take the indentation in front of the element too (whitespace-only text after a tag).
  let s = cut[0];
  while (s > 0 && isWs(b[s - 1])) s--;
  if (b[s - 1] !== 0x3e) s = cut[0];
  const element = parseXmlElement(b.subarray(cut[0], cut[1]));
  return { body: splice(b, s, cut[1]), debuginfo: xmlDebuginfoObject(element), format: 'xml' };
}

function decodeXmlEntities(s: string): string {
  if (!s.includes('&')) return s;
  let out = '';
  let i = 0;
  for (;;) {
    const amp = s.indexOf('&', i);
    if (amp === -1) return out + s.slice(i);
    out += s.slice(i, amp);
    const semi = s.indexOf(';', amp);
    const ent = semi === -1 || semi - amp > 10 ? '' : s.slice(amp + 1, semi);
    let rep: string | undefined;
    if (ent === 'amp') rep = '&';
    else if (ent === 'lt') rep = '<';
    else if (ent === 'gt') rep = '>';
    else if (ent === 'quot') rep = '"';
    else if (ent === 'apos') rep = "'";
    else if (ent.startsWith('#x') || ent.startsWith('#X')) rep = codePoint(Number.parseInt(ent.slice(2), 16));
    else if (ent.startsWith('#')) rep = codePoint(Number.parseInt(ent.slice(1), 10));
    if (rep === undefined) {
      out += '&';
      i = amp + 1;
    } else {
      out += rep;
      i = semi + 1;
    }
  }
}

function codePoint(n: number): string | undefined {
  return Number.isInteger(n) && n >= 0 && n <= 0x10ffff ? String.fromCodePoint(n) : undefined;
}

/** A small tree for the (already bounded and validated) debuginfo element. */
function parseXmlElement(b: Buffer): XmlElement {
  const root: XmlElement = { name: '#root', attrs: {}, children: [], text: '' };
  const stack: XmlElement[] = [root];
  let i = 0;
  for (;;) {
    const lt = b.indexOf(0x3c, i);
    const textEnd = lt === -1 ? b.length : lt;
    if (textEnd > i) stack[stack.length - 1]!.text += decodeXmlEntities(b.toString('utf8', i, textEnd));
    if (lt === -1) break;
    const gt = tagEnd(b, lt);
    if (b[lt + 1] === 0x2f) {
      stack.pop();
      i = gt + 1;
      continue;
    }
    const selfClosing = b[gt - 1] === 0x2f;
    const tag = b.toString('utf8', lt + 1, selfClosing ? gt - 1 : gt);
    const el: XmlElement = { name: '', attrs: {}, children: [], text: '' };
    let k = 0;
    while (k < tag.length && !/\s/.test(tag[k]!)) k++;
    el.name = tag.slice(0, k);
    // attributes: name="value" pairs (values never hold a raw '"': htmlspecialchars ENT_QUOTES)
    for (;;) {
      const eq = tag.indexOf('="', k);
      if (eq === -1) break;
      const close = tag.indexOf('"', eq + 2);
      if (close === -1) break;
      el.attrs[tag.slice(k, eq).trim()] = decodeXmlEntities(tag.slice(eq + 2, close));
      k = close + 1;
    }
    stack[stack.length - 1]!.children.push(el);
    if (!selfClosing) stack.push(el);
    i = gt + 1;
  }
  const el = root.children[0];
  if (!el) fail('empty debuginfo element', 0);
  return el;
}

/** Containers MWDebug marks with setIndexedTagName: log/line, debugLog/msg, queries/query, includes/queries. */
const XML_LISTS = new Set(['log', 'debugLog', 'queries', 'includes']);
const XML_NUMBERS = new Set(['time']);

function xmlItem(el: XmlElement): unknown {
  const attrNames = Object.keys(el.attrs).filter((a) => a !== 'xml:space');
  if (attrNames.length === 0 && el.children.length === 0) return el.text;
  return xmlObject(el);
}

function xmlObject(el: XmlElement): Record<string, unknown> {
  const o: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(el.attrs)) {
    if (k === 'xml:space') continue;
    o[k] = XML_NUMBERS.has(k) && v !== '' && Number.isFinite(Number(v)) ? Number(v) : v;
  }
  for (const child of el.children) {
    o[child.name] = XML_LISTS.has(child.name) ? child.children.map(xmlItem) : xmlItem(child);
  }
  return o;
}

function xmlDebuginfoObject(el: XmlElement): Record<string, unknown> {
  return xmlObject(el);
}
