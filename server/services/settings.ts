/**
 * Server settings kept in the database: the device defaults of docs/api-v0.md section 5, the tunnel
 * networks, the per-user device limit, and the server's WireGuard key pair (generated on first
 * start). Read on every request that needs them, so `netform server defaults set` on a running
 * server takes effect at once.
 */
import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import {
  CONFIGURATION_BOOLEAN_FIELDS,
  DEFAULTABLE_DEVICE_FIELDS,
  initialConfigurationExtras,
  DEFAULT_MAX_DEVICES_PER_USER,
  MTU_BOUNDS,
  PERSISTENT_KEEPALIVE_BOUNDS,
  allowedIpKey,
  dnsEntryKey,
  formatAddress,
  isHostname,
  parseCidrOrAddress,
  parseEndpoint,
  parseIpAddress,
  type IpFamily,
  type TunnelNetwork,
} from '../../src/model/index.js';
import { createClock, nowTimestamp, timestampAfter } from '../clock.js';
import { generateWireguardKeyPair } from '../crypto.js';
import { AdminError } from '../errors.js';
import type { Store, StoreReader } from '../store/index.js';

export interface ServerDefaults {
  allowed_ips: string[];
  dns: string[];
  endpoint: string;
  mtu: number;
  persistent_keepalive: number;
  ipv4_network: string;
  ipv4_address: string;
  ipv6_network: string;
  ipv6_address: string;
  max_devices_per_user: number;
}

export type DefaultKey = keyof ServerDefaults;

/** The defaults of the device-field table's defaultable fields, then the tunnel networks and the limit. */
export const DEFAULT_KEYS: readonly DefaultKey[] = [
  ...DEFAULTABLE_DEVICE_FIELDS,
  'ipv4_network',
  'ipv4_address',
  'ipv6_network',
  'ipv6_address',
  'max_devices_per_user',
];

/**
 * The keys of `/v0/configuration`'s own fields (its `default_client_*` fields are the device
 * defaults above, under their short names: one store, two ways in), and of its id and timestamps.
 */
export const CONFIGURATION_KEYS = [
  ...CONFIGURATION_BOOLEAN_FIELDS,
  'vpn_session_duration',
  'openid_connect_providers',
  'saml_identity_providers',
  'logo',
] as const;
export const CONFIGURATION_ID = 'configuration_id';
export const CONFIGURATION_INSERTED_AT = 'configuration_inserted_at';
export const CONFIGURATION_UPDATED_AT = 'configuration_updated_at';

const SERVER_PUBLIC_KEY = 'server_public_key';
const SERVER_PRIVATE_KEY = 'server_private_key';

export const WIREGUARD_PORT = 51820;

/** The defaults `/v0/configuration` shows as its `default_client_*` fields. */
const CONFIGURATION_DEFAULT_KEYS: ReadonlySet<string> = new Set([
  'allowed_ips',
  'dns',
  'endpoint',
  'mtu',
  'persistent_keepalive',
]);

let cachedPublicHost: string | undefined;

/** The machine's name for the default endpoint; asked once (readSettings runs on every device request). */
function publicHost(): string {
  if (cachedPublicHost === undefined) {
    const name = hostname();
    cachedPublicHost = isHostname(name) && !/^[\d.]+$/.test(name) ? name : 'localhost';
  }
  return cachedPublicHost;
}

export function initialDefaults(): ServerDefaults {
  return {
    allowed_ips: ['0.0.0.0/0', '::/0'],
    dns: ['1.1.1.1', '1.0.0.1'],
    endpoint: `${publicHost()}:${WIREGUARD_PORT}`,
    mtu: 1280,
    persistent_keepalive: 25,
    ipv4_network: '10.3.2.0/24',
    ipv4_address: '10.3.2.1',
    ipv6_network: 'fd00::3:2:0/120',
    ipv6_address: 'fd00::3:2:1',
    max_devices_per_user: DEFAULT_MAX_DEVICES_PER_USER,
  };
}

export interface ServerSettings {
  defaults: ServerDefaults;
  serverPublicKey: string;
}

export function tunnelNetwork(defaults: ServerDefaults, family: IpFamily): TunnelNetwork {
  return family === 4
    ? { cidr: defaults.ipv4_network, serverAddress: defaults.ipv4_address }
    : { cidr: defaults.ipv6_network, serverAddress: defaults.ipv6_address };
}

