/**
 * `netform server copy`: moves a server's data (users, devices, rules, API tokens, settings with
 * the defaults and the server key pair) from one store to another, typically a SQLite file to a
 * new PostgreSQL database, in one transaction on the target: all of it lands, or nothing.
 *
 * The target must be empty. The allocator's mark and free list are not copied: the first device
 * created on the target searches its tunnel network once from the start (allocation.ts), which
 * finds exactly the addresses the copied devices leave free.
 */
import { existsSync } from 'node:fs';
import { AdminError } from './errors.js';
import { isPostgresLocation, openStore, redactLocation, type Store } from './store/index.js';

export interface CopyCounts {
  users: number;
  devices: number;
  rules: number;
  tokens: number;
  settings: number;
}

export async function copyServerData(options: { from: string; to: string }): Promise<CopyCounts> {
  if (!isPostgresLocation(options.from) && !existsSync(options.from)) {
    throw new AdminError(`no database file at ${options.from} (--from names the server's existing database)`);
  }
  const source = await openStore(options.from);
  let target: Store | undefined;
  try {
    target = await openStore(options.to);
    const [users, devices, rules, tokens, settings] = await Promise.all([
      source.listUsers(),
      source.listDevices(),
      source.listRules(),
      source.listTokens(),
      source.getSettings(),
    ]);
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
    });
    return {
      users: users.length,
      devices: devices.length,
      rules: rules.length,
      tokens: tokens.length,
      settings: Object.keys(settings).length,
    };
  } finally {
    await target?.close();
    await source.close();
  }
}
