/**
 * Reading `migrate firezone-1x`'s report.json (version 2) as tests and users do: each user's
 * differences resolved from the `differences` table, each code's sentence from `causes`. And the
 * report written back in version 1's layout (every difference and note in full, with its cause,
 * under each user; indented), whose bytes the fleet digests recorded before version 2 existed: equal
 * bytes show that version 2 lost nothing.
 */
import { jsonDocument } from '../../src/views/escape.js';

export interface ReportEntryV2 {
  code: string;
  family: 4 | 6;
  protocol: string;
  ports?: string;
  addresses: string[];
  addresses_total?: number;
  within?: string;
  except?: { block: string; holes: string[] };
  example: string;
}

interface NoteV2 {
  code: string;
  subject?: string;
  pieces?: number;
}

export interface ReportUserV2 {
  email: string;
  verdict: 'equal' | 'narrower' | 'wider';
  group: string | null;
  lost: number[];
  gained: number[];
  old_clients: number[];
  notes: NoteV2[];
  devices: { name: string; lastHandshake?: string | null; notes: NoteV2[] }[];
}

export interface ReportV2 {
  version: 2;
  causes: Record<string, string>;
  account: NoteV2[];
  differences: ReportEntryV2[];
  users: ReportUserV2[];
  [member: string]: unknown;
}

/** A user of the report with its differences in full (as version 1 listed them, without the cause). */
export interface ResolvedUser extends Omit<ReportUserV2, 'lost' | 'gained' | 'old_clients'> {
  lost: ReportEntryV2[];
  gained: ReportEntryV2[];
  old_clients: ReportEntryV2[];
}

export function parseReport(text: string): ReportV2 {
  const report = JSON.parse(text) as ReportV2;
  if (report.version !== 2) throw new Error(`report.json version ${String(report.version)}, expected 2`);
  return report;
}

/** Every user with its differences looked up (throws on an index the table does not hold). */
export function resolvedUsers(report: ReportV2): ResolvedUser[] {
  const at = (i: number) => {
    const entry = report.differences[i];
    if (entry === undefined) throw new Error(`report.json: difference ${i} is not in the table`);
    return entry;
  };
  return report.users.map((u) => ({
    ...u,
    lost: u.lost.map(at),
    gained: u.gained.map(at),
    old_clients: u.old_clients.map(at),
  }));
}

/** The report in version 1's layout and bytes. */
export function reportV1Text(text: string): string {
  const report = parseReport(text);
  const cause = (code: string) => {
    const sentence = report.causes[code];
    if (sentence === undefined) throw new Error(`report.json: no cause for ${code}`);
    return sentence;
  };
  const withCause = <T extends { code: string }>(x: T) => ({ ...x, cause: cause(x.code) });
  const { causes: _causes, differences: _differences, users: _users, account, version: _version, ...rest } = report;
  return jsonDocument({
    version: 1,
    ...rest,
    account: account.map(withCause),
    users: resolvedUsers(report).map((u) => ({
      ...u,
      lost: u.lost.map(withCause),
      gained: u.gained.map(withCause),
      old_clients: u.old_clients.map(withCause),
      notes: u.notes.map(withCause),
      devices: u.devices.map((d) => ({ ...d, notes: d.notes.map(withCause) })),
    })),
  });
}
