/**
 * Who a request is charged to, keyed as MediaWiki keys its own rate limits (User::pingLimiter,
 * includes/user/User.php; RateLimiter in later versions): a logged-in client by its user, an
 * anonymous one by its address, an IPv6 address by its /64 (IPUtils::getSubnet, the `subnet`
 * key; one host commonly holds a whole /64). Here a session holder is keyed by its session
 * (the HMAC slot of its credentials, mediawiki/identity.ts) until the gateway learns whose it is
 * (policy/session-users.ts), then by that user: so each bot on a shared address (an office's
 * NAT, a Toolforge host) has budgets of its own, while anonymous clients behind it share one.
 *
 * A session cookie costs nothing to make up, and the wiki reads each one it is given: so the
 * sessions of one address are also charged together (`group`), to budgets
 * WIKIEDGE_CLIENT_SESSIONS_PER_ADDRESS times one client's. A flood that sends a new made-up
 * session with every request is limited there, as a flood without cookies is by its address.
 */
import type { IncomingMessage } from 'node:http';
import { isIP } from 'node:net';
import { headerString } from '../http/forwarding.js';
import { type Identity, type IdentityRules, sessionIdentityFromHeaders } from '../mediawiki/identity.js';
import type { SessionUsers } from '../policy/session-users.js';
import { type AddressMatcher, canonical } from '../words/address-list.js';

/**
 * The client a request is charged to: the address the gateway trusts it came from. The peer
 * itself, unless the peer is a trusted proxy (WIKIEDGE_TRUSTED_PROXIES); then X-Forwarded-For is
 * walked from the right, past every trusted proxy, as MediaWiki's WebRequest::getIP() walks it
 * (includes/WebRequest.php). A client behind an untrusted proxy is that proxy: operators must list their
 * TLS terminator, or every client behind it shares one budget.
 */
export function clientAddress(peer: string | undefined, forwardedFor: string | undefined, trusted: AddressMatcher): string {
  const self = canonical(peer ?? '');
  if (!forwardedFor || !trusted.has(peer)) return self;
  const hops = forwardedFor.split(',');
  for (let i = hops.length - 1; i >= 0; i--) {
    const hop = canonical(hops[i]!.trim());
    if (hop === '') continue;
    if (!trusted.has(hop)) return hop;
  }
  // Every hop is a trusted proxy: the leftmost one is as far as anyone can tell.
  return canonical(hops[0]!.trim()) || self;
}

export interface ClientKey {
  /**
   * The budget and the share at the wiki of this client: an anonymous client's address (or /64)
   * as it is, `s:` and a session's slot, `u:` and a user (no address starts with `s:` or `u:`).
   */
  readonly key: string;
  /** A session holder's address (`g:` and the address): the budgets of the sessions from there together. */
  readonly group: string;
}

/** A session whose user the gateway has not learned from the wiki: a made-up cookie is one, and costs nothing. */
export function unknownSession(client: ClientKey): boolean {
  return client.key.startsWith('s:');
}

/** The address of a session holder's group (`g:2001:db8:1:2::/64` → `2001:db8:1:2::/64`). */
export function groupAddress(group: string): string {
  return group.slice(2);
}

/**
 * `address`: the client's (clientAddress above); `identity`: who it says it is;
 * `userOf`: the user a session slot is known to belong to.
 */
export function clientKey(address: string, identity: Identity, userOf: (slot: string) => string | undefined): ClientKey {
  const where = addressKey(address);
  if (identity.kind !== 'session') return { key: where, group: '' };
  const user = userOf(identity.slot);
  return { key: user === undefined ? `s:${identity.slot}` : `u:${user}`, group: `g:${where}` };
}

/**
 * The client a request is charged to by the budgets of uncached requests (steps/admission.ts):
 * who it is comes from its headers as received (any credential the wiki could read: a made-up one
 * only gets the session's budget, which its address's group bounds). Bytes stored are charged to
 * the client as the gateway served it (steps/flow.ts storeAllowed).
 */
export function clientOfRequest(
  parts: { readonly trusted: AddressMatcher; readonly identityRules: IdentityRules; readonly sessionUsers: SessionUsers },
  req: IncomingMessage,
): ClientKey {
  const address = clientAddress(req.socket.remoteAddress, headerString(req.headers['x-forwarded-for']), parts.trusted);
  const identity = sessionIdentityFromHeaders(req.headers, parts.identityRules, () => address);
  return clientKey(address, identity, (slot) => parts.sessionUsers.userOf(slot));
}

/** An IPv4 address as it is; an IPv6 one as its /64 (`2001:db8:1:2::/64`). */
export function addressKey(address: string): string {
  const plain = address.includes('%') ? address.slice(0, address.indexOf('%')) : address;
  if (isIP(plain) !== 6) return address;
  const groups = expandIpv6(plain);
  if (groups === undefined) return address;
  return `${groups
    .slice(0, 4)
    .map((g) => g.toString(16))
    .join(':')}::/64`;
}

/** The eight 16-bit groups of an IPv6 address (an IPv4 tail becomes the last two). */
function expandIpv6(address: string): number[] | undefined {
  let text = address.toLowerCase();
  const v4 = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (v4) {
    const [a, b, c, d] = v4.slice(1).map(Number) as [number, number, number, number];
    text = `${text.slice(0, v4.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const halves = text.split('::');
  if (halves.length > 2) return undefined;
  const part = (s: string) => (s === '' ? [] : s.split(':').map((g) => parseInt(g, 16)));
  const head = part(halves[0]!);
  const tail = halves.length === 2 ? part(halves[1]!) : [];
  const missing = 8 - head.length - tail.length;
  if (missing < 0 || (halves.length === 1 && missing !== 0)) return undefined;
  return [...head, ...new Array<number>(missing).fill(0), ...tail];
}
