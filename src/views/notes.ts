/**
 * A change's note in words (the codes are src/plan/notes.ts's): why the change is planned the way
 * it is, and for a device what apply does to its tunnel, from the fields the change actually sends
 * (docs/netform.md, "Reading a plan"), never more than that. A note read from a saved plan is
 * already words and is shown as it is.
 */
import type { ChangeNote, KeptReason, MoveKeeps, NotePart } from '../plan/notes.js';
import type { Plan, PlanTestFailure, WordedPlan } from '../plan/types.js';
import { wordedDelta } from './ops-compared.js';
import { baseNoteText, ownersSourceText } from './ops-plan.js';
import { limitSourceText } from './plan-limits.js';
import { wordedOutcome } from './plan-outcome.js';
import { guardWhyText, warningText } from './plan-warnings.js';

/** The role a user without `role:` has (src/plan/defaults.ts DEFAULT_ROLE). */
const DEFAULT_ROLE = 'unprivileged';

/** Between the delete and the create of a replaced rule, neither filters: said wherever a rule is replaced. */
export const RULE_REPLACE_NOTE =
  'deleted, then the new one created, never changed in place; between the two requests the old rule no longer filters';

/** The words on an admin's deletion: apply asks the server first whether it owns the token. */
export const ADMIN_DELETE_NOTE =
  'apply first demotes it to find out whether it owns the API token (the server refuses to change its own role): ' +
  'if so the deletion is skipped; a server that cannot tell leaves it to --token-user';

/** The note in words, `''` when there is none. */
export function noteText(note: ChangeNote | undefined): string {
  if (note === undefined) return '';
  if (typeof note === 'string') return note;
  return note.map(notePartText).join('; ');
}

export function notePartText(part: NotePart): string {
  switch (part.code) {
    case 'now_managed':
      return part.field === 'role'
        ? `now managed: the file leaves role out, which means ${DEFAULT_ROLE}`
        : `now managed: the file leaves ${part.field} out, which means use_default_${part.field}: true (the server's default)`;
    case 'user_renamed':
      return `renamed from ${part.from} (renamed_from): its devices and rules stay`;
    case 'device_renamed':
      return renameNote(part.from, part.fields);
    case 'renamed':
      return `renamed from ${part.from}`;
    case 'device_replaced':
      return replaceNote(part.fields);
    case 'device_moved':
      return moveNote(part.from, part.owner, part);
    case 'role_expired':
      return `role expired ${part.expires}`;
    case 'expired':
      return `expired ${part.expires ?? ''}`.trim();
    case 'absent':
      return 'listed under absent';
    case 'pruned':
      return 'declared in no file (prune)';
    case 'pruned_to_make_room':
      return `declared in no file (prune); deleted first to make room for ${part.label}`;
    case 'admin_delete':
      return ADMIN_DELETE_NOTE;
    case 'rule_replaces':
      return `replaces the live rule ${part.live}${part.overlaps ? ', which it overlaps' : ''}: ${RULE_REPLACE_NOTE}`;
    case 'previous_rule_kept':
      return `prune is off: the live rule ${part.rules.join(', ')} that no file declares stays, and the access it grants remains`;
  }
}

/** What of a device's identity a change touches: its public key, its addresses, its preshared key. */
interface DeviceIdentity {
  publicKey: boolean;
  addresses: boolean;
  presharedKey: boolean;
}

/** Which identity fields a list of changed fields touches. */
function identityChanged(fields: Iterable<string>): DeviceIdentity {
  const set = new Set(fields);
  return {
    publicKey: set.has('public_key'),
    addresses: set.has('ipv4') || set.has('ipv6'),
    presharedKey: set.has('preshared_key'),
  };
}

function list(parts: string[]): string {
  if (parts.length <= 1) return parts.join('');
  return `${parts.slice(0, -1).join(', ')} and ${parts[parts.length - 1]}`;
}

/**
 * `its public key changes: a tunnel set up with the old key stops working until the client uses
 * the new one; addresses and preshared key stay`, or `keys, addresses and preshared key stay`.
 */
function identityWords(changed: DeviceIdentity): string {
  const changes: string[] = [];
  const stays: string[] = [];
  (changed.publicKey ? changes : stays).push(changed.publicKey ? 'its public key' : 'public key');
  (changed.addresses ? changes : stays).push(changed.addresses ? 'its addresses' : 'addresses');
  (changed.presharedKey ? changes : stays).push(changed.presharedKey ? 'its preshared key' : 'preshared key');
  const parts: string[] = [];
  if (changes.length > 0) {
    const clients = changed.publicKey
      ? ': a tunnel set up with the old public key stops working until its client uses the new one'
      : ': its client needs the new configuration';
    parts.push(`${list(changes)} ${changes.length === 1 ? 'changes' : 'change'}${clients}`);
  }
  if (stays.length > 0) parts.push(`${list(stays)} ${stays.length === 1 ? 'stays' : 'stay'}`);
  return parts.join('; ');
}

