/**
 * Renames keep the object: a declared user or device whose key has no live object is matched to
 * the live one it was renamed from, and planned as one update of its email or name (never a
 * delete and create, which would lose ids, addresses and preshared keys).
 * - `renamed_from: OLD` declares it, as Terraform's `moved` block: a no-op once done, an error
 *   when both the old and the new key exist live.
 * - A device whose public key is held by a live device of the same user under another name,
 *   which no file declares, is that device renamed.
 */
import { deviceKey, userKey } from '../model/keys.js';
import type { DesiredDevice, DesiredUser, SourceLocation } from '../model/state.js';
import type { ApiDevice, ApiUser } from '../model/types.js';
import type { PlanContext } from './context.js';

/** `netform.yaml:12`: where a declaration's `renamed_from` (or the declaration) stands. */
/** Where `renamed_from` (or else its object) is declared, `{ at: 'teams/a.yaml:12' }`, to spread into a problem. */
function where(source: SourceLocation | undefined): { at?: string } {
  const at = source?.fields?.renamed_from ?? source;
  return at ? { at: `${at.file}:${at.line}` } : {};
}

/** Declared users not found by email, matched to the live user named by `renamed_from`. */
export function matchRenamedUsers(ctx: PlanContext): void {
  for (const [key, entry] of ctx.declaredUsers) {
    const from = entry.user.renamed_from;
    if (from === undefined || userKey(from) === key) continue;
    const old = ctx.index.usersByKey.get(userKey(from));
    if (!old) continue; // done already, or never existed: nothing to do
    if (entry.live) {
      ctx.problems.push({
        code: 'rename_both_live',
        ...where(entry.user.source),
        email: entry.user.email,
        from,
        live: entry.live.email,
        old: old.email,
      });
      continue;
    }
    if (ctx.declaredUsers.has(userKey(from))) {
      ctx.problems.push({ code: 'rename_from_declared', ...where(entry.user.source), email: entry.user.email, from });
      continue;
    }
    if (ctx.isDuplicated('user', userKey(from))) continue;
    entry.live = old;
    entry.renamedFrom = old.email;
  }
  for (const { live } of ctx.declaredUsers.values()) if (live) ctx.matchedUserIds.add(live.id);
}

/**
 * The live device a declared device (not found by name) was renamed from, if any: by
 * `renamed_from`, or else by a public key a live device of the same user holds under a name no
 * file declares.
 */
export function renamedDevice(
  ctx: PlanContext,
  user: DesiredUser,
  liveUser: ApiUser,
  device: DesiredDevice,
): ApiDevice | undefined {
  const declaredNames = new Set(user.devices.map((d) => deviceKey(liveUser.email, d.name)));
  if (device.renamed_from !== undefined) {
    const oldKey = deviceKey(liveUser.email, device.renamed_from);
    const old = ctx.index.devicesByKey.get(oldKey);
    if (!old || declaredNames.has(oldKey) || ctx.isDuplicated('device', oldKey)) return undefined;
    return old;
  }
  const publicKey = typeof device.fields.public_key === 'string' ? device.fields.public_key.trim() : null;
  if (!publicKey) return undefined;
  return (ctx.index.devicesByUserId.get(liveUser.id) ?? []).find(
    (d) =>
      d.public_key === publicKey && !ctx.claimedDevices.has(d) && !declaredNames.has(ctx.index.deviceKeyOf.get(d)!),
  );
}

/** `renamed_from` on a device whose new name exists live too: an error naming the file and line. */
export function checkDeviceRenameTarget(
  ctx: PlanContext,
  device: DesiredDevice,
  liveUser: ApiUser,
  live: ApiDevice,
): void {
  if (device.renamed_from === undefined) return;
  const oldKey = deviceKey(liveUser.email, device.renamed_from);
  if (oldKey === ctx.index.deviceKeyOf.get(live)) return;
  if (ctx.index.devicesByKey.has(oldKey)) {
    ctx.problems.push({
      code: 'device_rename_both_live',
      ...where(device.source),
      name: device.name,
      owner: liveUser.email,
      from: device.renamed_from,
    });
  }
}

/**
 * A hint when an email changed without `renamed_from`: a created user declares a device whose
 * public key a live user no file declares holds (the same person, renamed). Without the hint that
 * plans a delete and a create of the devices' owner (with prune on) or a key conflict. In the
 * warnings, or among the problems when the plan cannot be made.
 */
export function hintUserRenames(ctx: PlanContext): void {
  const byPublicKey = new Map<string, ApiDevice>();
  let indexed = false;
  for (const { user, live } of ctx.declaredUsers.values()) {
    if (live || user.renamed_from !== undefined) continue;
    if (!indexed) {
      for (const device of ctx.live.devices) byPublicKey.set(device.public_key.trim(), device);
      indexed = true;
    }
    const owners = new Map<string, ApiUser>();
    for (const device of user.devices) {
      const key = device.fields.public_key;
      const held = typeof key === 'string' ? byPublicKey.get(key.trim()) : undefined;
      const owner = held ? ctx.index.usersById.get(held.user_id) : undefined;
      if (!owner || ctx.matchedUserIds.has(owner.id) || ctx.declaredUsers.has(userKey(owner.email))) continue;
      owners.set(owner.id, owner);
    }
    for (const owner of owners.values()) {
      const hint = {
        code: 'rename_hint',
        ...where(user.source),
        email: user.email,
        owner: owner.email,
        // validate refuses a rename from outside the scope: the hint says what else it takes.
        inScope: ctx.scope.managesUser(owner.email),
      } as const;
      if (ctx.problems.length > 0) ctx.problems.push(hint);
      else ctx.warnings.push(hint);
    }
  }
}
