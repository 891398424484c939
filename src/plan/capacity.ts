/**
 * Tunnel-network capacity: whether the devices the plan creates get addresses. `/v0` does not
 * expose the server's tunnel networks, so the count needs `settings.tunnel_networks`:
 * - declared: per family, free = the network's addresses less the network and broadcast
 *   addresses, the server addresses, the live devices' addresses (except devices this apply
 *   deletes before it creates: device deletions and replacements; a user's deletion runs after
 *   the creates) and the addresses the plan pins. New devices
 *   without a pinned address that do not fit are a plan error naming how many are missing; a
 *   pinned address outside the network, or reserved, is a plan error too (one a live device holds
 *   is conflicts.ts's).
 * - not declared: a warning when the new devices exceed what the smallest block holding the live
 *   devices (at least the server's default /24 or /120) could still hold.
 * Counted as the server allocates: every address strictly between network and broadcast.
 */
import { DEFAULT_SERVER_ADDRESSES } from '../access/model.js';
import { formatAddress, parseCidrOrAddress, parseIpAddress, type IpFamily, type ParsedCidr } from '../model/net.js';
import type { ApiDevice } from '../model/types.js';
import { blockSize, isHostOf, parseTunnelNetwork, reservedIn, TUNNEL_FAMILIES } from '../model/tunnel.js';
import { PHASE, type PlanContext } from './context.js';
import type { NetworkShortfall } from './problems.js';
import type { Change } from './types.js';

interface Demand {
  /** Live devices whose addresses this apply frees (deleted, or replaced). */
  freed: Set<ApiDevice>;
  /** Addresses the plan's creates, replacements and moves pin, per family, with the change pinning each. */
  pinned: Map<'ipv4' | 'ipv6', { address: bigint; text: string; change: Change }[]>;
  /** New devices that take whatever address the server hands out, per family. */
  unpinned: Map<'ipv4' | 'ipv6', number>;
}

function demandOf(ctx: PlanContext): Demand {
  const demand: Demand = {
    freed: new Set(),
    pinned: new Map([
      ['ipv4', []],
      ['ipv6', []],
    ]),
    unpinned: new Map([
      ['ipv4', 0],
      ['ipv6', 0],
    ]),
  };
  const free = (id: string | undefined) => {
    const device = id === undefined ? undefined : ctx.index.devicesById.get(id);
    if (device) demand.freed.add(device);
  };
  for (const change of ctx.changes.values()) {
    // Only deletions that run before the creates free addresses for them: device deletions (moved
    // first, ordering.ts) and replacements; a user's deletion runs last, after every create.
    if (change.kind !== 'device') continue;
    if ((change.action === 'delete' && change.phase < PHASE.members) || change.action === 'replace')
      free(change.liveId);
    for (const { field } of TUNNEL_FAMILIES) {
      const moves = change.action === 'update' && change.fields.some((f) => f.field === field);
      if (change.action !== 'create' && change.action !== 'replace' && !moves) continue;
      const address = parseIpAddress(change.body?.[field]);
      if (address) demand.pinned.get(field)!.push({ address: address.value, text: address.text, change });
      else if (change.action !== 'update') demand.unpinned.set(field, demand.unpinned.get(field)! + 1);
      if (moves) free(change.liveId);
    }
  }
  return demand;
}

/** The live devices' addresses of one family that stay after this apply (`live`: every live device's, parsed already). */
function keptAddresses(
  ctx: PlanContext,
  demand: Demand,
  field: 'ipv4' | 'ipv6',
  live: (bigint | undefined)[] = liveAddresses(ctx, field),
): bigint[] {
  const kept: bigint[] = [];
  const devices = ctx.live.devices;
  for (let i = 0; i < devices.length; i++) {
    const address = live[i];
    if (address !== undefined && !demand.freed.has(devices[i]!)) kept.push(address);
  }
  return kept;
}

/** Every live device's address of one family, in the order of the live list (undefined where it has none). */
function liveAddresses(ctx: PlanContext, field: 'ipv4' | 'ipv6'): (bigint | undefined)[] {
  return ctx.live.devices.map((d) => parseIpAddress(d[field])?.value);
}

export function checkTunnelCapacity(ctx: PlanContext): void {
  const demand = demandOf(ctx);
  const networks = ctx.desired.settings.tunnel_networks;
  const serverAddresses = ctx.desired.settings.server_addresses ?? DEFAULT_SERVER_ADDRESSES;
  const missing: NetworkShortfall[] = [];
  for (const { field, family } of TUNNEL_FAMILIES) {
    const declared = networks?.[field];
    const wanted = demand.unpinned.get(field)!;
    if (declared === undefined) {
      if (wanted > 0) warnWithoutNetwork(ctx, demand, field, family, serverAddresses, wanted);
      continue;
    }
    const parsed = parseTunnelNetwork(declared, family);
    if (!parsed.ok) continue; // validate reports it
    const block = parsed.block;
    const taken = reservedIn(block, serverAddresses);
    for (const address of keptAddresses(ctx, demand, field)) if (isHostOf(block, address)) taken.add(address);
    for (const pin of demand.pinned.get(field)!) {
      if (!isHostOf(block, pin.address) || reservedIn(block, serverAddresses).has(pin.address)) {
        ctx.problems.push({
          code: 'pin_refused',
          label: pin.change.label,
          field,
          address: pin.text,
          ...(isHostOf(block, pin.address) ? {} : { network: block.network }),
        });
      }
      taken.add(pin.address);
    }
    const free = blockSize(block) - BigInt(taken.size);
    if (BigInt(wanted) > free)
      missing.push({
        field,
        missing: String(BigInt(wanted) - free),
        wanted,
        free: String(free),
        network: block.network,
      });
  }
  if (missing.length > 0) ctx.problems.push({ code: 'network_full', missing });
}

/** The smallest block holding every address, with at least `hostBits` host bits. */
function blockHolding(family: IpFamily, addresses: bigint[], hostBits: number): ParsedCidr | null {
  let low = addresses[0]!;
  let high = low;
  for (const a of addresses) {
    if (a < low) low = a;
    if (a > high) high = a;
  }
  const bits = family === 4 ? 32 : 128;
  const differing = Math.max((low ^ high).toString(2).length - (low === high ? 1 : 0), hostBits);
  const start = (low >> BigInt(differing)) << BigInt(differing);
  return parseCidrOrAddress(`${formatAddress(family, start)}/${bits - differing}`);
}

function warnWithoutNetwork(
  ctx: PlanContext,
  demand: Demand,
  field: 'ipv4' | 'ipv6',
  family: IpFamily,
  serverAddresses: readonly string[],
  wanted: number,
): void {
  const parsed = liveAddresses(ctx, field);
  const kept = keptAddresses(ctx, demand, field, parsed);
  const live = parsed.filter((a): a is bigint => a !== undefined);
  if (live.length === 0) return;
  // At least the server's default network: a /24 for IPv4, a /120 for IPv6.
  const block = blockHolding(family, live, 8);
  if (!block) return;
  const taken = reservedIn(block, serverAddresses);
  for (const address of kept) if (isHostOf(block, address)) taken.add(address);
  for (const pin of demand.pinned.get(field)!) if (isHostOf(block, pin.address)) taken.add(pin.address);
  const free = blockSize(block) - BigInt(taken.size);
  if (BigInt(wanted) <= free) return;
  ctx.warnings.push({ code: 'network_unchecked', field, wanted, network: block.network, free: String(free) });
}
