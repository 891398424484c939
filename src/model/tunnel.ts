/**
 * Tunnel networks (WIREGUARD_IPV4_NETWORK, WIREGUARD_IPV6_NETWORK) and the addresses a server
 * can still hand out in them, counted as the bundled server and 0.7.36 allocate: every address
 * between the network and broadcast addresses that no device and no server address holds.
 */
import { parseCidrOrAddress, parseIpAddress, type IpFamily, type ParsedCidr } from './net.js';

export const TUNNEL_FAMILIES = [
  { field: 'ipv4', family: 4 },
  { field: 'ipv6', family: 6 },
] as const satisfies readonly { field: 'ipv4' | 'ipv6'; family: IpFamily }[];

/**
 * What is wrong with a declared tunnel network, as a code (src/views/model-tunnel.ts words it): it
 * is not an IPv`family` CIDR block, or its prefix is longer than `longest` and leaves no room for devices.
 */
export type TunnelNetworkProblem = { code: 'not_a_block'; family: IpFamily } | { code: 'no_room'; longest: number };

/** A declared tunnel network: an IPv`family` CIDR block leaving room for devices, or what is wrong with it. */
export function parseTunnelNetwork(
  text: unknown,
  family: IpFamily,
): { ok: true; block: ParsedCidr } | { ok: false; problem: TunnelNetworkProblem } {
  const block = parseCidrOrAddress(text);
  const bits = family === 4 ? 32 : 128;
  if (!block || block.family !== family || !block.hadPrefix)
    return { ok: false, problem: { code: 'not_a_block', family } };
  if (block.prefix > bits - 2) return { ok: false, problem: { code: 'no_room', longest: bits - 2 } };
  return { ok: true, block };
}

/** Whether `address` is one a device can hold in `block`: inside it, neither its network nor its broadcast address. */
export function isHostOf(block: ParsedCidr, address: bigint): boolean {
  return address > block.start && address < block.end;
}

/** The addresses of `block` a device can never hold: network, broadcast, and the server's addresses inside it. */
export function reservedIn(block: ParsedCidr, serverAddresses: readonly string[]): Set<bigint> {
  const reserved = new Set<bigint>([block.start, block.end]);
  for (const text of serverAddresses) {
    const address = parseIpAddress(text);
    if (address && address.family === block.family && address.value >= block.start && address.value <= block.end)
      reserved.add(address.value);
  }
  return reserved;
}

/** How many addresses `block` holds. */
export function blockSize(block: ParsedCidr): bigint {
  return block.end - block.start + 1n;
}
