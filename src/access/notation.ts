/**
 * The notations of `tests:` and `netform explain`:
 * - from: `*` (each device of every user: users without a device are not sources), `alice@example.com`
 *   (each of her devices; none: no tunnel), `alice@example.com/laptop`, `alice@example.com/*` (her
 *   rules as any device of hers, present or future, would see them: a policy test needs no device),
 *   and every user so (a star, then `/*`);
 * - to: `ADDRESS` or `ADDRESS/PREFIX` (every protocol and port to the address or the block, as
 *   `who-can-reach` reads them), `ADDRESS:PORT/tcp|udp`, `ADDRESS/icmp`, `ADDRESS/other` (one packet
 *   without ports, such as GRE: only portless rules decide it); IPv6 as `[ADDR]:PORT/tcp`, `ADDR/icmp`
 *   or `[ADDR]`.
 */
import { userKey } from '../model/keys.js';
import { cidrRange, parseIpAddress, type IpFamily } from '../model/net.js';
import { DestinationDecider } from './destination.js';
import { evaluateDevice, type CompiledRules, type Decision, type Packet, type Protocol } from './evaluate.js';
import type { AccessDevice, AccessModel, AccessUser } from './model.js';

/**
 * `anyDevice`: the user's rules as any device of theirs would see them (`EMAIL/*`, or a star then `/*` for every user), whether
 * or not they have one; without it each of their devices is evaluated, and a user with none has no
 * tunnel (the same verdict in test, explain, plan and validate).
 */
export type FromSpec =
  | { kind: 'everyone'; anyDevice?: true }
  | { kind: 'user'; user: string; anyDevice?: true }
  | { kind: 'device'; user: string; device: string };

export type Parsed<T> = { ok: true; value: T } | { ok: false; message: string };

const FROM_HELP = 'must be "*", "*/*", a user\'s email, EMAIL/DEVICE_NAME or EMAIL/* (any device of the user)';
const TO_HELP =
  'must be ADDRESS or ADDRESS/PREFIX (every protocol and port), ADDRESS:PORT/tcp, ADDRESS:PORT/udp, ' +
  'ADDRESS/icmp or ADDRESS/other (one packet without ports) (IPv6 as [ADDRESS]:PORT/tcp)';

/**
 * Where a test, `explain` or `who-can-reach` looks: one packet, or every packet (every protocol
 * and port) to an address or a block (`every`: the range a0..a1 of one family).
 */
export type Destination =
  { kind: 'packet'; packet: Packet } | { kind: 'every'; family: IpFamily; a0: bigint; a1: bigint };

export function parseFrom(text: string): Parsed<FromSpec> {
  const s = text.trim();
  if (s === '*') return { ok: true, value: { kind: 'everyone' } };
  if (s === '*/*') return { ok: true, value: { kind: 'everyone', anyDevice: true } };
  const at = s.indexOf('@');
  if (at <= 0) return { ok: false, message: FROM_HELP };
  const slash = s.indexOf('/', at);
  if (slash === -1) return { ok: true, value: { kind: 'user', user: userKey(s) } };
  const device = s.slice(slash + 1).trim();
  if (device === '' || slash === at + 1) return { ok: false, message: FROM_HELP };
  if (device === '*') return { ok: true, value: { kind: 'user', user: userKey(s.slice(0, slash)), anyDevice: true } };
  return { ok: true, value: { kind: 'device', user: userKey(s.slice(0, slash)), device } };
}

/** A `to:` that names one packet (`ADDRESS:PORT/tcp`, `ADDRESS/icmp`, `ADDRESS/other`); an address or a block is refused. */
export function parsePacket(text: string): Parsed<Packet> {
  const to = parseTo(text);
  if (!to.ok) return to;
  if (to.value.kind === 'packet') return { ok: true, value: to.value.packet };
  return { ok: false, message: `${TO_HELP}; "${text.trim()}" is every protocol and port, not one packet` };
}

