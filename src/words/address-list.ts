/**
 * Lists of addresses and CIDR ranges (`10.0.0.0/8`, `fd00::/8`, `192.0.2.7`), as operators write
 * them for containers and Kubernetes, matched against a peer's address.
 *
 * Two lists use it, on purpose kept apart: who may send PURGE (WIKIEDGE_PURGE_ALLOW: the hosts
 * that send the wiki's $wgCdnServers traffic) and whose X-Forwarded-* are believed
 * (WIKIEDGE_TRUSTED_PROXIES: the TLS terminator or load balancer in front). A terminator that may
 * forward a client's headers must not thereby be allowed to purge, nor the wiki to speak for
 * clients.
 *
 * The fresh-hit path asks once per request: answers are remembered per address (a handful of
 * peers hold keep-alive connections), bounded.
 */
import { BlockList, isIP } from 'node:net';

const MEMO_MAX = 1024;

export class AddressMatcher {
  private readonly exact = new Set<string>();
  private readonly ranges: BlockList | undefined;
  private readonly memo = new Map<string, boolean>();

  /** `entries` were validated by parseAddressList (config/config.ts). */
  constructor(readonly entries: readonly string[]) {
    let ranges: BlockList | undefined;
    for (const entry of entries) {
      const slash = entry.indexOf('/');
      if (slash === -1) {
        this.exact.add(canonical(entry));
        continue;
      }
      ranges ??= new BlockList();
      const address = entry.slice(0, slash);
      const family = isIP(address) === 6 ? 'ipv6' : 'ipv4';
      ranges.addSubnet(address, Number(entry.slice(slash + 1)), family);
    }
    this.ranges = ranges;
  }

  /** `address`: a socket's remoteAddress (IPv4-mapped IPv6 compares as its IPv4 address). */
  has(address: string | undefined): boolean {
    if (!address) return false;
    const known = this.memo.get(address);
    if (known !== undefined) return known;
    const plain = canonical(address);
    let found = this.exact.has(plain);
    if (!found && this.ranges) {
      const family = isIP(plain);
      if (family !== 0) found = this.ranges.check(plain, family === 6 ? 'ipv6' : 'ipv4');
    }
    if (this.memo.size >= MEMO_MAX) this.memo.clear();
    this.memo.set(address, found);
    return found;
  }
}

/** IPv4-mapped IPv6 (`::ffff:127.0.0.1`) as its IPv4 address; IPv6 in lower case. */
export function canonical(address: string): string {
  if (address.startsWith('::ffff:') && address.includes('.')) return address.slice(7);
  return address.toLowerCase();
}

/** Checks one entry; returns undefined when it is valid, else why not. */
export function addressEntryProblem(entry: string): string | undefined {
  const slash = entry.indexOf('/');
  const address = slash === -1 ? entry : entry.slice(0, slash);
  const family = isIP(address);
  if (family === 0) return `${JSON.stringify(entry)} is not an IP address or CIDR range`;
  if (slash === -1) return undefined;
  const bits = entry.slice(slash + 1);
  const max = family === 4 ? 32 : 128;
  if (!/^\d{1,3}$/.test(bits) || Number(bits) > max) return `${JSON.stringify(entry)}: the prefix length must be 0 to ${max}`;
  return undefined;
}
