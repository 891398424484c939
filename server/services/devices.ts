/**
 * Devices (docs/api-v0.md section 5): field rules from the model, then what needs the database: the
 * owner, unique names per user, unique public keys, tunnel addresses, the device limit. Updates
 * check the merged stored-and-patched device.
 */
import { randomUUID } from 'node:crypto';
import {
  LEGACY_UPDATABLE_DEVICE_FIELDS,
  Messages,
  addError,
  checkDeviceInput,
  checkMergedDevice,
  flagsOnCreate,
  settleNewDevice,
  hasErrors,
  isUuid,
  parseIpAddress,
  type ApiDevice,
  type DeviceInput,
  type FieldErrors,
  type RawInput,
} from '../../src/model/index.js';
import { nowTimestamp, timestampAfter } from '../clock.js';
import { generatePresharedKey } from '../crypto.js';
import { NotFoundError, ValidationError } from '../errors.js';
import type { DevicePatch, DeviceRow, StoreWriter } from '../store/index.js';
import { allocateAddress, checkRequestedAddress, claimAddress, forgetAddresses } from './allocation.js';
import { writeTransaction, type ServiceContext } from './context.js';
import { generateDeviceName } from './names.js';
import { readSettings, tunnelNetwork, type ServerSettings } from './settings.js';
import { deviceView, shownDevice } from './views.js';

function checkedInput(body: RawInput, mode: 'create' | 'update'): { input: DeviceInput; errors: FieldErrors } {
  const checked = checkDeviceInput(body, mode);
  return checked.ok
    ? { input: checked.value, errors: {} }
    : { input: checked.partial ?? {}, errors: { ...checked.errors } };
}

export async function listDevices(ctx: ServiceContext): Promise<ApiDevice[]> {
  const settings = await readSettings(ctx.store);
  return (await ctx.store.listDevices()).map((d) => deviceView(d, settings));
}

export async function showDevice(ctx: ServiceContext, id: string): Promise<ApiDevice> {
  const device = isUuid(id) ? await ctx.store.getDevice(id.toLowerCase()) : null;
  if (!device) throw new NotFoundError();
  return shownDevice(device, await readSettings(ctx.store));
}

/**
 * Whether two address texts name the same address. Addresses are stored as the client wrote
 * them, so `FD00::3:2:AB` and `fd00::3:2:ab` are one address held once.
 */
function sameAddress(a: string | null | undefined, b: string | null | undefined): boolean {
  if (a === b) return true;
  const x = parseIpAddress(a);
  const y = parseIpAddress(b);
  return x !== null && y !== null && x.family === y.family && x.value === y.value;
}

async function checkAddresses(
  tx: StoreWriter,
  settings: ServerSettings,
  input: Pick<DeviceInput, 'ipv4' | 'ipv6'>,
  errors: FieldErrors,
  existing?: DeviceRow,
): Promise<void> {
  for (const family of [4, 6] as const) {
    const field = family === 4 ? 'ipv4' : 'ipv6';
    const address = input[field];
    // The device's own address in another spelling is not a move: nothing to check again.
    if (address === undefined || address === null || (existing && sameAddress(address, existing[field]))) continue;
    const problem = await checkRequestedAddress(
      tx,
      family,
      address,
      tunnelNetwork(settings.defaults, family),
      existing?.id,
    );
    if (problem !== null) addError(errors, field, problem);
  }
}

