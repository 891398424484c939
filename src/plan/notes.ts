/**
 * Why a change is planned the way it is, as codes and the values their words need: the planner
 * records them on `Change.note`, and src/views/notes.ts words them. A note made now is a list of
 * parts, worded in order and joined with `; `. A note read from a saved plan is the text it was
 * worded to when the plan was written (the saved-plan format keeps words, not codes).
 */
import type { ResourceKind } from './types.js';
import type { GuardWhy } from './warnings.js';

/** What a moved device keeps: `kept` when the new device gets the live device's preshared key. */
export interface MoveKeeps {
  presharedKey: 'kept' | 'new' | 'none';
  addresses: boolean;
}

export type NotePart =
  /** A field the files leave out and the change writes with its default (src/plan/defaults.ts). */
  | { code: 'now_managed'; field: string }
  /** A user renamed with `renamed_from`: one update of its email. */
  | { code: 'user_renamed'; from: string }
  /** A device renamed in place: one update of `fields` (its name first). */
  | { code: 'device_renamed'; from: string; fields: string[] }
  /** A device renamed, said before the replacement that renames it. */
  | { code: 'renamed'; from: string }
  /** A device replaced because the server ignores `fields` on update. */
  | { code: 'device_replaced'; fields: string[] }
  /** A device moved to `owner`: the live device of `from` holding its public key is deleted, then created again. */
  | ({ code: 'device_moved'; from: string; owner: string } & MoveKeeps)
  /** A demotion caused by an expired `role_expires:`. */
  | { code: 'role_expired'; expires: string }
  /** A deletion caused by an expired `expires:` (the date as written, when known). */
  | { code: 'expired'; expires?: string }
  /** A deletion of an object listed under `absent`. */
  | { code: 'absent' }
  /** A deletion of a live object no file declares, with prune on. */
  | { code: 'pruned' }
  /** The same, deleted first so that the rule `label` can be created. */
  | { code: 'pruned_to_make_room'; label: string }
  /** The deletion of an admin: apply first asks the server whether it owns the token. */
  | { code: 'admin_delete' }
  /** A rule replaced (delete, then create): the live rule it replaces, by label. */
  | { code: 'rule_replaces'; live: string; overlaps: boolean }
  /** A rule created while earlier versions of it (by label) stay: prune is off. */
  | { code: 'previous_rule_kept'; rules: string[] };

/** A change's note: parts made now, or a saved plan's words. */
export type ChangeNote = NotePart[] | string;

/** The parts of a note made now (a saved plan's words have none). */
export function noteParts(note: ChangeNote | undefined): NotePart[] {
  return Array.isArray(note) ? note : [];
}

/** `note` with `part` added at the end. */
export function withNotePart(note: ChangeNote | undefined, part: NotePart): NotePart[] {
  return [...noteParts(note), part];
}

/**
 * Why a live object no file declares is deleted or kept (UndeclaredItem.reason), or why a live rule
 * is left in place (src/access/after-apply.ts), as a code: src/views/notes.ts words it.
 */
export type UndeclaredReason =
  /** Deleted: prune is on. */
  | { code: 'prune_on' }
  /** Kept: prune is off, the user is protected, or a guard (its warning's why, when it gave one) kept it. */
  | { code: 'kept'; kind: ResourceKind; by: 'prune_off' | 'protected' | 'not_deleted'; guard?: GuardWhy }
  /** Kept: a `forget:` entry names it. */
  | { code: 'forgotten' }
  /** Kept: an `acknowledged:` entry keeps it until its date, for its reason. */
  | { code: 'acknowledged'; until: string; reason: string }
  /** Left in place: the plan deletes it, but `--target` leaves that deletion out. */
  | { code: 'target' };

/** An undeclared object's reason: a code made now, or a saved plan's words. */
export type KeptReason = UndeclaredReason | string;