function untouched(changed: DeviceIdentity): boolean {
  return !changed.publicKey && !changed.addresses && !changed.presharedKey;
}

/** The note of a device renamed in place (one update of every changed field). */
export function renameNote(from: string, fields: readonly string[]): string {
  const changed = identityChanged(fields);
  const others = fields.filter((f) => f !== 'name');
  const what = `one update of ${list(['its name', ...others])}`;
  return `renamed from ${from}: ${what}; ${untouched(changed) ? 'keys, addresses and preshared key stay' : identityWords(changed)}`;
}

/** The note of a device replaced because the server ignores the changed fields on update. */
export function replaceNote(fields: readonly string[]): string {
  const changed = identityChanged(fields);
  if (untouched(changed))
    return 'replaced (delete, then create with the same keys and addresses): the server ignores these fields on update';
  return `replaced (delete, then create again): the server ignores these fields on update; ${identityWords(changed)}`;
}

/**
 * The note of a device moved to another user: the live device holding its public key is deleted,
 * then created for the new owner (the server cannot change a device's user).
 */
export function moveNote(from: string, newOwner: string, keeps: MoveKeeps): string {
  const same = ['public key'];
  if (keeps.presharedKey === 'kept') same.push('preshared key');
  if (keeps.addresses) same.push('addresses');
  const other: string[] = [];
  if (keeps.presharedKey === 'new') other.push('the preshared key the files give');
  if (!keeps.addresses) other.push('the addresses the files give');
  const created = `created for ${newOwner} with the same ${list(same)}${other.length ? ` and ${list(other)}` : ''}`;
  return (
    `moved from ${from} (the live device that holds its public key): deleted, then ${created}; ` +
    `its tunnel is down between the two requests`
  );
}

/** What stays with an undeclared object that is kept, by its kind. */
const KEPT_ACCESS = {
  user: 'it, its devices and its rules stay',
  device: 'it stays connected',
  rule: 'the access it grants remains',
  configuration: 'the access it grants remains',
} as const;

/** Why an undeclared object is deleted or kept, or a live rule left in place, in words. */
export function keptReasonText(reason: KeptReason): string {
  if (typeof reason === 'string') return reason;
  switch (reason.code) {
    case 'prune_on':
      return 'prune is on';
    case 'forgotten':
      return 'forgotten: stays on the server, no longer managed';
    case 'acknowledged':
      return `acknowledged until ${reason.until} (${reason.reason})`;
    case 'target':
      return 'left out by --target';
    case 'kept': {
      const access = KEPT_ACCESS[reason.kind];
      if (reason.by === 'prune_off') return `prune is off: ${access}`;
      if (reason.by === 'protected') return `protected (settings.protect): ${access}`;
      return reason.guard !== undefined
        ? `not deleted: ${guardWhyText(reason.guard)}: ${access}`
        : `not deleted: ${access}`;
    }
  }
}

/** A change with its note in words (none when it has no part). */
function worded<T extends { note?: ChangeNote }>(change: T): T & { note?: string } {
  if (!Array.isArray(change.note)) return change as T & { note?: string };
  if (change.note.length === 0) {
    const { note: _note, ...rest } = change;
    return rest as T & { note?: string };
  }
  return { ...change, note: noteText(change.note) };
}

/**
 * The plan with every note, reason, warning and outcome item in words, each where it was: what `--format json` prints and
 * a saved plan holds (the saved-plan format keeps words, so plans saved before and after read the same).
 */
export function wordedPlan(plan: Plan): WordedPlan {
  const { resolved_by_pr: resolved, undeclared, tests, outcome, access_delta: delta, base, owners } = plan;
  return {
    ...plan,
    ...(delta ? { access_delta: wordedDelta(delta) } : {}),
    ...(base?.note !== undefined ? { base: { ...base, note: baseNoteText(base.note) } } : {}),
    ...(owners ? { owners: { ...owners, from: ownersSourceText(owners.from) } } : {}),
    changes: plan.changes.map(worded),
    warnings: plan.warnings.map(warningText),
    limits: plan.limits.map((limit) => ({ ...limit, source: limitSourceText(limit.source) })),
    ...(outcome ? { outcome: wordedOutcome(outcome) } : {}),
    ...(base?.note !== undefined ? { base: { ...base, note: baseNoteText(base.note) } } : {}),
    ...(resolved ? { resolved_by_pr: resolved.map(worded) } : {}),
    ...(undeclared ? { undeclared: undeclared.map((item) => ({ ...item, reason: keptReasonText(item.reason) })) } : {}),
    ...(tests ? { tests: { ...tests, failures: tests.failures.map(wordedFailure) } } : {}),
  } as WordedPlan;
}

function wordedFailure(failure: PlanTestFailure): PlanTestFailure {
  const { because } = failure;
  if (because?.reason === undefined) return failure;
  return { ...failure, because: { ...because, reason: keptReasonText(because.reason) } };
}