/** The `to:` notation: one packet, or every protocol and port to an address or a block. */
export function parseTo(text: string): Parsed<Destination> {
  const s = text.trim();
  const block = /^([^/\s[\]]+)\/(\d{1,3})$/.exec(s);
  if (block) {
    const address = parseIpAddress(block[1]);
    if (!address) return { ok: false, message: `${TO_HELP}; "${block[1]}" is not an IP address` };
    const bits = address.family === 4 ? 32 : 128;
    const prefix = Number(block[2]);
    if (prefix > bits)
      return {
        ok: false,
        message: `${TO_HELP}; /${block[2]} is longer than an IPv${address.family} prefix (at most /${bits})`,
      };
    // Host bits are ignored, as a rule's destination ignores them.
    const range = cidrRange(`${address.text}/${prefix}`)!;
    return { ok: true, value: { kind: 'every', family: range.family, a0: range.start, a1: range.end } };
  }
  let address: string;
  let port: string | undefined;
  let protocol: string | undefined;
  const bracketed = /^\[([^\]]+)\](?::(\d{1,5}))?(?:\/([a-z]+))?$/i.exec(s);
  if (bracketed) {
    [, address = '', port, protocol] = bracketed;
  } else {
    const slash = s.lastIndexOf('/');
    const head = slash === -1 ? s : s.slice(0, slash);
    protocol = slash === -1 ? undefined : s.slice(slash + 1);
    const v4Port = /^([\d.]+):(\d{1,5})$/.exec(head);
    if (v4Port) [, address = '', port] = v4Port;
    else address = head;
  }
  const destination = parseIpAddress(address);
  if (!destination) return { ok: false, message: `${TO_HELP}; "${address}" is not an IP address` };
  const proto = protocol?.toLowerCase();
  const packet = (value: Packet): Parsed<Destination> => ({ ok: true, value: { kind: 'packet', packet: value } });
  if (port !== undefined) {
    if (proto !== 'tcp' && proto !== 'udp') return { ok: false, message: `${TO_HELP}; a port needs /tcp or /udp` };
    const n = Number(port);
    if (n < 0 || n > 65535) return { ok: false, message: 'the port must be between 0 and 65535' };
    return packet({ destination, protocol: proto, port: n });
  }
  if (proto === undefined) {
    const { family, value } = destination;
    return { ok: true, value: { kind: 'every', family, a0: value, a1: value } };
  }
  if (proto === 'icmp' || proto === 'other') return packet({ destination, protocol: proto as Protocol });
  if (proto === 'tcp' || proto === 'udp')
    return { ok: false, message: `${TO_HELP}; /${proto} needs a port (ADDRESS:PORT/${proto})` };
  return { ok: false, message: `${TO_HELP}; unknown protocol "${protocol}"` };
}

/** One source's decision: a device, or a user when it has no device to name. */
export interface SourceDecision {
  user: string;
  device?: string;
  decision: Decision;
}

/** The sources `from` names and their decisions. */
export interface SourceDecisions {
  decisions: SourceDecision[];
  /** With `from: "*"`: the users without a device, who are not sources there (a note, never a failure). */
  withoutDevice: string[];
}

/** Why a user without devices gets no packet through: shown as `no tunnel (no device)`. */
export const NO_DEVICE = 'no device';

/** A `from: "*"` whose every user has no device names no source: nothing is tested. */
export const NO_SOURCE = 'no device to test from: write `*/*` to test the policy';

/** Set on the failure of a `from: "*"` that names no source (see NO_SOURCE). */
export interface NoSource {
  ok: false;
  message: string;
  noSource: true;
}

/**
 * Evaluates `to` from every source `from` names: each device of each user (a user without devices
 * has no tunnel), or with `anyDevice` each user once, by their rules, as any device of theirs
 * would see them. `*` names the devices of every user: a user without one is not a source there
 * (listed in `withoutDevice`), and no device at all is a failure (NO_SOURCE). Devices not known to
 * have no address in the family are assumed to have one. An address or a block is every protocol
 * and port to it, decided as `who-can-reach` decides it (destination.ts).
 */
export function evaluateFrom(
  model: AccessModel,
  rules: CompiledRules,
  from: FromSpec,
  to: Destination,
  collect = false,
): Parsed<SourceDecisions> | NoSource {
  const users: AccessUser[] = [];
  if (from.kind === 'everyone') for (const item of model.users.values()) users.push(item);
  else {
    const user = model.users.get(from.user);
    if (!user) return { ok: false, message: `no user ${from.user} is declared` };
    users.push(user);
  }
  const every = to.kind === 'every' ? new DestinationDecider(rules, to) : undefined;
  const packet = to.kind === 'packet' ? to.packet : undefined;
  const decide = (user: AccessUser, device: AccessDevice | undefined): Decision =>
    every ? every.decide(user, device) : evaluateDevice(rules, user, device, packet!, collect);
  const anyDevice = from.kind !== 'device' && from.anyDevice === true;
  const results: SourceDecision[] = [];
  const withoutDevice: string[] = [];
  for (const user of users) {
    if (from.kind === 'device') {
      const device = user.devices.find((d) => d.name === from.device);
      if (!device) return { ok: false, message: `user ${user.email} has no device named ${from.device}` };
      results.push({ user: user.email, device: device.name, decision: decide(user, device) });
    } else if (anyDevice) {
      results.push({ user: user.email, device: '*', decision: decide(user, undefined) });
    } else if (user.devices.length === 0) {
      if (from.kind === 'everyone') withoutDevice.push(user.email);
      else {
        const reason = user.noTunnel ?? NO_DEVICE;
        results.push({ user: user.email, decision: { verdict: 'no tunnel', reason, alsoMatched: [] } });
      }
    } else {
      for (const device of user.devices)
        results.push({ user: user.email, device: device.name, decision: decide(user, device) });
    }
  }
  if (results.length === 0 && from.kind === 'everyone') {
    if (!anyDevice) return { ok: false, message: NO_SOURCE, noSource: true };
    // No user at all: what a user without own rules would get.
    const anyone: AccessUser = { key: '\u0000any', email: '(any user)', devices: [] };
    results.push({ user: anyone.email, decision: decide(anyone, undefined) });
  }
  return { ok: true, value: { decisions: results, withoutDevice } };
}
