/**
 * Anonymous answers that contain the requester's own address are never shared.
 *
 * MediaWiki names an anonymous user by their IP address (User::getName() of an anonymous user is
 * WebRequest::getIP(), which walks X-Forwarded-For through the proxies the wiki trusts), and marks
 * some answers that print the current user's name public: a `~~~` signature in an
 * `action=parse&pst=1` preview expands to `[[Special:Contributions/203.0.113.7|203.0.113.7]]`,
 * `{{REVISIONUSER}}` in a preview is the current user. Shared, such an answer tells every other
 * client who asked first.
 *
 * Two nets:
 * - the requests known to make a module print the current user's name into text they supply
 *   (`echoesRequester`): their anonymous answers are never stored in the shared tier;
 * - any anonymous answer whose body holds an address the wiki was told (the X-Forwarded-For the
 *   gateway sends), in any spelling MediaWiki prints it (IPUtils::sanitizeIP: IPv4 without
 *   leading zeros, IPv6 upper case and expanded), is not stored either.
 * Loopback addresses are not personal (every client behind a local proxy shares one), and a wiki
 * that names its own server `http://127.0.0.1:…` would otherwise never have an answer shared.
 */
import { isIPv4, isIPv6 } from 'node:net';
import { type PhpArray, phpStringParam } from './php-input.js';
import { actionFacts, queryModuleEchoes } from './modules.js';

/**
 * The request makes the wiki print the current user's name into text it supplies (the module
 * table's `echoes`, modules.ts), by its action or by any query submodule it may run:
 * - `action=parse` with `text` (a preview: `{{REVISIONUSER}}` is the current user), or with
 *   `pst`/`onlypst` (pre-save transform: `~~~`, `~~~~` and `{{subst:REVISIONUSER}}`);
 * - `action=expandtemplates` (its text is expanded as by the current user);
 * - `action=compare` with `frompst`/`topst` (the pre-save transform of supplied text);
 * - `action=query` with `difftotextpst` of prop=revisions, prop=deletedrevisions,
 *   list=allrevisions or list=alldeletedrevisions (`rvdifftotextpst`, `drvdifftotextpst`,
 *   `arvdifftotextpst`, `adrdifftotextpst`, and `g…` as a generator): the supplied
 *   `difftotext` is pre-save-transformed as the current user and shown in a diff, which splits
 *   the address into marked-up pieces the byte search below cannot find.
 * These are every module of MediaWiki 1.39 core that pre-save-transforms text a read supplies
 * (ContentTransformer::preSaveTransform in includes/api/: ApiParse, ApiComparePages,
 * ApiQueryRevisionsBase; ApiEditPage and ApiStashEdit are writes, posted, never cached).
 * test/unit/requester-address.test.ts, test/in-process/attack-requester-address-through-a-pst-diff.test.ts.
 */
export function echoesRequester(query: PhpArray): boolean {
  const action = phpStringParam(query, 'action') ?? 'help';
  if (actionFacts(action)?.echoes?.(query) === true) return true;
  return action === 'query' && queryModuleEchoes(query);
}

/** Hops of X-Forwarded-For, from the right, that may name the requester (requesterHops). */
export const MAX_REQUESTER_HOPS = 8;

/**
 * The hops of the X-Forwarded-For the wiki is sent (http/forwarding.ts: the client's own when
 * the peer is trusted, then the peer) that may name the requester: the rightmost
 * MAX_REQUESTER_HOPS. MediaWiki names the requester by one of them (WebRequest::getIP walks the
 * header from the right while each hop is a proxy it trusts: $wgCdnServers, and the
 * IsTrustedProxy hook's, which may trust more than WIKIEDGE_TRUSTED_PROXIES does, Opera Mini's
 * say); no chain of proxies is longer. Every hop was searched for in the whole answer: a client
 * that wrote a thousand addresses had each scanned for, synchronously, on a large answer
 * (test/unit/requester-address.test.ts,
 * test/in-process/attack-forwarded-for-addresses-scanned-and-unstored.test.ts).
 */
export function requesterHops(forwardedFor: string): string {
  let from = forwardedFor.length;
  for (let hops = 0; hops < MAX_REQUESTER_HOPS; hops++) {
    from = forwardedFor.lastIndexOf(',', from - 1);
    if (from === -1) return forwardedFor;
  }
  return forwardedFor.slice(from + 1).trimStart();
}