/** Writes whatever is missing: defaults of a new database, and the server key pair. */
export async function ensureSettings(store: Store): Promise<void> {
  const current = await store.getSettings();
  const initial = initialDefaults();
  const complete = (settings: Record<string, unknown>) =>
    DEFAULT_KEYS.every((k) => k in settings) &&
    CONFIGURATION_KEYS.every((k) => k in settings) &&
    CONFIGURATION_ID in settings;
  if (complete(current) && SERVER_PUBLIC_KEY in current) return;
  await store.transaction(async (tx) => {
    const settings = await tx.getSettings();
    for (const key of DEFAULT_KEYS) if (!(key in settings)) await tx.setSetting(key, initial[key]);
    const extras = initialConfigurationExtras();
    for (const key of CONFIGURATION_KEYS) if (!(key in settings)) await tx.setSetting(key, extras[key]);
    if (!(CONFIGURATION_ID in settings)) {
      const now = nowTimestamp(createClock());
      await tx.setSetting(CONFIGURATION_ID, randomUUID());
      await tx.setSetting(CONFIGURATION_INSERTED_AT, now);
      await tx.setSetting(CONFIGURATION_UPDATED_AT, now);
    }
    if (!(SERVER_PUBLIC_KEY in settings) || !(SERVER_PRIVATE_KEY in settings)) {
      const pair = generateWireguardKeyPair();
      await tx.setSetting(SERVER_PRIVATE_KEY, pair.privateKey);
      await tx.setSetting(SERVER_PUBLIC_KEY, pair.publicKey);
    }
  });
}

/** Settings made from what a store keeps (frozen, until anything commits: see getSettings), by it. */
const madeSettings = new WeakMap<object, ServerSettings>();

export async function readSettings(store: StoreReader): Promise<ServerSettings> {
  return settingsOf(await store.getSettings());
}

/** The settings of the stored values: made once per kept (frozen) values, and frozen too. */
export function settingsOf(stored: Record<string, unknown>): ServerSettings {
  if (!Object.isFrozen(stored)) return makeSettings(stored);
  let settings = madeSettings.get(stored);
  if (!settings) madeSettings.set(stored, (settings = frozen(makeSettings(stored))));
  return settings;
}

/** Shared between requests, so frozen through and through. */
function frozen<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    for (const inner of Object.values(value)) frozen(inner);
    Object.freeze(value);
  }
  return value;
}

function makeSettings(stored: Record<string, unknown>): ServerSettings {
  const defaults = { ...initialDefaults() } as Record<string, unknown>;
  for (const key of DEFAULT_KEYS) if (key in stored) defaults[key] = stored[key];
  const serverPublicKey = stored[SERVER_PUBLIC_KEY];
  if (typeof serverPublicKey !== 'string') throw new Error('server key pair missing from the database');
  return { defaults: defaults as unknown as ServerDefaults, serverPublicKey };
}

function parseList(text: string): string[] {
  const trimmed = text.trim();
  if (trimmed.startsWith('[')) {
    const parsed: unknown = JSON.parse(trimmed);
    if (!Array.isArray(parsed) || !parsed.every((e) => typeof e === 'string'))
      throw new AdminError('expected a JSON array of strings');
    return parsed.map((e: string) => e.trim());
  }
  return trimmed === '' ? [] : trimmed.split(',').map((e) => e.trim());
}

function parseInteger(key: string, text: string, bounds: { min: number; max: number }): number {
  if (!/^\d+$/.test(text.trim())) throw new AdminError(`${key} must be a whole number`);
  const n = Number(text.trim());
  if (n < bounds.min || n > bounds.max) throw new AdminError(`${key} must be between ${bounds.min} and ${bounds.max}`);
  return n;
}

function checkListEntries(key: string, list: string[], entryKey: (s: string) => string | null): string[] {
  const seen = new Set<string>();
  for (const entry of list) {
    const normal = entryKey(entry);
    if (normal === null) throw new AdminError(`${key}: ${JSON.stringify(entry)} is invalid`);
    if (seen.has(normal)) throw new AdminError(`${key}: ${JSON.stringify(entry)} is listed twice`);
    seen.add(normal);
  }
  return list;
}

function familyOfKey(key: DefaultKey): IpFamily {
  return key.startsWith('ipv4') ? 4 : 6;
}

/**
 * Blocks where no device (nor the server) can hold a tunnel address: a tunnel network must not
 * touch them. A /0, and every block wide enough to reach one of them, is refused with them.
 */
const UNUSABLE_BLOCKS: Record<IpFamily, readonly (readonly [string, string])[]> = {
  4: [
    ['0.0.0.0/8', '"this network"'],
    ['127.0.0.0/8', 'loopback'],
    ['224.0.0.0/4', 'multicast'],
    ['240.0.0.0/4', 'reserved and broadcast'],
  ],
  6: [
    ['::/128', 'the unspecified address'],
    ['::1/128', 'loopback'],
    ['::ffff:0:0/96', 'IPv4-mapped'],
    ['ff00::/8', 'multicast'],
  ],
};

