/**
 * The plan's warnings (Plan.warnings) and its guards' reasons, as codes and the values their words
 * need: the planner records them, and src/views/plan-warnings.ts words them. A warning read from a
 * saved plan is the text it was worded to when the plan was written (the saved-plan format keeps
 * words, not codes).
 */
import type { ProblemWords } from './problems.js';

/** Why a guard keeps a user's deletion or demotion out of the plan (src/plan/guards.ts). */
export type GuardWhy =
  /** `settings.protect` names the user. */
  | 'protected'
  /** The API token in use belongs to the user. */
  | 'token_owner'
  /** An admin, and the token's owner is unknown (no `--token-user`). */
  | 'owner_unknown'
  /** The server would be left without an admin. */
  | 'last_admin';

/** Where an entry of the files is declared, when known. */
export interface EntrySource {
  file: string;
  line: number;
}

export type WarningWords =
  /** A guard cancelled the deletion or demotion of the user `label` (`user alice@example.com`). */
  | { code: 'guarded'; action: 'delete' | 'demote'; label: string; why: GuardWhy }
  /** A `forget:` entry names nothing on the server. */
  | { code: 'forget_unmatched'; key: string; source?: EntrySource }
  /** A live object a `forget:` entry names: it stays on the server, no longer managed. */
  | { code: 'forgotten'; label: string }
  /** An `acknowledged:` entry (`what`: its key, and its field unless `*`) names nothing on the server. */
  | { code: 'acknowledged_unmatched'; what: string; source?: EntrySource }
  /** An acknowledgement whose date has passed (`name`: the object's label, and the field unless `*`). */
  | { code: 'acknowledgement_expired'; name: string; until: string; reason: string }
  /** An acknowledged difference that changed on the server since. */
  | { code: 'acknowledged_changed'; name: string; until: string; reason: string }
  /** An acknowledgement of a rule a file declares as it is. */
  | { code: 'acknowledged_declared'; what: string; source?: EntrySource }
  /** An acknowledgement of one field of an object no file declares. */
  | { code: 'acknowledged_field_undeclared'; what: string; key: string; source?: EntrySource }
  /** An acknowledgement in force that keeps nothing: the object does not differ from the files. */
  | { code: 'acknowledged_unused'; what: string; source?: EntrySource }
  /** `--target` kept the plan to `targets`: `left` other changes are left out. */
  | { code: 'target_limited'; targets: string[]; left: number }
  /** A `--target` no change is planned for (`near`: the nearest key of the server, as a hint). */
  | { code: 'target_unmatched'; target: string; near?: string }
  /** A new user whose devices' keys a live user no file declares holds (src/plan/problems.ts). */
  | Extract<ProblemWords, { code: 'rename_hint' }>
  /** New devices without a pinned address that the live devices' network may not hold (no `tunnel_networks`). */
  | { code: 'network_unchecked'; field: 'ipv4' | 'ipv6'; wanted: number; network: string; free: string };

/** A warning: a code made now, or a saved plan's words. */
export type PlanWarning = WarningWords | string;