const DOTTED_QUAD = /^\d{1,3}\.\d{1,3}\.\d{1,3}\.\d{1,3}$/;
/** `::ffff:a.b.c.d` as expandIPv6 writes it: the IPv4 address in its last two words. */
const IPV4_MAPPED = /^0:0:0:0:0:ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/i;
/** An octet with a leading zero, which MediaWiki reads and prints without it. */
const LEADING_ZERO = /(?:^|\.)0\d/;

/**
 * The spellings of the X-Forwarded-For values seen last, up to MAX_REMEMBERED values of at most
 * MAX_REMEMBERED_CHARS (a client sets the header: ~1 MiB of keys at most): a client sends the
 * same value request after request, and working them out again cost ~2 µs of every miss
 * (docs/BENCHMARKS.md, the miss profile). Forgotten all at once when full: a bound, not an LRU.
 */
const remembered = new Map<string, readonly string[]>();
const MAX_REMEMBERED = 4096;
const MAX_REMEMBERED_CHARS = 128;

/** Every spelling of the non-loopback addresses in an X-Forwarded-For value the wiki may print. */
export function requesterAddressForms(forwardedFor: string): readonly string[] {
  if (forwardedFor.length > MAX_REMEMBERED_CHARS) return spellingsOf(forwardedFor);
  let forms = remembered.get(forwardedFor);
  if (forms === undefined) {
    if (remembered.size >= MAX_REMEMBERED) remembered.clear();
    remembered.set(forwardedFor, (forms = Object.freeze(spellingsOf(forwardedFor))));
  }
  return forms;
}

function spellingsOf(forwardedFor: string): string[] {
  const forms = new Set<string>();
  for (const raw of forwardedFor.split(',')) {
    const address = raw.trim();
    if (DOTTED_QUAD.test(address)) {
      // MediaWiki takes leading zeros (IPUtils::isIPv4) where Node does not. Most addresses
      // have none: they are their own canonical form, without a split and a join per request.
      const canonical = LEADING_ZERO.test(address)
        ? address
            .split('.')
            .map((octet) => String(Number(octet)))
            .join('.')
        : address;
      if (!isIPv4(canonical) || canonical.startsWith('127.')) continue;
      forms.add(address);
      forms.add(canonical);
    } else if (isIPv6(address)) {
      const expanded = expandIPv6(address);
      if (expanded === undefined || expanded === '0:0:0:0:0:0:0:1') continue;
      forms.add(address);
      forms.add(address.toLowerCase());
      forms.add(address.toUpperCase());
      // IPUtils::sanitizeIP: upper case, `::` expanded, no leading zeros in a word.
      forms.add(expanded.toUpperCase());
      forms.add(expanded);
      // An IPv4-mapped address (a dual-stack socket's `::ffff:203.0.113.7`) is the IPv4 one to
      // MediaWiki: WebRequest::getIP canonicalizes it (IPUtils::canonicalize), and names the
      // anonymous user by 203.0.113.7.
      const mapped = IPV4_MAPPED.exec(expanded);
      if (mapped) {
        const high = parseInt(mapped[1]!, 16);
        const low = parseInt(mapped[2]!, 16);
        const v4 = `${high >> 8}.${high & 255}.${low >> 8}.${low & 255}`;
        if (!v4.startsWith('127.')) forms.add(v4);
      }
    }
  }
  return [...forms];
}

/** `2001:db8::1` → `2001:db8:0:0:0:0:0:1` (words without leading zeros), or undefined. */
function expandIPv6(address: string): string | undefined {
  const mapped = /^(.*:)(\d+\.\d+\.\d+\.\d+)$/.exec(address);
  let text = address;
  if (mapped) {
    // An embedded IPv4 tail (::ffff:1.2.3.4) as two words.
    const o = mapped[2]!.split('.').map(Number);
    text = `${mapped[1]}${((o[0]! << 8) | o[1]!).toString(16)}:${((o[2]! << 8) | o[3]!).toString(16)}`;
  }
  const halves = text.split('::');
  if (halves.length > 2) return undefined;
  const head = halves[0] ? halves[0].split(':') : [];
  const tail = halves.length === 2 && halves[1] ? halves[1].split(':') : [];
  const zeros = halves.length === 2 ? 8 - head.length - tail.length : 0;
  const words = [...head, ...Array<string>(Math.max(0, zeros)).fill('0'), ...tail];
  if (words.length !== 8) return undefined;
  return words.map((w) => Number.parseInt(w, 16).toString(16)).join(':');
}

/** Whether the body holds any of the forms (byte search; forms are ASCII). */
export function mentionsAny(body: Buffer, forms: readonly string[]): boolean {
  for (const form of forms) if (body.includes(form, 0, 'latin1')) return true;
  return false;
}
