/**
 * The rules of one list that meet an address range, found without reading every rule: the list
 * sorted by start once, with the largest end of each span of that order kept in a tree, so a range
 * visits only the spans that can hold a rule meeting it. The answer is the rules in the list's own
 * order (evaluation order), exactly as filtering the whole list gives it. Pure.
 */
import type { CompiledRule } from './model.js';

export class RuleIndex {
  /** Positions in the list, by start address. */
  private readonly byStart: number[];
  private readonly starts: bigint[];
  /** Complete binary tree over byStart: the largest end below each node (leaves from `leaves`). */
  private readonly maxEnd: bigint[];
  private readonly leaves: number;

  constructor(private readonly rules: readonly CompiledRule[]) {
    this.byStart = rules.map((_, i) => i).sort((x, y) => compare(rules[x]!.start, rules[y]!.start) || x - y);
    this.starts = this.byStart.map((i) => rules[i]!.start);
    let leaves = 1;
    while (leaves < rules.length) leaves *= 2;
    this.leaves = leaves;
    this.maxEnd = new Array<bigint>(2 * leaves).fill(-1n);
    this.byStart.forEach((i, at) => (this.maxEnd[leaves + at] = rules[i]!.end));
    for (let node = leaves - 1; node >= 1; node--)
      this.maxEnd[node] = max(this.maxEnd[2 * node]!, this.maxEnd[2 * node + 1]!);
  }

  /** The rules with start ≤ a1 and end ≥ a0, in the list's order. */
  meeting(a0: bigint, a1: bigint): CompiledRule[] {
    // Rules at byStart positions below `upto` start at or before a1.
    let lo = 0;
    let hi = this.starts.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.starts[mid]! <= a1) lo = mid + 1;
      else hi = mid;
    }
    const upto = lo;
    const found: number[] = [];
    if (upto > 0) this.collect(1, 0, this.leaves, upto, a0, found);
    if (found.length > 1) found.sort((x, y) => x - y);
    return found.map((i) => this.rules[i]!);
  }

  /** Positions below `upto` in the node's span [from, to) whose rule ends at or after a0. */
  private collect(node: number, from: number, to: number, upto: number, a0: bigint, found: number[]): void {
    if (from >= upto || this.maxEnd[node]! < a0) return;
    if (to - from === 1) {
      found.push(this.byStart[from]!);
      return;
    }
    const middle = (from + to) >>> 1;
    this.collect(2 * node, from, middle, upto, a0, found);
    this.collect(2 * node + 1, middle, to, upto, a0, found);
  }
}

function compare(a: bigint, b: bigint): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

const max = (a: bigint, b: bigint): bigint => (a > b ? a : b);
