/**
 * The evaluator: what a 0.7.36 server's nftables ruleset decides for one packet from one device
 * (docs/rule-semantics.md §6). Pure: no I/O, no clock.
 *
 * Order: the owner's rules, then the global rules; within each scope port-accept, port-drop,
 * portless-accept, portless-drop; first match wins; no match is accept (the chain policy).
 */
import { parseIpAddress, type IpFamily, type ParsedAddress } from '../model/net.js';
import {
  compileRule,
  serverAddressSet,
  STAGES,
  type AccessDevice,
  type AccessModel,
  type AccessRule,
  type AccessUser,
  type CompiledRule,
  type StageName,
} from './model.js';
import type { ReachPiece } from './partition.js';

export type Protocol = 'tcp' | 'udp' | 'icmp' | 'other';

export interface Packet {
  destination: ParsedAddress;
  protocol: Protocol;
  /** Destination port, for tcp and udp. */
  port?: number;
}

/** The verdict for one packet. */
export type Verdict = 'accept' | 'drop' | 'no tunnel';

export interface Match {
  rule: AccessRule;
  scope: 'user' | 'global';
  stage: StageName;
}

export interface Decision {
  /** `partial`: for every protocol and port to an address or a block, some packets accepted and some dropped. */
  verdict: Verdict | 'partial';
  /** Why, in words: `rule`, `default (no rule matched)`, `server address (never filtered)`, or why there is no tunnel. */
  reason: string;
  /** The deciding rule, when a rule decided. */
  decidedBy?: Match;
  /** Rules that also match the packet but come later in the order (they decide nothing for it). */
  alsoMatched: Match[];
  /**
   * For every protocol and port to an address or a block: its parts and what decides each (the
   * accepted ones first), as `reach` lists them. `decidedBy` is set when one rule decides them all.
   */
  parts?: ReachPiece[];
}

/** The decision for one packet: never partial. */
export interface PacketDecision extends Decision {
  verdict: Verdict;
}

/** The rules of a model compiled once, grouped by owner, for many evaluations. */
export class CompiledRules {
  readonly byOwner = new Map<string | null, CompiledRule[]>();
  readonly serverAddresses: Set<string>;
  readonly portRules: boolean;

  constructor(readonly model: AccessModel) {
    this.portRules = model.settings.portRules;
    this.serverAddresses = serverAddressSet(model.settings);
    for (const rule of model.rules) {
      const compiled = compileRule(rule);
      if (!compiled) continue;
      if (compiled.portType !== null && !this.portRules) continue;
      let list = this.byOwner.get(rule.owner);
      if (!list) this.byOwner.set(rule.owner, (list = []));
      list.push(compiled);
    }
    for (const list of this.byOwner.values()) list.sort((a, b) => a.stage - b.stage);
  }
}

export function ruleMatches(
  rule: CompiledRule,
  family: IpFamily,
  address: bigint,
  protocol: Protocol,
  port: number | undefined,
): boolean {
  if (rule.family !== family || address < rule.start || address > rule.end) return false;
  if (rule.portType === null) return true;
  return protocol === rule.portType && port !== undefined && rule.low <= port && port <= rule.high;
}

/** The rule-only part of §6 (steps 4 to 6) for the rules of one owner: no tunnel or server checks. */
export function decideByRules(
  rules: CompiledRules,
  owner: string | null,
  packet: Packet,
  collect = false,
): PacketDecision {
  const { family, value } = packet.destination;
  const matches: Match[] = [];
  const scopes: [string | null, 'user' | 'global'][] =
    owner === null
      ? [[null, 'global']]
      : [
          [owner, 'user'],
          [null, 'global'],
        ];
  for (const [key, scope] of scopes) {
    for (const rule of rules.byOwner.get(key) ?? []) {
      if (!ruleMatches(rule, family, value, packet.protocol, packet.port)) continue;
      matches.push({ rule: rule.rule, scope, stage: STAGES[rule.stage]! });
      if (!collect) break;
    }
    if (matches.length > 0 && !collect) break;
  }
  const [first, ...rest] = matches;
  if (!first)
    return { verdict: 'accept', reason: 'default (no rule matched: the chain policy is accept)', alsoMatched: [] };
  return { verdict: first.rule.action, reason: 'rule', decidedBy: first, alsoMatched: rest };
}

/** §6 in full for one device of one user. `collect` also lists the later matches (for explain). */
export function evaluateDevice(
  rules: CompiledRules,
  user: AccessUser,
  device: AccessDevice | undefined,
  packet: Packet,
  collect = false,
): PacketDecision {
  if (user.noTunnel) return { verdict: 'no tunnel', reason: user.noTunnel, alsoMatched: [] };
  const family = packet.destination.family;
  if (device) {
    const source = family === 4 ? device.ipv4 : device.ipv6;
    if (source === null) {
      return {
        verdict: 'no tunnel',
        reason: `device ${device.name} has no IPv${family} tunnel address`,
        alsoMatched: [],
      };
    }
  }
  if (rules.serverAddresses.has(`${family}:${packet.destination.value}`)) {
    return {
      verdict: 'accept',
      reason: 'server address (traffic to the server itself is never filtered)',
      alsoMatched: [],
    };
  }
  return decideByRules(rules, user.key, packet, collect);
}

/** A packet from `to` notation parts; null when the address does not parse. */
export function packetOf(address: string, protocol: Protocol, port?: number): Packet | null {
  const destination = parseIpAddress(address);
  if (!destination) return null;
  return port === undefined ? { destination, protocol } : { destination, protocol, port };
}
