/** What `netform server` prints: the token list and the server defaults as tables, a copy's counts. */
import type { CopyCounts, TokenSummary } from '../../server/index.js';

/** Columns padded to their widest cell, two spaces apart, no trailing blanks. */
function table(rows: string[][]): string {
  const widths = rows[0]!.map((_, i) => rows.reduce((widest, r) => Math.max(widest, r[i]!.length), 0));
  return (
    rows
      .map((r) =>
        r
          .map((cell, i) => cell.padEnd(widths[i]!))
          .join('  ')
          .trimEnd(),
      )
      .join('\n') + '\n'
  );
}

/** A setting's value: lists comma-separated. */
export function formatSettingValue(value: unknown): string {
  return Array.isArray(value) ? value.join(', ') : String(value);
}

export function tokenTable(tokens: readonly TokenSummary[]): string {
  return table([
    ['ID', 'EMAIL', 'CREATED', 'EXPIRES', 'STATUS'],
    ...tokens.map((t) => [t.id, t.email, t.created, t.expires, t.status]),
  ]);
}

export function defaultsTable(values: object): string {
  return table(Object.entries(values).map(([k, v]) => [k, formatSettingValue(v)]));
}

export function copiedLine(counts: CopyCounts): string {
  const applied = counts.appliedPlans > 0 ? `, ${counts.appliedPlans} applied saved plans` : '';
  return `copied ${counts.users} users, ${counts.devices} devices, ${counts.rules} rules, ${counts.tokens} tokens, ${counts.settings} settings${applied}\n`;
}

/** `server copy`: one warning per row left out (by id, with why), then what to do about them. */
export function leftOutWarnings(leftOut: readonly string[]): string {
  if (leftOut.length === 0) return '';
  return (
    leftOut.map((line) => `warning: left out ${line}\n`).join('') +
    'warning: the source holds what no store can hold or keep apart (stored before netform refused such text); the rest is copied. Fix or delete those rows on the source server by id, or recreate them on the new one\n'
  );
}
