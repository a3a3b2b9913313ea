/**
 * Entries live for hours and there are hundreds of thousands of them, so what each holds besides
 * its body should be small. Two things make a stored headers object big in V8:
 *
 * - strings every answer repeats (the header names; Content-Type, Cache-Control, Vary,
 *   X-Frame-Options values) held once per entry: undici and the Redis codec make new strings
 *   for every answer;
 * - deleted properties (the flow removes Set-Cookie, Content-Encoding…): after a delete V8 keeps
 *   the object as a hash table, several times the size of an object with a fixed shape.
 *
 * The store (tier.ts) keeps a fresh headers object, each property added once, and
 * shares repeated strings and module lists through bounded tables (strings are immutable:
 * sharing one between entries shares nothing else).
 *
 * Whole header sets are shared too, frozen: answers of one module fetched within the same
 * second are byte-identical in their headers, per-answer ones included (MediaWiki's Expires is
 * `now + max-age` at one-second resolution, ApiMain::sendCacheHeaders; Date is not stored). An
 * entry then costs one pointer for its headers instead of an object, its property store and its
 * own Expires string (~150 bytes of the ~660 each entry cost besides its body). Measured with
 * bench/memory.mjs.
 */
/** Values that differ from answer to answer: interning them would only fill the table. */
const PER_ANSWER = new Set(['expires', 'last-modified', 'etag', 'date', 'age', 'x-request-id', 'content-length']);
/** Bounds: what a wiki sends repeats; what it does not is kept per entry, as before. */
const MAX_STRINGS = 4096;
const MAX_STRING_LENGTH = 512;
const MAX_MODULE_LISTS = 1024;
/** Distinct header sets kept for sharing; the oldest is forgotten first (a new one every second). */
const MAX_HEADER_SETS = 1024;
/** Larger sets are compacted but not kept for sharing: the table stays under ~4 MiB. */
const MAX_HEADER_SET_ID_LENGTH = 4096;

const strings = new Map<string, string>();
const moduleLists = new Map<string, readonly string[]>();
const headerSets = new Map<string, Readonly<Record<string, string | string[]>>>();

export function intern(s: string): string {
  const found = strings.get(s);
  if (found !== undefined) return found;
  if (strings.size < MAX_STRINGS && s.length <= MAX_STRING_LENGTH) strings.set(s, s);
  return s;
}

export function compactHeaders(headers: Readonly<Record<string, string | string[]>>): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const name of Object.keys(headers)) {
    const value = headers[name]!;
    const shared = intern(name);
    // Lists are copied and frozen: a shared set must not change through a list its caller holds.
    const compact = Array.isArray(value)
      ? (Object.freeze(PER_ANSWER.has(shared) ? [...value] : value.map(intern)) as string[])
      : PER_ANSWER.has(shared)
        ? value
        : intern(value);
    // defineProperty: a header named __proto__ stays a header.
    Object.defineProperty(out, shared, { value: compact, enumerable: true, writable: true, configurable: true });
  }
  return out;
}

export function compactModules(modules: readonly string[]): readonly string[] {
  // Each name prefixed with its length: unambiguous whatever the names hold ([] and [''] join
  // alike, so may names with a NUL), cheaper than their JSON (bench/micro-miss.mjs compactModules).
  let id = '';
  for (const name of modules) id += `${name.length}:${name}`;
  const found = moduleLists.get(id);
  if (found) return found;
  const list = Object.freeze(modules.map(intern));
  if (moduleLists.size < MAX_MODULE_LISTS) moduleLists.set(id, list);
  return list;
}

/**
 * One frozen object for every equal header set (same names, values and order), while it is
 * among the MAX_HEADER_SETS most recently new ones. Frozen: entries share it, so nothing may
 * change it (the store's headers are only ever read: replayed, copied into a reply, encoded).
 */
export function sharedHeaders(headers: Readonly<Record<string, string | string[]>>): Readonly<Record<string, string | string[]>> {
  // The sets of the last few stores first, compared value by value: a miss's set is most often
  // one of them (its module's, this second), found without building its id.
  const names = Object.keys(headers);
  for (const recent of recentSets) if (sameSet(recent, names, headers)) return recent.set;
  const id = headerSetId(names, headers);
  let set = headerSets.get(id);
  if (!set) {
    set = Object.freeze(compactHeaders(headers));
    if (id.length > MAX_HEADER_SET_ID_LENGTH) return set;
    if (headerSets.size >= MAX_HEADER_SETS) headerSets.delete(headerSets.keys().next().value as string);
    headerSets.set(id, set);
  }
  if (recentSets.length >= RECENT_SETS) recentSets.shift();
  recentSets.push({ names, set });
  return set;
}

/** The header sets sharedHeaders returned last (each kept in headerSets too), with their names in order. */
const RECENT_SETS = 8;
const recentSets: { readonly names: readonly string[]; readonly set: Readonly<Record<string, string | string[]>> }[] = [];

/** Whether `headers` (its `names` in order) equal a recent set: the same names in the same order, equal values. */
function sameSet(recent: (typeof recentSets)[number], names: readonly string[], headers: Readonly<Record<string, string | string[]>>): boolean {
  if (recent.names.length !== names.length) return false;
  for (let i = 0; i < names.length; i++) {
    const name = names[i]!;
    if (recent.names[i] !== name) return false;
    const a = recent.set[name]!;
    const b = headers[name]!;
    if (a === b) continue;
    if (typeof a === 'string' || typeof b === 'string' || a.length !== b.length) return false;
    for (let j = 0; j < a.length; j++) if (a[j] !== b[j]) return false;
  }
  return true;
}

/**
 * An id equal for equal header sets only, whatever the names and values hold: each name and
 * string value prefixed with its length, a list as its JSON (which ends where it ends). Half the
 * cost of the JSON of Object.entries() (bench/micro-miss.mjs sharedHeaders).
 */
function headerSetId(names: readonly string[], headers: Readonly<Record<string, string | string[]>>): string {
  let id = '';
  for (const name of names) {
    const value = headers[name]!;
    id += typeof value === 'string' ? `${name.length}:${name}${value.length}:${value}` : `${name.length}:${name}${JSON.stringify(value)}`;
  }
  return id;
}
