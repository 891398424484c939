/**
 * Tunnel addresses of devices: checking a requested one, and assigning the lowest free one.
 *
 * Finding the lowest free address must not read every address in use (50,000 devices), so the
 * store keeps a hint per family: every address of the network below `next` is taken. Allocation
 * resumes the search there; freeing an address (device deleted, or moved) lowers the hint to it;
 * changing the network drops it. Searching from the hint walks the used addresses in index
 * order, in batches, until the first gap.
 */
import { Messages, checkTunnelAddress, formatAddress, parseCidrOrAddress, parseIpAddress, type IpFamily, type TunnelNetwork } from '../../src/model/index.js';
import type { DeviceRow, StoreReader, StoreWriter } from '../store/index.js';

const BATCH = 256;

export type Allocation = { ok: true; address: string } | { ok: false; message: string };

export async function allocateAddress(tx: StoreWriter, family: IpFamily, network: TunnelNetwork): Promise<Allocation> {
  const block = parseCidrOrAddress(network.cidr);
  if (!block || block.family !== family) throw new Error(`tunnel network ${network.cidr} is not an IPv${family} block`);
  const server = parseIpAddress(network.serverAddress);
  const first = block.start + 1n;
  const last = block.end - 1n;
  const hint = await tx.getAllocationHint(family);
  let candidate = hint !== null && hint.network === block.network && hint.next > first ? hint.next : first;

  search: while (candidate <= last) {
    const used = await tx.listAddressesInUse(family, candidate, last, BATCH);
    let i = 0;
    for (;;) {
      if (server !== null && server.value === candidate) candidate++;
      if (candidate > last) break search;
      while (i < used.length && used[i]! < candidate) i++;
      if (i < used.length && used[i] === candidate) {
        candidate++;
        continue;
      }
      if (i < used.length || used.length < BATCH) {
        await tx.setAllocationHint(family, { network: block.network, next: candidate + 1n });
        return { ok: true, address: formatAddress(family, candidate) };
      }
      continue search; // this batch is all taken: read the next one from `candidate`
    }
  }
  await tx.setAllocationHint(family, { network: block.network, next: last + 1n });
  return { ok: false, message: Messages.exhausted(block.network) };
}

/** Lowers the hints to addresses that devices no longer hold. */
export async function forgetAddresses(tx: StoreWriter, devices: Pick<DeviceRow, 'ipv4' | 'ipv6'>[]): Promise<void> {
  for (const family of [4, 6] as const) {
    const hint = await tx.getAllocationHint(family);
    if (hint === null) continue;
    const block = parseCidrOrAddress(hint.network);
    let lowest = hint.next;
    for (const device of devices) {
      const address = parseIpAddress(family === 4 ? device.ipv4 : device.ipv6);
      if (address && block && address.value >= block.start && address.value <= block.end && address.value < lowest) lowest = address.value;
    }
    if (lowest < hint.next) await tx.setAllocationHint(family, { network: hint.network, next: lowest });
  }
}

/**
 * Checks an address a client asked for: inside the tunnel network and not reserved (the
 * model's rule), and not held by another device. Returns the message, or null.
 */
export async function checkRequestedAddress(
  store: StoreReader,
  family: IpFamily,
  address: string,
  network: TunnelNetwork,
  deviceId?: string,
): Promise<string | null> {
  const problem = checkTunnelAddress(address, family, network);
  if (problem !== null) return problem;
  const parsed = parseIpAddress(address)!;
  const holder = await store.findDeviceByAddress(family, parsed.value);
  return holder && holder.id !== deviceId ? Messages.taken : null;
}