/** Why `block` cannot be a tunnel network, or null. */
function unusableNetwork(family: IpFamily, block: { start: bigint; end: bigint; prefix: number }): string | null {
  if (block.prefix === 0) return `is every IPv${family} address`;
  for (const [text, what] of UNUSABLE_BLOCKS[family]) {
    const reserved = parseCidrOrAddress(text)!;
    if (block.start <= reserved.end && reserved.start <= block.end) return `overlaps ${text} (${what})`;
  }
  return null;
}

function checkServerAddress(family: IpFamily, address: string, network: string): string | null {
  const parsed = parseIpAddress(address);
  const block = parseCidrOrAddress(network);
  if (!parsed || parsed.family !== family || !block) return `is not an IPv${family} address`;
  if (parsed.value < block.start || parsed.value > block.end) return `is not in the CIDR ${block.network}`;
  if (parsed.value === block.start || parsed.value === block.end) return 'is the network or broadcast address';
  return null;
}

/**
 * Changes one server default from its command-line text. Returns notes about related values
 * changed along with it (a new tunnel network moves the server address into it).
 */
export async function setDefault(
  store: Store,
  key: string,
  text: string,
): Promise<{ value: unknown; notes: string[] }> {
  if (!(DEFAULT_KEYS as readonly string[]).includes(key)) {
    throw new AdminError(`unknown setting ${JSON.stringify(key)}; known: ${DEFAULT_KEYS.join(', ')}`);
  }
  const name = key as DefaultKey;
  await ensureSettings(store);
  return store.transaction(async (tx) => {
    const { defaults } = await readSettings(tx);
    const notes: string[] = [];
    let value: unknown;
    switch (name) {
      case 'allowed_ips':
        value = checkListEntries(name, parseList(text), allowedIpKey);
        break;
      case 'dns':
        value = checkListEntries(name, parseList(text), dnsEntryKey);
        break;
      case 'endpoint':
        if (parseEndpoint(text) === null)
          throw new AdminError('endpoint must be host, host:port, IPv4:port, IPv6 or [IPv6]:port');
        value = text.trim();
        break;
      case 'mtu':
        value = parseInteger(name, text, MTU_BOUNDS);
        break;
      case 'persistent_keepalive':
        value = parseInteger(name, text, PERSISTENT_KEEPALIVE_BOUNDS);
        break;
      case 'max_devices_per_user':
        value = parseInteger(name, text, { min: 0, max: 1_000_000 });
        break;
      case 'ipv4_network':
      case 'ipv6_network': {
        const family = familyOfKey(name);
        const block = parseCidrOrAddress(text);
        const bits = family === 4 ? 32 : 128;
        if (!block || block.family !== family || !block.hadPrefix)
          throw new AdminError(`${name} must be an IPv${family} CIDR block`);
        if (block.prefix > bits - 2)
          throw new AdminError(`${name} must leave room for devices (prefix at most /${bits - 2})`);
        const unusable = unusableNetwork(family, block);
        if (unusable !== null)
          throw new AdminError(
            `${name} ${block.network} ${unusable}, where devices cannot have addresses; ` +
              `choose a private block such as ${family === 4 ? '10.8.0.0/16' : 'fd00::/112'}`,
          );
        value = block.network;
        const addressKey = family === 4 ? 'ipv4_address' : 'ipv6_address';
        if (checkServerAddress(family, defaults[addressKey], block.network) !== null) {
          const first = formatAddress(family, block.start + 1n);
          await tx.setSetting(addressKey, first);
          notes.push(`${addressKey} set to ${first}, the first host of the new network`);
        }
        break;
      }
      case 'ipv4_address':
      case 'ipv6_address': {
        const family = familyOfKey(name);
        const networkKey = family === 4 ? 'ipv4_network' : 'ipv6_network';
        const problem = checkServerAddress(family, text, defaults[networkKey]);
        if (problem) throw new AdminError(`${name} ${problem}`);
        value = parseIpAddress(text)!.text;
        break;
      }
    }
    await tx.setSetting(name, value);
    if (CONFIGURATION_DEFAULT_KEYS.has(name)) {
      const previous = (await tx.getSettings())[CONFIGURATION_UPDATED_AT];
      await tx.setSetting(
        CONFIGURATION_UPDATED_AT,
        timestampAfter(createClock(), typeof previous === 'string' ? previous : null),
      );
    }
    if (name.endsWith('_network')) {
      await tx.setAllocationHint(familyOfKey(name), null);
      await tx.clearFreeAddresses(familyOfKey(name));
    }
    return { value, notes };
  });
}
