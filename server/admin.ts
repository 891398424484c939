/**
 * The administration that works on the server machine without any token, straight on the
 * database: issue, list and revoke tokens; show and change the defaults. A module of its own, apart
 * from the HTTP server (index.ts): `netform server ...` loads the store and these services only.
 */
import { resolve } from 'node:path';
import { createClock, type Clock } from './clock.js';
import { AdminError } from './errors.js';
import { ensureSettings, readSettings, setDefault, type ServerDefaults } from './services/settings.js';
import {
  checkTokenRequest,
  issueApiToken,
  listApiTokens,
  revokeApiToken,
  TOKEN_DAYS,
  type TokenSummary,
} from './services/tokens.js';
import { MissingDatabaseError } from './store/errors.js';
import { openStore } from './store/open.js';
import type { Store } from './store/types.js';

/**
 * Runs `fn` on the store of a database file and closes it. Only `create` (serve and token create,
 * the first step of setting up a server) makes a missing file; otherwise a missing file is an
 * AdminError naming the full path, and nothing is created.
 */
async function withStore<T>(
  dbPath: string,
  fn: (store: Store, clock: Clock, created: boolean) => Promise<T>,
  create = false,
): Promise<T> {
  let store: Store;
  try {
    store = await openStore(dbPath, { create });
  } catch (error) {
    if (error instanceof MissingDatabaseError) {
      throw new AdminError(
        `no database at ${error.path} (check --db / NETFORM_DB); only "netform serve" and ` +
          '"netform server token create" create a new one',
      );
    }
    throw error;
  }
  try {
    await ensureSettings(store);
    return await fn(store, createClock(), (store as { created?: boolean }).created === true);
  } finally {
    await store.close();
  }
}

export interface IssuedTokenResult {
  token: string;
  userCreated: boolean;
  id: string;
  expiresAt: string;
  /** The full path of the database file when this call created it, else null. */
  createdDatabase: string | null;
}

/**
 * Issues an API token for the admin `email`, creating that admin when no user has the email,
 * and the database file when it does not exist (the first step of setting up a server). Refuses
 * (AdminError) a bad email or days before touching any file, an unprivileged or disabled user,
 * and a 26th live token.
 */
export async function issueToken(options: {
  dbPath: string;
  email: string;
  days?: number;
}): Promise<IssuedTokenResult> {
  checkTokenRequest(options.email, options.days ?? TOKEN_DAYS.default);
  return withStore(
    options.dbPath,
    async (store, clock, created) => {
      const issued = await issueApiToken(store, clock, options.email, options.days ?? TOKEN_DAYS.default);
      return {
        token: issued.token,
        userCreated: issued.userCreated,
        id: issued.id,
        expiresAt: issued.expiresAt,
        createdDatabase: created ? resolve(options.dbPath) : null,
      };
    },
    true,
  );
}

export async function listTokens(options: { dbPath: string }): Promise<TokenSummary[]> {
  return withStore(options.dbPath, (store, clock) => listApiTokens(store, clock));
}

export async function revokeToken(options: { dbPath: string; id: string }): Promise<{ alreadyRevoked: boolean }> {
  return withStore(options.dbPath, (store, clock) => revokeApiToken(store, clock, options.id));
}

export async function showDefaults(options: {
  dbPath: string;
}): Promise<ServerDefaults & { server_public_key: string }> {
  return withStore(options.dbPath, async (store) => {
    const settings = await readSettings(store);
    return { ...settings.defaults, server_public_key: settings.serverPublicKey };
  });
}

export async function setServerDefault(options: {
  dbPath: string;
  key: string;
  value: string;
}): Promise<{ value: unknown; notes: string[] }> {
  return withStore(options.dbPath, (store) => setDefault(store, options.key, options.value));
}
