import type { Clock } from '../clock.js';
import { AuthenticationError } from '../errors.js';
import type { Store, StoreWriter, UserRow } from '../store/index.js';
import { authenticateHash } from './tokens.js';

/** What every service works with; built once per server from its options, and per request by acting(). */
export interface ServiceContext {
  store: Store;
  clock: Clock;
  /** Emulate upstream 0.7.26+: device updates change only name and description. */
  legacyDeviceUpdates: boolean;
  /** Whose token a request acts with; checked again inside each write transaction (writeTransaction). */
  credential?: Credential;
  /**
   * For tests only: runs after the auth hook accepted a request and before its write transaction
   * begins, so that a test can demote the actor in exactly that window.
   */
  beforeWrite?: (actor: UserRow) => Promise<void>;
}

/** The token a request authenticated with (its digest) and its owner as the auth hook read it. */
export interface Credential {
  tokenHash: string;
  actor: UserRow;
}

/** `ctx` for one authenticated request (the auth hook's `request.actor` and `request.tokenHash`). */
export function acting(ctx: ServiceContext, request: { actor: UserRow | null; tokenHash: string | null }) {
  if (request.actor === null || request.tokenHash === null) return ctx;
  return { ...ctx, credential: { tokenHash: request.tokenHash, actor: request.actor } };
}

/**
 * `ctx.store.transaction(fn)` for a request's write: its token is checked again inside the
 * transaction, before `fn` runs, so that permission is decided by what the write itself reads.
 * An admin demoted (disabled, deleted, its token revoked) after the auth hook accepted the
 * request gets the 401 the hook would give now, and nothing is written.
 */
export async function writeTransaction<T>(ctx: ServiceContext, fn: (tx: StoreWriter) => Promise<T>): Promise<T> {
  const credential = ctx.credential;
  if (credential && ctx.beforeWrite) await ctx.beforeWrite(credential.actor);
  return ctx.store.transaction(async (tx) => {
    if (credential) {
      const auth = await authenticateHash(tx, ctx.clock, credential.tokenHash);
      if (!auth.ok) throw new AuthenticationError(auth.body);
    }
    return fn(tx);
  });
}
