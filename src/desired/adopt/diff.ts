/**
 * A unified diff of two texts (as `diff -u` and git write one), line by line with three lines of
 * context: the shortest edit script found by Myers' algorithm.
 */

/** One line of the edit script: kept, removed (from `a`) or added (from `b`). */
type Op = { kind: ' ' | '-' | '+'; line: string; a: number; b: number };

function splitLines(text: string): string[] {
  if (text === '') return [];
  const lines = text.split('\n');
  if (lines.at(-1) === '') lines.pop();
  return lines;
}

/**
 * The edit script turning `a` into `b`. The trace keeps, for each number of edits `d`, only the
 * diagonals `-d..d` that step can reach (what the walk back reads), not the whole vector: the
 * memory grows with the square of the number of edits, not with the files' length times it.
 */
function editScript(a: string[], b: string[]): Op[] {
  const n = a.length;
  const m = b.length;
  const max = n + m;
  const offset = max + 1;
  const v = new Int32Array(2 * max + 3);
  /** trace[d][k + d]: v[offset + k] before step d, for k in -d..d. */
  const trace: Int32Array[] = [];
  let found = false;
  for (let d = 0; d <= max && !found; d++) {
    trace.push(v.slice(offset - d, offset + d + 1));
    for (let k = -d; k <= d; k += 2) {
      let x =
        k === -d || (k !== d && v[offset + k - 1]! < v[offset + k + 1]!) ? v[offset + k + 1]! : v[offset + k - 1]! + 1;
      let y = x - k;
      while (x < n && y < m && a[x] === b[y]) {
        x++;
        y++;
      }
      v[offset + k] = x;
      if (x >= n && y >= m) {
        found = true;
        break;
      }
    }
  }
  // Walk back through the trace from the end.
  const ops: Op[] = [];
  let x = n;
  let y = m;
  for (let d = trace.length - 1; d >= 0; d--) {
    const vd = trace[d]!;
    const k = x - y;
    const prevK = k === -d || (k !== d && vd[k - 1 + d]! < vd[k + 1 + d]!) ? k + 1 : k - 1;
    const prevX = d === 0 ? 0 : vd[prevK + d]!;
    const prevY = prevX - prevK;
    while (x > prevX && y > prevY) {
      x--;
      y--;
      ops.push({ kind: ' ', line: a[x]!, a: x, b: y });
    }
    if (d === 0) break;
    if (x === prevX) {
      y--;
      ops.push({ kind: '+', line: b[y]!, a: x, b: y });
    } else {
      x--;
      ops.push({ kind: '-', line: a[x]!, a: x, b: y });
    }
  }
  while (x > 0 && y > 0) {
    x--;
    y--;
    ops.push({ kind: ' ', line: a[x]!, a: x, b: y });
  }
  return ops.reverse();
}

/**
 * The unified diff of `before` and `after` under the names `from` and `to` (`a/team.yaml`,
 * `b/team.yaml`; `/dev/null` for a file that does not exist on one side); empty when they are equal.
 */
export function unifiedDiff(before: string, after: string, from: string, to: string, context = 3): string {
  if (before === after) return '';
  const ops = editScript(splitLines(before), splitLines(after));
  const out = [`--- ${from}`, `+++ ${to}`];
  let i = 0;
  while (i < ops.length) {
    if (ops[i]!.kind === ' ') {
      i++;
      continue;
    }
    // A hunk: from `context` lines before this change to `context` lines after the last change
    // that lies within 2 * context lines of the one before it.
    const start = Math.max(0, i - context);
    let end = i;
    while (end < ops.length) {
      let next = end;
      while (next < ops.length && ops[next]!.kind !== ' ') next++;
      let gap = next;
      while (gap < ops.length && ops[gap]!.kind === ' ') gap++;
      if (gap < ops.length && gap - next <= 2 * context) end = gap;
      else {
        end = Math.min(ops.length, next + context);
        break;
      }
    }
    const hunk = ops.slice(start, end);
    const first = hunk[0]!;
    const aCount = hunk.filter((op) => op.kind !== '+').length;
    const bCount = hunk.filter((op) => op.kind !== '-').length;
    const aStart = aCount === 0 ? first.a : first.a + 1;
    const bStart = bCount === 0 ? first.b : first.b + 1;
    out.push(`@@ -${aStart}${aCount === 1 ? '' : `,${aCount}`} +${bStart}${bCount === 1 ? '' : `,${bCount}`} @@`);
    for (const op of hunk) out.push(`${op.kind}${op.line}`);
    i = end;
  }
  return `${out.join('\n')}\n`;
}
