/**
 * Every protocol and port to an address or a block (a bare `ADDRESS` or `ADDRESS/PREFIX` in `to:`),
 * decided for one source by the same interval partition as `reach` and `who-can-reach`
 * (partition.ts): `accept` when every packet is accepted, `drop` when none is, `partial` otherwise,
 * with the parts and what decides each. Pure.
 */
import type { IpFamily } from '../model/net.js';
import type { CompiledRules, Decision } from './evaluate.js';
import type { AccessDevice, AccessUser, CompiledRule } from './model.js';
import { decideRegion, MAX_PORT, piecesOf, type ReachPiece, type Region } from './partition.js';

/** Every packet of one family to the addresses a0..a1. */
export interface EveryPacket {
  family: IpFamily;
  a0: bigint;
  a1: bigint;
}

/** Every protocol class (tcp, udp, other) and every port to a0..a1. */
export function everyPacketRegion(to: EveryPacket): Region {
  return { family: to.family, a0: to.a0, a1: to.a1, classes: [0, 1, 2], p0: 0, p1: MAX_PORT };
}

/** The server's own addresses of a family, from CompiledRules' `family:value` keys. */
export function serverAddressesOf(rules: CompiledRules, family: IpFamily): Set<bigint> {
  const out = new Set<bigint>();
  const prefix = `${family}:`;
  for (const key of rules.serverAddresses) if (key.startsWith(prefix)) out.add(BigInt(key.slice(prefix.length)));
  return out;
}

/** The verdict of a region's parts: accept (all accepted), drop (none), partial. */
export function verdictOfParts(parts: readonly ReachPiece[]): 'accept' | 'drop' | 'partial' {
  const accepted = parts.some((p) => p.verdict === 'accept');
  const dropped = parts.some((p) => p.verdict === 'drop');
  return accepted && dropped ? 'partial' : dropped ? 'drop' : 'accept';
}

const REASON_DEFAULT = 'default (no rule matched: the chain policy is accept)';
const REASON_SERVER = 'server address (traffic to the server itself is never filtered)';

/** A decision made of parts: one deciding rule when a single rule decides every packet. */
export function decisionOfParts(pieces: readonly ReachPiece[]): Decision {
  const parts = [...pieces.filter((p) => p.verdict === 'accept'), ...pieces.filter((p) => p.verdict === 'drop')];
  const verdict = verdictOfParts(parts);
  const decision: Decision = { verdict, reason: 'decided in parts', alsoMatched: [], parts };
  if (parts.length === 1) {
    const [only] = parts as [ReachPiece];
    if (only.by === 'rule') {
      decision.reason = 'rule';
      decision.decidedBy = only.match!;
    } else decision.reason = only.by === 'server' ? REASON_SERVER : REASON_DEFAULT;
  }
  return decision;
}

/**
 * Decides every packet to an address or a block for source after source. A user's devices share
 * one decision (computed once); a user without own rules meeting the destination gets what the
 * global rules decide (computed once), as `who-can-reach` groups them.
 */
export class DestinationDecider {
  readonly #rules: CompiledRules;
  readonly #region: Region;
  readonly #global: CompiledRule[];
  readonly #server: Set<bigint>;
  readonly #byUser = new Map<string, Decision>();
  #baseline: Decision | undefined;

  constructor(rules: CompiledRules, to: EveryPacket) {
    this.#rules = rules;
    this.#region = everyPacketRegion(to);
    this.#global = (rules.byOwner.get(null) ?? []).filter((r) => this.#meets(r));
    this.#server = serverAddressesOf(rules, to.family);
  }

  #meets(rule: CompiledRule): boolean {
    const region = this.#region;
    return rule.family === region.family && rule.end >= region.a0 && rule.start <= region.a1;
  }

  #decideRules(own: readonly CompiledRule[]): Decision {
    return decisionOfParts(piecesOf(decideRegion(own, this.#global, this.#region, this.#server, true)));
  }

  /** `device` undefined: the user's rules as any device of theirs would meet them (an address in both families). */
  decide(user: AccessUser, device: AccessDevice | undefined): Decision {
    if (user.noTunnel) return { verdict: 'no tunnel', reason: user.noTunnel, alsoMatched: [] };
    const family = this.#region.family;
    if (device && (family === 4 ? device.ipv4 : device.ipv6) === null)
      return {
        verdict: 'no tunnel',
        reason: `device ${device.name} has no IPv${family} tunnel address`,
        alsoMatched: [],
      };
    const cached = this.#byUser.get(user.key);
    if (cached) return cached;
    const own = (this.#rules.byOwner.get(user.key) ?? []).filter((r) => this.#meets(r));
    let decision: Decision;
    if (own.length > 0) decision = this.#decideRules(own);
    else decision = this.#baseline ??= this.#decideRules([]);
    this.#byUser.set(user.key, decision);
    return decision;
  }
}
