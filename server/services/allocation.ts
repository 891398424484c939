/**
 * Tunnel addresses of devices: checking a requested one, and assigning the lowest free one.
 *
 * Finding the lowest free address must not read every address in use (50,000 devices). Per
 * family the store keeps a mark and a list of free addresses, with the invariant: every address
 * of the network below the mark is held by a device or listed as free.
 * - Allocation takes the lowest listed free address; when none is listed, it searches upward
 *   from the mark (skipping addresses clients asked for explicitly) and moves the mark past it.
 * - An address a device gives up (deleted, moved) below the mark is listed as free.
 * - An address a client asks for explicitly is taken off the list.
 * - A new tunnel network drops the mark and the list; the first allocation then searches from
 *   the network's start once (also what happens after rows were imported outside the API).
 */
import {
  Messages,
  checkTunnelAddress,
  formatAddress,
  parseCidrOrAddress,
  parseIpAddress,
  type IpFamily,
  type TunnelNetwork,
} from '../../src/model/index.js';
import type { DeviceRow, StoreReader, StoreWriter } from '../store/index.js';

const BATCH = 256;

export type Allocation = { ok: true; address: string } | { ok: false; message: string };

function networkBlock(network: TunnelNetwork, family: IpFamily) {
  const block = parseCidrOrAddress(network.cidr);
  if (!block || block.family !== family) throw new Error(`tunnel network ${network.cidr} is not an IPv${family} block`);
  return block;
}

export async function allocateAddress(tx: StoreWriter, family: IpFamily, network: TunnelNetwork): Promise<Allocation> {
  const block = networkBlock(network, family);
  const server = parseIpAddress(network.serverAddress)?.value ?? null;
  const first = block.start + 1n;
  const last = block.end - 1n;
  let hint = await tx.getAllocationHint(family);
  if (hint !== null && hint.network !== block.network) {
    await tx.clearFreeAddresses(family);
    hint = null;
  }
  const mark = hint !== null && hint.next > first ? hint.next : first;

  // Listed free addresses are below the mark, so the lowest of them is the lowest free address.
  for (;;) {
    const listed = await tx.lowestFreeAddress(family, first, mark - 1n < last ? mark - 1n : last);
    if (listed === null) break;
    await tx.removeFreeAddress(family, listed);
    // The list is kept exact; a held or reserved address found on it is dropped, never handed out.
    if (listed !== server && (await tx.findDeviceByAddress(family, listed)) === null) {
      return { ok: true, address: formatAddress(family, listed) };
    }
  }

  let candidate = mark;
  search: while (candidate <= last) {
    const used = await tx.listAddressesInUse(family, candidate, last, BATCH);
    let i = 0;
    for (;;) {
      if (candidate === server) candidate++;
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

/** Lists the addresses devices gave up (deleted or moved) as free, where below the mark. */
export async function forgetAddresses(tx: StoreWriter, devices: Pick<DeviceRow, 'ipv4' | 'ipv6'>[]): Promise<void> {
  for (const family of [4, 6] as const) {
    const hint = await tx.getAllocationHint(family);
    if (hint === null) continue;
    const block = parseCidrOrAddress(hint.network);
    if (!block) continue;
    for (const device of devices) {
      const address = parseIpAddress(family === 4 ? device.ipv4 : device.ipv6);
      if (address && address.value > block.start && address.value < block.end && address.value < hint.next) {
        await tx.addFreeAddress(family, address.value);
      }
    }
  }
}

/** Takes an address a client asked for off the free list. */
export async function claimAddress(tx: StoreWriter, family: IpFamily, address: string): Promise<void> {
  const parsed = parseIpAddress(address);
  if (parsed && parsed.family === family) await tx.removeFreeAddress(family, parsed.value);
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
