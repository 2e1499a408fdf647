// A network policy compiled for the egress proxy's decisions (egress-proxy.ts).
import { BlockList, isIP } from 'node:net';
import type { NetworkPolicy } from '../../protocol/v1/network-policy.ts';

/** Compiled policy: CIDR lists as BlockLists, host patterns as exact names and `*.` suffixes. */
export class CompiledPolicy {
  readonly mode: NetworkPolicy['mode'];
  readonly #exact = new Set<string>();
  readonly #suffixes: string[] = [];
  readonly #allowed = new BlockList();
  readonly #denied = new BlockList();
  readonly #hasAllowedCidrs: boolean;

  constructor(policy: NetworkPolicy) {
    this.mode = policy.mode;
    const custom = policy.mode === 'custom' ? policy : undefined;
    for (const host of custom?.allowedHosts ?? []) {
      if (host.startsWith('*.')) this.#suffixes.push(host.slice(1));
      else this.#exact.add(host);
    }
    this.#hasAllowedCidrs = (custom?.allowedCIDRs?.length ?? 0) > 0;
    for (const cidr of custom?.allowedCIDRs ?? []) addRange(this.#allowed, cidr);
    for (const cidr of custom?.deniedCIDRs ?? []) addRange(this.#denied, cidr);
  }

  nameAllowed(host: string): boolean {
    return this.#exact.has(host) || this.#suffixes.some((suffix) => host.endsWith(suffix) && host.length > suffix.length);
  }

  addressDenied(address: string): boolean {
    return inList(this.#denied, address);
  }

  addressAllowed(address: string): boolean {
    return this.#hasAllowedCidrs && inList(this.#allowed, address);
  }
}

function addRange(list: BlockList, cidr: string): void {
  const [address, bits] = cidr.split('/') as [string, string | undefined];
  const type = isIP(address) === 6 ? 'ipv6' : 'ipv4';
  list.addSubnet(address, bits === undefined ? (type === 'ipv4' ? 32 : 128) : Number(bits), type);
}

/** An address as BlockList checks it; an IPv4-mapped IPv6 address is judged as the IPv4 address it carries. */
export function inList(list: BlockList, address: string): boolean {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) return list.check(mapped[1]!, 'ipv4');
  return list.check(address, isIP(address) === 6 ? 'ipv6' : 'ipv4');
}
