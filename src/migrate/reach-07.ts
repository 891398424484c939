/**
 * A user's reach under 0.7.36 as segments of address space, from netform's own evaluator: the
 * interval partition of src/access/partition.ts over a whole family, every protocol and port.
 * Default accept and the server's own addresses count as reach (that is what 0.7.36 does); the
 * drop rules that decide some of it are returned too (what 1.x expresses by leaving it out). Pure.
 */
import type { IpFamily } from '../model/net.js';
import type { CompiledRules } from '../access/evaluate.js';
import type { CompiledRule } from '../access/model.js';
import { decideRegion, FAMILY_END, MAX_PORT, type DecidedCell } from '../access/partition.js';
import { serverAddressesOf } from '../access/destination.js';
import { NO_ACCESS, normalize, type Access } from './access.js';
import { pushSegment, type Segment } from './evaluate-1x.js';

export interface Reach07 {
  segments: Segment[];
  /** Drop rules that decide some packets of this user (global or own). */
  drops: CompiledRule[];
}

function accepted(cell: DecidedCell): boolean {
  return cell.decider.kind !== 'rule' || cell.decider.rule.rule.action === 'accept';
}

/** The reach of a user whose own rules are `ownKey`'s (null: global rules only) in one family. */
export function reach07(rules: CompiledRules, ownKey: string | null, family: IpFamily): Reach07 {
  const own = ownKey === null ? [] : (rules.byOwner.get(ownKey) ?? []).filter((r) => r.family === family);
  const global = (rules.byOwner.get(null) ?? []).filter((r) => r.family === family);
  const region = { family, a0: 0n, a1: FAMILY_END[family], classes: [0, 1, 2] as (0 | 1 | 2)[], p0: 0, p1: MAX_PORT };
  const cells = decideRegion(own, global, region, serverAddressesOf(rules, family), true);
  const drops = new Set<CompiledRule>();
  // Cells of one address interval are consecutive (decideRegion sweeps addresses in order).
  const byStart = new Map<bigint, { a1: bigint; tcp: [number, number][]; udp: [number, number][]; other: boolean }>();
  const order: bigint[] = [];
  for (const cell of cells) {
    if (cell.decider.kind === 'rule' && cell.decider.rule.rule.action === 'drop') drops.add(cell.decider.rule);
    let slot = byStart.get(cell.a0);
    if (!slot) {
      byStart.set(cell.a0, (slot = { a1: cell.a1, tcp: [], udp: [], other: false }));
      order.push(cell.a0);
    }
    if (!accepted(cell)) continue;
    if (cell.cls === 0) slot.tcp.push([cell.p0, cell.p1]);
    else if (cell.cls === 1) slot.udp.push([cell.p0, cell.p1]);
    else slot.other = true;
  }
  order.sort((x, y) => (x < y ? -1 : x > y ? 1 : 0));
  const segments: Segment[] = [];
  for (const a0 of order) {
    const slot = byStart.get(a0)!;
    const access: Access =
      slot.tcp.length === 0 && slot.udp.length === 0 && !slot.other
        ? NO_ACCESS
        : { tcp: normalize(slot.tcp), udp: normalize(slot.udp), icmp: slot.other, other: slot.other };
    pushSegment(segments, { family, a0, a1: slot.a1, access });
  }
  return { segments, drops: [...drops] };
}
