/**
 * The notations of `tests:` and `netform explain`:
 * - from: `*` (each device of every user), `alice@example.com` (each of her devices; none: no
 *   tunnel), `alice@example.com/laptop`, `alice@example.com/*` (her rules as any device of hers,
 *   present or future, would see them: a policy test needs no device), and every user so (a star, then `/*`);
 * - to: `ADDRESS` (a packet without ports, such as GRE: only portless rules decide it),
 *   `ADDRESS:PORT/tcp|udp`, `ADDRESS/icmp`, `ADDRESS/other`; IPv6 as `[ADDR]:PORT/tcp` or `ADDR/icmp`.
 */
import { userKey } from '../model/keys.js';
import { parseIpAddress } from '../model/net.js';
import { evaluateDevice, type CompiledRules, type Decision, type Packet, type Protocol } from './evaluate.js';
import type { AccessModel, AccessUser } from './model.js';

/**
 * `anyDevice`: the user's rules as any device of theirs would see them (`EMAIL/*`, or a star then `/*` for every user), whether
 * or not they have one; without it each of their devices is evaluated, and a user with none has no
 * tunnel (W3.6: one verdict everywhere).
 */
export type FromSpec =
  | { kind: 'everyone'; anyDevice?: true }
  | { kind: 'user'; user: string; anyDevice?: true }
  | { kind: 'device'; user: string; device: string };

export type Parsed<T> = { ok: true; value: T } | { ok: false; message: string };

const FROM_HELP = 'must be "*", "*/*", a user\'s email, EMAIL/DEVICE_NAME or EMAIL/* (any device of the user)';
const TO_HELP =
  'must be ADDRESS, ADDRESS:PORT/tcp, ADDRESS:PORT/udp, ADDRESS/icmp or ADDRESS/other (IPv6 as [ADDRESS]:PORT/tcp)';

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

export function parseTo(text: string): Parsed<Packet> {
  const s = text.trim();
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
  if (port !== undefined) {
    if (proto !== 'tcp' && proto !== 'udp') return { ok: false, message: `${TO_HELP}; a port needs /tcp or /udp` };
    const n = Number(port);
    if (n < 0 || n > 65535) return { ok: false, message: 'the port must be between 0 and 65535' };
    return { ok: true, value: { destination, protocol: proto, port: n } };
  }
  if (proto === undefined) return { ok: true, value: { destination, protocol: 'other' } };
  if (proto === 'icmp' || proto === 'other') return { ok: true, value: { destination, protocol: proto as Protocol } };
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

/** Why a user without devices gets no packet through (W3.6): shown as `no tunnel (no device)`. */
export const NO_DEVICE = 'no device';

/**
 * Evaluates `to` from every source `from` names: each device of each user (a user without devices
 * has no tunnel: W3.6), or with `anyDevice` each user once, by their rules, as any device of theirs
 * would see them. Devices not known to have no address in the family are assumed to have one.
 */
export function evaluateFrom(
  model: AccessModel,
  rules: CompiledRules,
  from: FromSpec,
  packet: Packet,
  collect = false,
): Parsed<SourceDecision[]> {
  const users: AccessUser[] = [];
  if (from.kind === 'everyone') for (const item of model.users.values()) users.push(item);
  else {
    const user = model.users.get(from.user);
    if (!user) return { ok: false, message: `no user ${from.user} is declared` };
    users.push(user);
  }
  const anyDevice = from.kind !== 'device' && from.anyDevice === true;
  const results: SourceDecision[] = [];
  for (const user of users) {
    if (from.kind === 'device') {
      const device = user.devices.find((d) => d.name === from.device);
      if (!device) return { ok: false, message: `user ${user.email} has no device named ${from.device}` };
      results.push({
        user: user.email,
        device: device.name,
        decision: evaluateDevice(rules, user, device, packet, collect),
      });
    } else if (anyDevice) {
      results.push({
        user: user.email,
        device: '*',
        decision: evaluateDevice(rules, user, undefined, packet, collect),
      });
    } else if (user.devices.length === 0) {
      const reason = user.noTunnel ?? NO_DEVICE;
      results.push({ user: user.email, decision: { verdict: 'no tunnel', reason, alsoMatched: [] } });
    } else {
      for (const device of user.devices)
        results.push({
          user: user.email,
          device: device.name,
          decision: evaluateDevice(rules, user, device, packet, collect),
        });
    }
  }
  if (results.length === 0 && from.kind === 'everyone') {
    if (anyDevice) {
      // No user at all: what a user without own rules would get.
      const anyone: AccessUser = { key: '\u0000any', email: '(any user)', devices: [] };
      results.push({ user: anyone.email, decision: evaluateDevice(rules, anyone, undefined, packet, collect) });
    } else {
      results.push({ user: '(no user)', decision: { verdict: 'no tunnel', reason: NO_DEVICE, alsoMatched: [] } });
    }
  }
  return { ok: true, value: results };
}
