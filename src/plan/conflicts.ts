/**
 * Conflicts and the order that frees before it takes. A device create or update that needs a
 * unique value (public key, pinned ipv4 or ipv6) held by another live device:
 * - held by a device the plan deletes (itself, or with its user): a create with its public key
 *   becomes a replacement of that device (delete, then create for the new owner, keeping its
 *   preshared key and addresses unless the files give others); otherwise the deletion moves
 *   before the change that needs the value;
 * - held by a device the plan changes away from that value: that change goes first;
 * - otherwise: a plan error naming both objects, never a 422 in the middle of apply.
 */
import { parseIpAddress } from '../model/net.js';
import { isWritableDeviceField, type WritableDeviceField } from '../model/device-fields.js';
import type { ApiDevice } from '../model/types.js';
import { PHASE, type PlanContext } from './context.js';
import { sameDeviceValue } from './device-fields.js';
import { fingerprintOf } from './fingerprint.js';
import type { Change, FieldChange } from './types.js';

const UNIQUE_FIELDS = ['public_key', 'ipv4', 'ipv6'] as const;
type UniqueField = (typeof UNIQUE_FIELDS)[number];

function normal(field: UniqueField, value: unknown): string | null {
  if (typeof value !== 'string' || value.trim() === '') return null;
  return field === 'public_key' ? value.trim() : (parseIpAddress(value)?.text ?? value.trim());
}

/** Where the plan deletes each live device: its own deletion, or its user's. */
function plannedDeletions(ctx: PlanContext): Map<string, Change> {
  const deleting = new Map<string, Change>();
  for (const change of ctx.changes.values()) {
    if (change.action !== 'delete' || !change.liveId) continue;
    if (change.kind === 'device') deleting.set(change.liveId, change);
    if (change.kind === 'user')
      for (const item of change.cascade ?? []) if (item.kind === 'device') deleting.set(item.liveId, change);
  }
  return deleting;
}

/** The value a change gives a field, when it sets it (creates: any given value; updates: changed ones). */
function wanted(change: Change, field: UniqueField): string | null {
  if (change.action === 'create' || change.action === 'replace') return normal(field, change.body?.[field]);
  return change.fields.some((f) => f.field === field) ? normal(field, change.body?.[field]) : null;
}

export function resolveUniqueValues(ctx: PlanContext): void {
  // Only the values some change sets are looked for among the live devices (most plans set a few
  // public keys and no pinned address, so the live addresses need not be read at all).
  const sought = new Set<string>();
  const soughtFields = new Set<UniqueField>();
  for (const change of ctx.changes.values()) {
    if (change.kind !== 'device' || change.action === 'delete') continue;
    for (const field of UNIQUE_FIELDS) {
      const value = wanted(change, field);
      if (value === null) continue;
      sought.add(`${field}:${value}`);
      soughtFields.add(field);
    }
  }
  if (sought.size === 0) return;
  const holders = new Map<string, ApiDevice>();
  for (const device of ctx.live.devices) {
    for (const field of soughtFields) {
      const value = normal(field, device[field]);
      if (value && sought.has(`${field}:${value}`)) holders.set(`${field}:${value}`, device);
    }
  }
  const deleting = plannedDeletions(ctx);
  const changingById = new Map<string, Change>();
  for (const change of ctx.changes.values())
    if (change.kind === 'device' && change.liveId && change.action !== 'delete')
      changingById.set(change.liveId, change);

  for (const change of [...ctx.changes.values()]) {
    if (change.kind !== 'device' || change.action === 'delete') continue;
    for (const field of UNIQUE_FIELDS) {
      const value = wanted(change, field);
      const holder = value ? holders.get(`${field}:${value}`) : undefined;
      if (!holder || holder.id === change.liveId) continue;
      const holderLabel = `device ${ctx.index.deviceKeyOf.get(holder)} (of ${ctx.index.deviceOwnerOf(holder)})`;
      const deletion = deleting.get(holder.id);
      if (deletion && field === 'public_key' && change.action === 'create') {
        replaceHolder(ctx, change, holder, deletion);
        deleting.delete(holder.id);
        continue;
      }
      if (deletion) {
        deletion.phase = PHASE.makeRoom;
        change.dependsOn = [...new Set([...(change.dependsOn ?? []), deletion.id])];
        continue;
      }
      const freeing = changingById.get(holder.id);
      if (freeing && normal(field, freeing.body?.[field]) !== value && freeing.fields.some((f) => f.field === field)) {
        freeing.phase = PHASE.makeRoom;
        change.dependsOn = [...new Set([...(change.dependsOn ?? []), freeing.id])];
        continue;
      }
      const movedUser = field === 'public_key' && change.action === 'create' && !ctx.matchedUserIds.has(holder.user_id);
      ctx.problems.push({
        code: 'value_held',
        label: change.label,
        field,
        value: String(value),
        holder: holderLabel,
        ...(movedUser ? { movedFrom: ctx.index.deviceOwnerOf(holder) } : {}),
      });
    }
  }
}

/**
 * The new device takes the place of the live device the plan deletes (a device moved to another
 * user, or its user's email changed): delete, then create, keeping the live preshared key,
 * addresses and description unless the files give others. The change's fields are what differs
 * from that live device (its owner first), so the plan shows one move, not a create beside a kept
 * device.
 */
function replaceHolder(ctx: PlanContext, change: Change, holder: ApiDevice, deletion: Change): void {
  if (deletion.kind === 'device') ctx.changes.delete(deletion.id);
  else deletion.cascade = deletion.cascade?.filter((item) => item.liveId !== holder.id);
  // Accounted for by this change: never listed as undeclared (kept or deleted) beside it.
  ctx.claimedDevices.add(holder);
  const body = { ...change.body };
  for (const field of ['ipv4', 'ipv6', 'description'] as const)
    if (body[field] === undefined && holder[field]) body[field] = holder[field];
  const newPsk = (change.secrets ?? []).some((s) => s.field === 'preshared_key');
  const keepsPsk = !newPsk && Boolean(holder.preshared_key);
  const from = `${ctx.index.deviceKeyOf.get(holder)}`;
  const ownerKey = change.key.slice(0, change.key.indexOf('/'));
  const newOwner = ctx.declaredUsers.get(ownerKey)?.user.email.trim() ?? ownerKey;
  const fields: FieldChange[] = [{ field: 'user', before: ctx.index.deviceOwnerOf(holder), after: newOwner }];
  for (const [field, after] of Object.entries(body)) {
    if (field === 'user_id' || (!isWritableDeviceField(field) && field !== 'name')) continue;
    const before = holder[field as keyof ApiDevice];
    const same =
      field === 'name'
        ? String(before).trim() === String(after).trim()
        : sameDeviceValue(field as WritableDeviceField, after, before);
    if (!same) fields.push({ field, before: before ?? null, after });
  }
  fields.push(...change.fields.filter((f) => f.sensitive));
  const addresses = (['ipv4', 'ipv6'] as const).every((f) => sameDeviceValue(f, body[f], holder[f]));
  Object.assign(change, {
    action: 'replace',
    liveId: holder.id,
    fingerprint: fingerprintOf('device', holder),
    body,
    fields,
    ...(keepsPsk ? { keepFromLive: ['preshared_key'] } : {}),
    note: [
      {
        code: 'device_moved',
        from,
        owner: newOwner,
        presharedKey: keepsPsk ? 'kept' : newPsk ? 'new' : 'none',
        addresses,
      },
    ],
  } satisfies Partial<Change>);
}
