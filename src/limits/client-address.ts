/**
 * The client a request is charged to: the address the gateway trusts it came from. The peer
 * itself, unless the peer is a trusted proxy (WIKIEDGE_TRUSTED_PROXIES); then X-Forwarded-For is
 * walked from the right, past every trusted proxy, as MediaWiki's WebRequest::getIP() walks it
 * (includes/WebRequest.php). A client behind an untrusted proxy is that proxy: operators must list their
 * TLS terminator, or every client behind it shares one budget.
 */
import { type AddressMatcher, canonical } from '../words/address-list.js';

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
