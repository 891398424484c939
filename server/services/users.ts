/** Users (docs/api-v0.md section 4): lookups by id or email, the own-role and last-admin guards, cascades. */
import { randomUUID } from 'node:crypto';
import {
  Messages,
  addError,
  checkUserInput,
  emailCharacterProblem,
  hasErrors,
  isText,
  isUuid,
  type ApiUser,
  type FieldErrors,
  type RawInput,
} from '../../src/model/index.js';
import { nowTimestamp, timestampAfter } from '../clock.js';
import { hashPassword } from '../crypto.js';
import { NotFoundError, ValidationError } from '../errors.js';
import type { StoreReader, UserPatch, UserRow } from '../store/index.js';
import { writeTransaction, type ServiceContext } from './context.js';
import { forgetAddresses } from './allocation.js';
import { userView } from './views.js';

/**
 * `{id}` of a user path: a UUID-shaped value is an id, anything else an email (case-insensitive).
 * Text no email can hold (a NUL, a lone surrogate, a control, invisible or look-alike character)
 * names no user: `\u212Aaren@…` does not reach `karen@…` through the lower case they share. A
 * row stored with such an email before it was refused is found by its id.
 */
export async function findUser(store: StoreReader, idOrEmail: string): Promise<UserRow | null> {
  if (!isText(idOrEmail)) return null;
  const text = idOrEmail.trim();
  if (isUuid(text)) return store.getUser(text.toLowerCase());
  return emailCharacterProblem(text) === null ? store.findUserByEmail(text) : null;
}

export async function listUsers(ctx: ServiceContext): Promise<ApiUser[]> {
  return (await ctx.store.listUsers()).map(userView);
}

export async function showUser(ctx: ServiceContext, idOrEmail: string): Promise<ApiUser> {
  const user = await findUser(ctx.store, idOrEmail);
  if (!user) throw new NotFoundError();
  return userView(user);
}

export async function createUser(ctx: ServiceContext, body: RawInput): Promise<ApiUser> {
  const checked = checkUserInput(body, 'create');
  const errors: FieldErrors = checked.ok ? {} : { ...checked.errors };
  // Hashing is slow on purpose: done before the write lock is taken.
  const passwordHash =
    checked.ok && checked.value.password !== undefined ? await hashPassword(checked.value.password) : null;
  return writeTransaction(ctx, async (tx) => {
    const email = checked.ok ? checked.value.email : undefined;
    if (email !== undefined && (await tx.findUserByEmail(email))) addError(errors, 'email', Messages.taken);
    if (!checked.ok || hasErrors(errors)) throw new ValidationError(errors);
    const now = nowTimestamp(ctx.clock);
    const row: UserRow = {
      id: randomUUID(),
      email: checked.value.email!,
      role: checked.value.role ?? 'unprivileged',
      password_hash: passwordHash,
      last_signed_in_at: null,
      last_signed_in_method: null,
      disabled_at: null,
      inserted_at: now,
      updated_at: now,
    };
    await tx.insertUser(row);
    return userView(row);
  });
}

export async function updateUser(
  ctx: ServiceContext,
  actor: UserRow,
  idOrEmail: string,
  body: RawInput,
): Promise<ApiUser> {
  const checked = checkUserInput(body, 'update');
  const errors: FieldErrors = checked.ok ? {} : { ...checked.errors };
  const input = checked.ok ? checked.value : (checked.partial ?? {});
  // Hashing is slow on purpose: done before the write lock is taken, unless the body is refused
  // anyway (an email error alone may still go: see below).
  const passwordHash =
    input.password !== undefined && Object.keys(errors).every((field) => field === 'email')
      ? await hashPassword(input.password)
      : null;
  return writeTransaction(ctx, async (tx) => {
    const user = await findUser(tx, idOrEmail);
    if (!user) throw new NotFoundError();
    // A user stored before today's email rules keeps its email: sent back unchanged, it is no change.
    if (errors.email && typeof body.email === 'string' && body.email.trim() === user.email) delete errors.email;
    const patch: UserPatch = {};
    if (input.email !== undefined && input.email !== user.email) {
      const other = await tx.findUserByEmail(input.email);
      if (other && other.id !== user.id) addError(errors, 'email', Messages.taken);
      patch.email = input.email;
    }
    if (input.role !== undefined && input.role !== user.role) {
      if (user.id === actor.id) addError(errors, 'role', Messages.ownRole);
      if (user.role === 'admin' && (await tx.countActiveAdmins(user.id)) === 0)
        addError(errors, 'base', Messages.lastAdminDemote);
      patch.role = input.role;
    }
    if (passwordHash !== null) patch.password_hash = passwordHash;
    if (hasErrors(errors)) throw new ValidationError(errors);
    // Nothing changes: no write, and updated_at stays (as upstream's Ecto does).
    if (Object.keys(patch).length === 0) return userView(user);
    patch.updated_at = timestampAfter(ctx.clock, user.updated_at);
    await tx.updateUser(user.id, patch);
    // A demoted admin's tokens are revoked, not only refused: promoting it again later does
    // not bring them back (it gets a new one on the server machine).
    if (patch.role !== undefined && user.role === 'admin') await tx.revokeTokensOfUser(user.id, patch.updated_at);
    return userView({ ...user, ...patch });
  });
}

/** Deletes the user with its devices, the rules bound to it and its API tokens, in one transaction. */
export async function deleteUser(ctx: ServiceContext, idOrEmail: string): Promise<void> {
  await writeTransaction(ctx, async (tx) => {
    const user = await findUser(tx, idOrEmail);
    if (!user) throw new NotFoundError();
    if (user.role === 'admin' && (await tx.countActiveAdmins(user.id)) === 0) {
      throw new ValidationError({ base: [Messages.lastAdminDelete] });
    }
    const devices = await tx.deleteDevicesOfUser(user.id);
    await forgetAddresses(tx, devices);
    await tx.deleteRulesOfUser(user.id);
    await tx.deleteTokensOfUser(user.id);
    await tx.deleteUser(user.id);
  });
}
