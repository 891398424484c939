/** What `netform server` prints: the token list and the server defaults as tables, a copy's counts. */
import type { CopyCounts, TokenSummary } from '../../server/index.js';

/** Columns padded to their widest cell, two spaces apart, no trailing blanks. */
function table(rows: string[][]): string {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
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
  return `copied ${counts.users} users, ${counts.devices} devices, ${counts.rules} rules, ${counts.tokens} tokens, ${counts.settings} settings\n`;
}
