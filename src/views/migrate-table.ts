/**
 * The differences of a migration, each distinct one once: users of a fleet mostly share theirs
 * (the same global rules, the same unexpressible space), so report.json lists each difference once
 * and each user's as its indices, and report.md groups users and writes each difference's line once.
 */
import type { DiffEntry, Migration } from '../migrate/types.js';

export interface DifferenceTable {
  /** Each distinct difference (by value), in the order users first have it (lost, gained, old clients). */
  entries: DiffEntry[];
  /** Per user (in the migration's order), its differences as indices into `entries`. */
  users: { lost: number[]; gained: number[]; oldClients: number[] }[];
}

const made = new WeakMap<Migration, DifferenceTable>();

/** The table of a migration, made once (report.md and report.json both use it). */
export function differenceTable(migration: Migration): DifferenceTable {
  const known = made.get(migration);
  if (known) return known;
  const entries: DiffEntry[] = [];
  // Most users share the compiler's entry objects; entries equal in value but made apart meet by
  // a short key of their fields, then are compared in full (no text of each entry is written).
  const byObject = new Map<DiffEntry, number>();
  const byKey = new Map<string, number[]>();
  const indexOf = (entry: DiffEntry): number => {
    let index = byObject.get(entry);
    if (index !== undefined) return index;
    const key = shortKey(entry);
    const candidates = byKey.get(key);
    index = candidates?.find((i) => sameEntry(entries[i]!, entry));
    if (index === undefined) {
      index = entries.length;
      entries.push(entry);
      if (candidates) candidates.push(index);
      else byKey.set(key, [index]);
    }
    byObject.set(entry, index);
    return index;
  };
  const users = migration.users.map((u) => ({
    lost: u.lost.map(indexOf),
    gained: u.gained.map(indexOf),
    oldClients: u.oldClients.map(indexOf),
  }));
  const table = { entries, users };
  made.set(migration, table);
  return table;
}

function shortKey(e: DiffEntry): string {
  return `${e.code} ${e.family} ${e.protocol} ${e.ports ?? ''} ${e.example} ${e.addresses.length} ${e.addresses[e.addresses.length - 1] ?? ''} ${e.addresses_total ?? ''}`;
}

/** Equal in value: the same members, each the same, in the same order (as JSON would write them). */
function sameEntry(a: DiffEntry, b: DiffEntry): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}
