/**
 * Where each rule of one scope decides: the packets (address blocks × protocols × port ranges)
 * for which a rule is the first match of its scope, exactly, by a sweep over address breakpoints
 * and then over port breakpoints (never by sampling). Pure.
 *
 * The scopes are independent: a user's own rules are all evaluated before the global ones
 * (docs/rule-semantics.md §2.2), so where a user's own rule decides depends on the user's rules alone, and the
 * global rules decide, for that user, every packet none of the user's rules matches.
 */
import { accessBlocksOf, rangeToCidrs, type AccessBlock, type PacketCell } from '../access/changes.js';
import type { CompiledRule } from '../access/model.js';
import type { IpFamily } from '../model/net.js';

const MAX_PORT = 65535;
const TOP: Record<IpFamily, bigint> = { 4: (1n << 32n) - 1n, 6: (1n << 128n) - 1n };
const CLASS_NAMES = ['tcp', 'udp', 'other'] as const;

export interface RuleDecisions {
  rule: CompiledRule;
  /** What the rule decides: where it is the first match of its scope. */
  blocks: AccessBlock[];
}

export interface DecisionMap {
  /** The rules that decide some packet, in evaluation order. */
  deciding: RuleDecisions[];
  /** The rules that decide nothing: every packet they match meets an earlier rule of the scope first. */
  idle: CompiledRule[];
  /** Per family: whether some packet matches no rule of the scope. */
  unmatched: Record<IpFamily, boolean>;
}

/** Rules of one scope in evaluation order: by stage, then as listed (the evaluator's stable sort). */
export function inEvaluationOrder(rules: CompiledRule[]): CompiledRule[] {
  return rules
    .map((rule, i) => ({ rule, i }))
    .sort((a, b) => a.rule.stage - b.rule.stage || a.i - b.i)
    .map((x) => x.rule);
}

function matchesClass(rule: CompiledRule, cls: 0 | 1 | 2): boolean {
  if (rule.portType === null) return true;
  return cls !== 2 && rule.portType === CLASS_NAMES[cls];
}

interface Item {
  rule: CompiledRule;
  priority: number;
}

/** The decision map of one scope's rules (compiled, in any order: they are put in evaluation order). */
export function decisionMap(scopeRules: CompiledRule[]): DecisionMap {
  const ordered = inEvaluationOrder(scopeRules);
  const disjoint = disjointMap(ordered);
  if (disjoint) return disjoint;
  const cellsOf = new Map<CompiledRule, PacketCell[]>();
  const unmatched: Record<IpFamily, boolean> = { 4: false, 6: false };
  const push = (item: Item, cell: PacketCell) => {
    let list = cellsOf.get(item.rule);
    if (!list) cellsOf.set(item.rule, (list = []));
    const last = list.at(-1);
    // The same ports over the next address range: one cell.
    if (
      last &&
      last.family === cell.family &&
      last.cls === cell.cls &&
      last.p0 === cell.p0 &&
      last.p1 === cell.p1 &&
      last.a1 + 1n === cell.a0
    )
      last.a1 = cell.a1;
    else list.push(cell);
  };
  for (const family of [4, 6] as IpFamily[]) {
    for (const cls of [0, 1, 2] as const) {
      const items: Item[] = [];
      ordered.forEach((rule, priority) => {
        if (rule.family === family && matchesClass(rule, cls)) items.push({ rule, priority });
      });
      if (items.length === 0) {
        unmatched[family] = true;
        continue;
      }
      const points = new Set<bigint>([0n]);
      for (const { rule } of items) {
        points.add(rule.start);
        if (rule.end < TOP[family]) points.add(rule.end + 1n);
      }
      const breaks = [...points].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
      const byStart = [...items].sort((a, b) =>
        a.rule.start < b.rule.start ? -1 : a.rule.start > b.rule.start ? 1 : 0,
      );
      let next = 0;
      let active: Item[] = [];
      for (let i = 0; i < breaks.length; i++) {
        const x = breaks[i]!;
        const end = i + 1 < breaks.length ? breaks[i + 1]! - 1n : TOP[family];
        while (next < byStart.length && byStart[next]!.rule.start <= x) active.push(byStart[next++]!);
        active = active.filter((item) => item.rule.end >= x);
        if (active.length === 0) {
          unmatched[family] = true;
          continue;
        }
        if (cls === 2) {
          const first = active.reduce((a, b) => (b.priority < a.priority ? b : a));
          push(first, { family, cls, a0: x, a1: end, p0: 0, p1: 0 });
          continue;
        }
        const portPoints = new Set<number>([0, MAX_PORT + 1]);
        for (const { rule } of active) {
          if (rule.portType === null) continue;
          portPoints.add(rule.low);
          portPoints.add(rule.high + 1);
        }
        const ports = [...portPoints].sort((a, b) => a - b);
        let run: { item: Item; p0: number; p1: number } | null = null;
        const flush = () => {
          if (run) push(run.item, { family, cls, a0: x, a1: end, p0: run.p0, p1: run.p1 });
          run = null;
        };
        for (let j = 0; j + 1 < ports.length; j++) {
          const p = ports[j]!;
          const q = ports[j + 1]! - 1;
          let first: Item | null = null;
          for (const item of active) {
            const { rule } = item;
            if (rule.portType !== null && (p < rule.low || p > rule.high)) continue;
            if (!first || item.priority < first.priority) first = item;
          }
          if (!first) {
            unmatched[family] = true;
            flush();
            continue;
          }
          const current = run as { item: Item; p0: number; p1: number } | null;
          if (current && current.item === first && current.p1 + 1 === p) current.p1 = q;
          else {
            flush();
            run = { item: first, p0: p, p1: q };
          }
        }
        flush();
      }
    }
  }
  const deciding: RuleDecisions[] = [];
  const idle: CompiledRule[] = [];
  for (const rule of ordered) {
    const cells = cellsOf.get(rule);
    if (cells) deciding.push({ rule, blocks: accessBlocksOf(cells) });
    else idle.push(rule);
  }
  return { deciding, idle, unmatched };
}

/**
 * The common case, quickly: when no two rules of the scope share an address, each decides all it
 * matches (its whole block × its protocol and ports), and only a portless rule of a whole family
 * leaves nothing of that family to the default. Null when some rules share an address.
 */
function disjointMap(ordered: CompiledRule[]): DecisionMap | null {
  const byStart = [...ordered].sort((a, b) =>
    a.family !== b.family ? a.family - b.family : a.start < b.start ? -1 : a.start > b.start ? 1 : 0,
  );
  for (let i = 1; i < byStart.length; i++) {
    const prev = byStart[i - 1]!;
    const cur = byStart[i]!;
    if (prev.family === cur.family && cur.start <= prev.end) return null;
  }
  const unmatched: Record<IpFamily, boolean> = { 4: true, 6: true };
  const deciding = ordered.map((rule) => {
    if (rule.portType === null && rule.start === 0n && rule.end === TOP[rule.family]) unmatched[rule.family] = false;
    const addresses = rangeToCidrs(rule.family, rule.start, rule.end);
    const block: AccessBlock =
      rule.portType === null
        ? { family: rule.family, addresses, protocol: 'all' }
        : {
            family: rule.family,
            addresses,
            protocol: rule.portType,
            ports: rule.low === rule.high ? `${rule.low}` : `${rule.low}-${rule.high}`,
          };
    return { rule, blocks: [block] };
  });
  return { deciding, idle: [], unmatched };
}