export async function createDevice(ctx: ServiceContext, body: RawInput): Promise<ApiDevice> {
  const { input, errors } = checkedInput(body, 'create');
  return writeTransaction(ctx, async (tx) => {
    const settings = await readSettings(tx);
    const owner =
      input.user_id !== undefined && isUuid(input.user_id) ? await tx.getUser(input.user_id.toLowerCase()) : null;
    if (input.user_id !== undefined && !owner) addError(errors, 'user_id', Messages.doesNotExist);

    if (owner && input.name !== undefined && (await tx.findDeviceByName(owner.id, input.name)))
      addError(errors, 'name', Messages.taken);
    if (input.public_key !== undefined && (await tx.findDeviceByPublicKey(input.public_key)))
      addError(errors, 'public_key', Messages.taken);
    await checkAddresses(tx, settings, input, errors);
    if (owner && (await tx.countDevicesOfUser(owner.id)) >= settings.defaults.max_devices_per_user) {
      addError(errors, 'base', Messages.deviceLimit);
    }

    const addresses: { ipv4: string | null; ipv6: string | null } = {
      ipv4: input.ipv4 ?? null,
      ipv6: input.ipv6 ?? null,
    };
    for (const family of [4, 6] as const) {
      const field = family === 4 ? 'ipv4' : 'ipv6';
      if (errors[field]) continue;
      if (addresses[field] !== null) {
        await claimAddress(tx, family, addresses[field]);
        continue;
      }
      const allocation = await allocateAddress(tx, family, tunnelNetwork(settings.defaults, family));
      if (allocation.ok) addresses[field] = allocation.address;
      else addError(errors, 'base', allocation.message);
    }
    if (hasErrors(errors) || !owner) throw new ValidationError(errors);

    const name =
      input.name ?? (await generateDeviceName(async (n) => (await tx.findDeviceByName(owner.id, n)) !== null));
    const now = nowTimestamp(ctx.clock);
    const row: DeviceRow = {
      id: randomUUID(),
      user_id: owner.id,
      name,
      description: input.description ?? null,
      public_key: input.public_key!,
      preshared_key: input.preshared_key ?? generatePresharedKey(),
      ipv4: addresses.ipv4,
      ipv6: addresses.ipv6,
      allowed_ips: input.allowed_ips ?? null,
      dns: input.dns ?? null,
      endpoint: input.endpoint ?? null,
      mtu: input.mtu ?? null,
      persistent_keepalive: input.persistent_keepalive ?? null,
      ...flagsOnCreate(input),
      remote_ip: null,
      latest_handshake: null,
      rx_bytes: null,
      tx_bytes: null,
      inserted_at: now,
      updated_at: now,
    };
    // A field governed by its default keeps no value of its own; a list off its default holds `[]`.
    Object.assign(row, settleNewDevice(row));
    await tx.insertDevice(row);
    return deviceView(row, settings);
  });
}

function sameValue(a: unknown, b: unknown): boolean {
  return JSON.stringify(a ?? null) === JSON.stringify(b ?? null);
}

export async function updateDevice(ctx: ServiceContext, id: string, body: RawInput): Promise<ApiDevice> {
  const source: RawInput = ctx.legacyDeviceUpdates
    ? Object.fromEntries(LEGACY_UPDATABLE_DEVICE_FIELDS.filter((k) => k in body).map((k) => [k, body[k]]))
    : body;
  const { input, errors } = checkedInput(source, 'update');
  return writeTransaction(ctx, async (tx) => {
    const device = isUuid(id) ? await tx.getDevice(id.toLowerCase()) : null;
    if (!device) throw new NotFoundError();
    const settings = await readSettings(tx);

    const patch: DevicePatch = {};
    for (const [key, value] of Object.entries(input)) {
      if (key === 'user_id' || value === undefined) continue;
      if (!sameValue(value, device[key as keyof DeviceRow])) (patch as Record<string, unknown>)[key] = value;
    }
    if (patch.name !== undefined && (await tx.findDeviceByName(device.user_id, patch.name)))
      addError(errors, 'name', Messages.taken);
    if (patch.public_key !== undefined && (await tx.findDeviceByPublicKey(patch.public_key)))
      addError(errors, 'public_key', Messages.taken);
    await checkAddresses(tx, settings, patch, errors, device);

    // Whole-device rules, on the stored device with the patch applied.
    Object.assign(patch, checkMergedDevice({ ...device, ...patch }, source, errors));
    if (hasErrors(errors)) throw new ValidationError(errors);

    if (Object.keys(patch).length === 0) return deviceView(device, settings);
    patch.updated_at = timestampAfter(ctx.clock, device.updated_at);
    await tx.updateDevice(device.id, patch);
    // Only a different address moves the device; a new spelling of its own address is kept (and
    // echoed) but frees nothing.
    const givenUp = { ipv4: null as string | null, ipv6: null as string | null };
    for (const family of [4, 6] as const) {
      const field = family === 4 ? 'ipv4' : 'ipv6';
      const address = patch[field];
      if (!address || sameAddress(address, device[field])) continue;
      await claimAddress(tx, family, address);
      givenUp[field] = device[field];
    }
    if (givenUp.ipv4 !== null || givenUp.ipv6 !== null) await forgetAddresses(tx, [givenUp]);
    return deviceView({ ...device, ...patch }, settings);
  });
}

export async function deleteDevice(ctx: ServiceContext, id: string): Promise<void> {
  await writeTransaction(ctx, async (tx) => {
    const device = isUuid(id) ? await tx.getDevice(id.toLowerCase()) : null;
    if (!device) throw new NotFoundError();
    await tx.deleteDevice(device.id);
    await forgetAddresses(tx, [device]);
  });
}
