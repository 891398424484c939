/**
 * The 1.x portal's changeset rules for a Resource (elixir/lib/portal/resource.ex and
 * changeset.ex at the commit in docs/firezone-1x.md), restated as a checker of the emitted
 * `firezone_resource` bodies: name length and uniqueness, the address by type (no port, a
 * normalised CIDR, neither containing nor inside a reserved block), and the filters (tcp, udp or
 * icmp; ports 1–65535 that do not overlap). Returns what the portal would refuse. Pure.
 */
import { parseCidrOrAddress, parseIpAddress } from '../model/net.js';
import { RESERVED_BLOCKS } from './space.js';

export interface ResourceBody {
  name?: unknown;
  type?: unknown;
  address?: unknown;
  filters?: unknown;
}

const PORT_TOKEN = /^\s*(\d+)\s*(?:-\s*(\d+))?\s*$/;

function reservedOverlap(text: string): string | undefined {
  const block = parseCidrOrAddress(text);
  if (!block) return undefined;
  for (const reserved of RESERVED_BLOCKS) {
    const r = parseCidrOrAddress(reserved)!;
    if (r.family !== block.family) continue;
    const contains = r.start <= block.start && block.end <= r.end;
    const contained = block.start <= r.start && r.end <= block.end;
    if (contains || contained) return reserved;
  }
  return undefined;
}

function addressProblems(type: unknown, address: unknown): string[] {
  if (typeof address !== 'string' || address === '') return ['address: required for cidr and ip'];
  if (/\]:\d+$/.test(address) || (address.includes(':') && !/:.*:/.test(address)))
    return ['address: cannot contain a port number'];
  if (type === 'ip') {
    if (!parseIpAddress(address) || address.includes('/')) return ['address: is not a valid IP address'];
  } else {
    const block = parseCidrOrAddress(address);
    if (!block || !address.includes('/')) return ['address: is not a valid CIDR range'];
    if (block.network !== address) return [`address: not normalised (the portal stores ${block.network})`];
  }
  const reserved = reservedOverlap(address);
  return reserved ? [`address: contains or lies in ${reserved}`] : [];
}

function filterProblems(filters: unknown): string[] {
  if (filters === undefined) return [];
  if (!Array.isArray(filters)) return ['filters: must be a list'];
  const out: string[] = [];
  filters.forEach((filter: unknown, i) => {
    const f = filter as { protocol?: unknown; ports?: unknown };
    if (f.protocol !== 'tcp' && f.protocol !== 'udp' && f.protocol !== 'icmp')
      out.push(`filters[${i}].protocol: must be tcp, udp or icmp`);
    if (f.ports === undefined) return;
    if (!Array.isArray(f.ports)) return void out.push(`filters[${i}].ports: must be a list`);
    if (f.protocol === 'icmp' && f.ports.length > 0) out.push(`filters[${i}].ports: not applicable to icmp`);
    const ranges: [number, number][] = [];
    for (const token of f.ports) {
      const m = typeof token === 'string' ? PORT_TOKEN.exec(token) : null;
      if (!m) return void out.push(`filters[${i}].ports: must be between 1 and 65535`);
      const lo = Number(m[1]);
      const hi = m[2] === undefined ? lo : Number(m[2]);
      if (lo < 1 || hi > 65535 || lo > hi) return void out.push(`filters[${i}].ports: must be between 1 and 65535`);
      ranges.push([lo, hi]);
    }
    ranges.sort((a, b) => a[0] - b[0]);
    for (let k = 1; k < ranges.length; k++)
      if (ranges[k]![0] <= ranges[k - 1]![1]) return void out.push(`filters[${i}].ports: port ranges must not overlap`);
  });
  return out;
}

/** What the portal would refuse in each Resource body (by Terraform address); empty when none. */
export function checkResources(bodies: Record<string, ResourceBody>): { address: string; problem: string }[] {
  const out: { address: string; problem: string }[] = [];
  const names = new Map<string, string>();
  for (const [address, body] of Object.entries(bodies)) {
    const problems: string[] = [];
    if (typeof body.name !== 'string' || body.name.trim().length < 1 || [...body.name].length > 255)
      problems.push('name: must be 1 to 255 characters');
    else if (names.has(body.name))
      problems.push(`name: resource with this name already exists (${names.get(body.name)})`);
    else names.set(body.name, address);
    if (body.type !== 'cidr' && body.type !== 'ip') problems.push('type: netform emits cidr or ip only');
    else problems.push(...addressProblems(body.type, body.address));
    problems.push(...filterProblems(body.filters));
    for (const problem of problems) out.push({ address, problem });
  }
  return out;
}
