/**
 * `netform server copy`: moves a server's data (users, devices, rules, API tokens, settings with
 * the defaults and the server key pair, the seals of the saved plans applied through it) from one store to another, typically a SQLite file to a
 * new PostgreSQL database, in one transaction on the target: all of it lands, or nothing.
 *
 * The target must be empty. Rows it could not hold are left out and named (see screen). The allocator's mark and free list are not copied: the first device
 * created on the target searches its tunnel network once from the start (allocation.ts), which
 * finds exactly the addresses the copied devices leave free.
 */
import { existsSync } from 'node:fs';
import { isText } from '../src/model/index.js';
import { AdminError } from './errors.js';
import { isPostgresLocation, redactLocation } from './store/errors.js';
import { openStore } from './store/open.js';
import type { DeviceRow, RuleRow, Store, TokenListing, UserRow } from './store/types.js';
import { emailKey } from './store/rows.js';

export interface CopyCounts {
  users: number;
  devices: number;
  rules: number;
  tokens: number;
  settings: number;
  /** Saved plans recorded as applied (refused again on the target as on the source). */
  appliedPlans: number;
  /**
   * Rows the copy left out, one line each naming them by id and saying why (never the value):
   * what no store can hold (a NUL in a text column) or keep apart (two users whose emails read
   * back as one key, two devices of a user with one name), with what belongs to them.
   */
  leftOut: string[];
}

/** The first text column of a row that holds a NUL or a lone surrogate, if any. */
function malformedColumn(row: object): string | undefined {
  for (const [column, value] of Object.entries(row)) if (typeof value === 'string' && !isText(value)) return column;
  return undefined;
}

/** Groups values by a key; the groups of more than one are the clashes. */
function groupBy<T>(items: T[], keyOf: (item: T) => string): Map<string, T[]> {
  const groups = new Map<string, T[]>();
  for (const item of items) {
    const key = keyOf(item);
    const group = groups.get(key);
    if (group) group.push(item);
    else groups.set(key, [item]);
  }
  return groups;
}

interface Screened {
  users: UserRow[];
  devices: DeviceRow[];
  rules: RuleRow[];
  tokens: TokenListing[];
  leftOut: string[];
}

/**
 * What of the source the target can hold. Rows stored before today's string rules may hold a
 * NUL (PostgreSQL text cannot) or, on SQLite, lone surrogates stored as invalid UTF-8 that read
 * back as U+FFFD, so that two users read back with one email and two devices with one name
 * (a unique key of the target). Those are left out with their devices, rules and tokens, and
 * named, instead of failing the whole copy. Everything else is copied as it is, rows that break
 * today's email rules (the Kelvin sign) included: the server keeps them readable.
 */
function screen(users: UserRow[], devices: DeviceRow[], rules: RuleRow[], tokens: TokenListing[]): Screened {
  const leftOut: string[] = [];
  const leftOutUsers = new Map<string, { reason: string; devices: string[]; rules: string[]; tokens: string[] }>();
  for (const same of groupBy(users, (u) => emailKey(u.email)).values()) {
    for (const user of same) {
      const column = malformedColumn(user);
      if (column !== undefined)
        leftOutUsers.set(user.id, {
          reason: `its ${column} holds a NUL or a lone UTF-16 surrogate`,
          devices: [],
          rules: [],
          tokens: [],
        });
      else if (same.length > 1) {
        const others = same.filter((u) => u !== user).map((u) => u.id);
        leftOutUsers.set(user.id, {
          reason: `its email reads back the same as that of user ${others.join(', ')}`,
          devices: [],
          rules: [],
          tokens: [],
        });
      }
    }
  }
  const ownedBy = <T extends { id: string; user_id: string | null }>(
    rows: T[],
    list: 'devices' | 'rules' | 'tokens',
  ): T[] =>
    rows.filter((row) => {
      const owner = row.user_id === null ? undefined : leftOutUsers.get(row.user_id);
      if (owner) owner[list].push(row.id);
      return !owner;
    });
  const keptDevices: DeviceRow[] = [];
  for (const same of groupBy(ownedBy(devices, 'devices'), (d) => `${d.user_id}/${d.name}`).values()) {
    for (const device of same) {
      const column = malformedColumn(device);
      if (column !== undefined)
        leftOut.push(
          `device ${device.id} of user ${device.user_id}: its ${column} holds a NUL or a lone UTF-16 surrogate`,
        );
      else if (same.length > 1)
        leftOut.push(
          `device ${device.id} of user ${device.user_id}: its name reads back the same as that of device ${same
            .filter((d) => d !== device)
            .map((d) => d.id)
            .join(', ')}`,
        );
      else keptDevices.push(device);
    }
  }
  const keptRules: RuleRow[] = [];
  for (const rule of ownedBy(rules, 'rules')) {
    const column = malformedColumn(rule);
    if (column !== undefined) leftOut.push(`rule ${rule.id}: its ${column} holds a NUL or a lone UTF-16 surrogate`);
    else keptRules.push(rule);
  }
  const keptTokens = ownedBy(tokens, 'tokens');
  const userLines: string[] = [];
  for (const [id, owner] of leftOutUsers) {
    const parts = (['devices', 'rules', 'tokens'] as const)
      .filter((list) => owner[list].length > 0)
      .map((list) => `${owner[list].length === 1 ? list.slice(0, -1) : list} ${owner[list].join(', ')}`);
    userLines.push(`user ${id}: ${owner.reason}${parts.length > 0 ? `; with its ${parts.join(' and ')}` : ''}`);
  }
  return {
    users: users.filter((u) => !leftOutUsers.has(u.id)),
    devices: keptDevices,
    rules: keptRules,
    tokens: keptTokens,
    leftOut: [...userLines, ...leftOut],
  };
}

export async function copyServerData(options: { from: string; to: string }): Promise<CopyCounts> {
  if (!isPostgresLocation(options.from) && !existsSync(options.from)) {
    throw new AdminError(`no database file at ${options.from} (--from names the server's existing database)`);
  }
  const source = await openStore(options.from);
  let target: Store | undefined;
  try {
    target = await openStore(options.to);
    const [listedUsers, listedDevices, listedRules, listedTokens, settings, appliedPlans] = await Promise.all([
      source.listUsers(),
      source.listDevices(),
      source.listRules(),
      source.listTokens(),
      source.getSettings(),
      source.listAppliedPlans(),
    ]);
    const { users, devices, rules, tokens, leftOut } = screen(listedUsers, listedDevices, listedRules, listedTokens);
    await target.transaction(async (tx) => {
      // Checked under the target's write lock, so nothing can slip in between check and copy.
      const present =
        (await tx.listUsers()).length + (await tx.listRules()).length + Object.keys(await tx.getSettings()).length;
      if (present > 0)
        throw new AdminError(`${redactLocation(options.to)} is not empty: copy only into a new database`);
      for (const user of users) await tx.insertUser(user);
      for (const device of devices) await tx.insertDevice(device);
      for (const rule of rules) await tx.insertRule(rule);
      for (const { email: _email, ...token } of tokens) await tx.insertToken(token);
      for (const [key, value] of Object.entries(settings)) await tx.setSetting(key, value);
      for (const applied of appliedPlans) await tx.insertAppliedPlan(applied);
    });
    return {
      users: users.length,
      devices: devices.length,
      rules: rules.length,
      tokens: tokens.length,
      settings: Object.keys(settings).length,
      appliedPlans: appliedPlans.length,
      leftOut,
    };
  } finally {
    await target?.close();
    await source.close();
  }
}
