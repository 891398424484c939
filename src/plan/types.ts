/**
 * The Plan: a plain, versioned, serialisable object (docs/netform.md sections 3 and 4).
 * `netform plan -o` writes it as JSON, sealed (planfile.ts; docs/saved-plans.md); apply, the renderers
 * and drift all read this one shape. It never holds a secret value: secret fields carry their
 * reference (SecretRef) and, in a saved plan, an HMAC of the value.
 */
import type { AccessChanges } from '../access/changes.js';
import type { AccessDeltaDocument, AccessDeltaV1 } from '../access/delta-sets.js';
import type { BaseNote, OwnersSource } from './sources.js';
import type { DecidingItem } from '../access/deciding.js';
import type { SecretRef, SentSecretField } from '../model/secret.js';
import type { ChangeNote, KeptReason } from './notes.js';
import type { WithheldReason } from './reviewed.js';
import type { GuardWhy, PlanWarning } from './warnings.js';

export const PLAN_FORMAT = 'netform.plan';
/**
 * The version this netform writes (docs/saved-plans.md; schemas/plan.schema.json). 2: sealed with
 * an HMAC (`seal`, `seal_key`), secrets with their `hmac`. 3: the same, and a secret may be
 * unpinned (`pinned: false`, no `hmac`), a change may name the owners it requires
 * (`required_owners`), and apply refuses a plan older than its age limit (`created_at`).
 * Version 1 plans (an unkeyed SHA-256 `digest`) are refused, and so are later versions.
 */
export const PLAN_FORMAT_VERSION = 3;
/** The versions of saved plans this netform applies. */
export const PLAN_FORMAT_VERSIONS_READ = [2, 3] as const;
export type PlanFormatVersion = (typeof PLAN_FORMAT_VERSIONS_READ)[number];

/** The kinds of objects in the server's collections. */
export type ObjectKind = 'user' | 'device' | 'rule';
/** What a change acts on: an object, or the server's one configuration (`/v0/configuration`). */
export type ResourceKind = ObjectKind | 'configuration';
export type ChangeAction = 'create' | 'update' | 'delete' | 'replace';

/** One field's change, as shown to people. Sensitive fields show SENSITIVE_CHANGED, never values. */
export interface FieldChange {
  field: string;
  before: unknown;
  after: unknown;
  sensitive?: boolean;
  /**
   * A secret sent again whatever the server holds (`--rotate-passwords`): netform cannot read it
   * back, so it cannot tell whether it differs. Shown as "sent again", never as "changed".
   */
  resent?: boolean;
}

/**
 * A secret field of a request body, by reference: apply reads the value again. Made by planSecret
 * (secrets.ts), which keeps the planned value aside for the seal.
 */
export interface PlanSecret {
  field: SentSecretField;
  ref: SecretRef;
  /**
   * In a saved plan: HMAC-SHA-256 of the value under the plan's key (seal.ts), never the value.
   * Apply refuses the change as stale when the value read again has another HMAC.
   */
  hmac?: string;
  /**
   * Format version 3. Absent or true: the value was read when the plan was made and `hmac` pins
   * it. false: it could not be read then; the saved plan has no `hmac` for it, and apply sends
   * the value it reads.
   */
  pinned?: boolean;
  /** Format version 3: where the reference is declared (`teams/platform.yaml:39:15`), for messages. */
  at?: string;
}

/** The key a saved plan was sealed with: where it came from, and its id (not the key). */
export interface SealKeyInfo {
  source: 'NETFORM_PLAN_KEY' | 'token' | 'embedded-token';
  id: string;
}

/** Something that goes with a user deletion. */
export interface CascadeItem {
  kind: ObjectKind;
  key: string;
  liveId: string;
  /** Human-readable name of the object. */
  label: string;
  fingerprint?: string;
}

export interface Change {
  /** Stable within one plan: `user:alice@example.com`, `device:alice@example.com/laptop`, ... */
  id: string;
  kind: ResourceKind;
  action: ChangeAction;
  /**
   * The natural key in normal form (src/model/keys.ts): of the object after the change (create,
   * update, replace) or of the live object (delete). Apply matches live objects with it.
   */
  key: string;
  /** How people read the object: `user alice@example.com`, `rule accept 10.1.0.0/16 tcp 443 (alice@example.com)`. */
  label: string;
  /**
   * Order of execution: 1 users, 2 changes that make room for others, 3 devices and rules,
   * 4 deletions of devices and rules, 5 deletions and demotions of users. A phase starts when the
   * previous one has finished.
   */
  phase: number;
  /** The live object's id (update, delete, replace). */
  liveId?: string;
  /**
   * Fingerprint of the live object the plan saw (update, delete, replace), or null for a create
   * (the key was absent). Apply refuses a saved plan when this no longer holds.
   */
  fingerprint: string | null;
  fields: FieldChange[];
  /**
   * The request body to send (create, update, and the create half of replace), without secrets.
   * References to other objects of the plan use `{ "$ref": "<change id or user key>" }` where the
   * id is not known until apply (a device of a user created in the same apply).
   */
  body?: Record<string, unknown>;
  /** Secret fields of the body, by reference: apply resolves them again. */
  secrets?: PlanSecret[];
  /**
   * Fields of the create half of a replace taken from the live object at apply time (its
   * preshared key, which a saved plan may not hold).
   */
  keepFromLive?: string[];
  /** What goes with a user deletion: its devices and rules (counted against the limits). */
  cascade?: CascadeItem[];
  /** Ids of changes that must be done before this one. */
  dependsOn?: string[];
  /**
   * Why this change is planned this way (adoption, replacement, protection): codes made now, which
   * src/views/notes.ts words; the words themselves in a saved plan (the JSON a plan is written as).
   */
  note?: ChangeNote;
  /**
   * Fields this change writes only because the files leave them out, which means their default
   * (src/plan/defaults.ts): `role`, `use_default_<x>`. Listed first; `apply -f` without a reviewed
   * plan refuses such changes unless `--allow-now-managed` is given.
   */
  now_managed?: string[];
  /**
   * Effective values this change moves (src/plan/effective.ts): a device's `use_default_<x>` flip,
   * or, on the configuration change, every device that follows a changed `default_client_<x>`.
   */
  effective?: EffectiveValue[];
  /**
   * With `plan --base REF` (src/plan/base.ts): `pr` when this pull request introduces the change
   * (its base's plan lacks it, or plans it differently), `base` when the base's plan has it
   * identically (drift, or merged and not yet applied): applied on merge all the same.
   */
  origin?: ChangeOrigin;
  /**
   * Format version 3: the `expires:` (or `role_expires:`) of the files, as written, that causes
   * this deletion or demotion (src/plan/expiries.ts). `apply --expired-only` applies only these.
   */
  expired?: string;
  /**
   * Format version 3: the earliest `expires:` (or `role_expires:`), as written, of what this change
   * grants (its user's included). A saved or reviewed plan applied after it is refused for it.
   */
  expires?: string;
  /** Format version 3: the reviewers (handles) who must approve this change, from the owners the desired state declares. */
  required_owners?: string[];
}

export type ChangeOrigin = 'pr' | 'base';

/**
 * A device field's effective value (what its tunnel gets) before and after the plan. `null`: the
 * server's default, which the plan could not read (no `/v0/configuration`, no device using it).
 */
export interface EffectiveValue {
  /** The device's key: `alice@example.com/laptop`. */
  device: string;
  field: 'allowed_ips' | 'dns' | 'endpoint' | 'mtu' | 'persistent_keepalive';
  before: unknown;
  after: unknown;
}

/** A change of the base's plan that this pull request's plan no longer makes: what the request undoes. */
export type ResolvedChange = Pick<Change, 'id' | 'kind' | 'action' | 'key' | 'label' | 'fields' | 'cascade' | 'note'>;

/**
 * A plan whose notes are words (src/views/notes.ts wordedPlan), as JSON shows it and a saved plan
 * holds it; a saved plan read back is one.
 */
export type WordedPlan = Plan & {
  changes: (Change & { note?: string })[];
  resolved_by_pr?: (ResolvedChange & { note?: string })[];
  undeclared?: (UndeclaredItem & { reason: string })[];
  warnings: string[];
  limits: (LimitCheck & { source: string })[];
  outcome?: WordedOutcome;
  base?: PlanBase & { note?: string };
};

/** An outcome whose items are words, as JSON shows it and a saved plan holds it. */
export type WordedOutcome = PlanOutcome & {
  pending: (OutcomeItem & { text: string })[];
  kept: (OutcomeItem & { text: string })[];
  not_checked: (OutcomeItem & { text: string })[];
};

/** What a plan made with `--base REF` (or `--base-file PATH`) was compared with. */
export interface PlanBase {
  /** The ref or file as given: `origin/main`, `base/cdk.tf.json`. */
  ref: string;
  /** The commit the ref named, when it is a git ref. */
  commit?: string;
  /** Why the comparison could not be made, when it could not: every change then counts as the pull request's. */
  note?: BaseNote | string;
  /** Access changes of this pull request's own changes, made after those already on the base. */
  access_pr?: AccessChanges;
  /** Access changes of the changes already on the base. */
  access_base?: AccessChanges;
}

/** The default limit: `percent` of the live objects, at least `atLeast`. */
export interface LimitDefault {
  code: 'default';
  percent: number;
  atLeast: number;
}

export interface LimitCheck {
  kind: 'delete' | 'update';
  /** The number of objects the plan would delete (cascades included) or update. */
  planned: number;
  /** The largest number allowed, after `--allow-*` overrides. */
  allowed: number;
  /**
   * How the limit was written: `10%`, `25`, `--allow-deletes 40`, or the default as a code
   * (src/views/plan-limits.ts words it `default (25%, at least 5)`, as JSON and saved plans hold it).
   */
  source: string | LimitDefault;
  exceeded: boolean;
}

export interface PlanSummary {
  create: number;
  update: number;
  delete: number;
  replace: number;
  /** Devices and rules deleted with their user (not included in `delete`). */
  cascade: number;
}

/** How the plan was made, so that apply of a saved plan does exactly what was shown. */
export interface PlanSettings {
  prune: boolean;
  replace: boolean;
  rotatePasswords: boolean;
  /** Email of the token's owner, when known. */
  tokenUser: string | null;
}

/** A live object inside the managed scope that no file declares, and what the plan does with it. */
export interface UndeclaredItem {
  kind: ResourceKind;
  key: string;
  liveId: string;
  label: string;
  /** `delete`: the plan deletes it (prune on); `keep`: it stays, with the access it grants. */
  fate: 'delete' | 'keep';
  /** Why (src/views/notes.ts words it: `prune is off: …`, `protected (settings.protect): …`); a saved plan's words. */
  reason: KeptReason;
  /**
   * `apply --reviewed` only: the plan would delete it, but the deletion is withheld, for this
   * reason (src/plan/reviewed.ts); it stays. Never in a saved plan.
   */
  withheld?: WithheldReason;
}

/**
 * A field the plan did not compare with the server: its secret cannot be read where the
 * plan was made (a variable unset or empty, a file missing). Never reported as matching.
 */
export interface NotCheckedField {
  /** The change id the field would belong to: `device:alice@example.com/laptop`. */
  id: string;
  /** `device alice@example.com/laptop`. */
  label: string;
  field: 'preshared_key';
  /** Why: `environment variable ALICE_LAPTOP_PSK is not set`. */
  reason: string;
}

/** How the desired state's access tests (`tests:`) fared against its rules, if it has any; a failure blocks apply. */
export interface PlanTests {
  /**
   * The state the tests were evaluated on (docs/rule-semantics.md §9): `after-apply` (plan, apply:
   * the files' managed part plus every live object apply leaves in place) or `files` (the declared
   * rules alone). Absent from plans saved by older versions (files).
   */
  evaluated?: 'files' | 'after-apply';
  passed: number;
  failed: number;
  /** The failing tests, first in every rendering: where, what was expected, what was got and why. */
  failures: PlanTestFailure[];
}

export interface PlanTestFailure {
  name: string;
  /** `desired/tests.yaml:12`, when known. */
  at?: string;
  from: string;
  to: string;
  expected: 'accept' | 'drop' | 'partial';
  /** `drop`, `no tunnel`, `accept`, `partial`: of the source shown (the first failing one). */
  got: string;
  /** The deciding rule (`drop 10.9.0.0/16 (global) at a.yaml:30, global portless-drop`), or the reason without one. */
  decided_by: string;
  /** The source shown: `alice@example.com/laptop`. */
  source?: string;
  /**
   * When a live rule apply leaves in place decided the failure: that rule
   * (`accept 10.0.0.0/7 (global, outside manage.rules)`), why it stays (`outside-rules`,
   * `outside-users`: outside `manage`; `kept`: in scope, kept by the plan, `reason`) and whether
   * this repository can change it at all.
   */
  because?: {
    rule: string;
    id?: string;
    left: 'kept' | 'outside-rules' | 'outside-users';
    reason?: KeptReason;
    changeable: boolean;
  };
}

/** Something the plan does not change although the files and the server differ, or that it could not check. */
export interface OutcomeItem {
  /**
   * `guard`: a change cancelled for the token's owner or the last admin; `target`: changes `--target`
   * left out; `undeclared`: a live object no file declares, kept; `protected`: a user kept by
   * `settings.protect`; `ignored`: a field that differs, not compared (`ignore_changes`);
   * `not_checked`: a field not compared for want of a secret; `deciding`: a live object no file
   * declares that decides packets inside the managed blocks (src/access/deciding.ts); `acknowledged`:
   * a difference an `acknowledged:` entry keeps until its date (src/plan/lifecycle.ts).
   */
  reason: 'guard' | 'target' | 'undeclared' | 'protected' | 'ignored' | 'not_checked' | 'deciding' | 'acknowledged';
  /** The object's key, as in change ids (`user:alice@example.com`), when it is about one object. */
  id?: string;
  /** What to say, as a code and its values (src/views/plan-outcome.ts words it); a saved plan's words. */
  text: OutcomeText;
  /** `ignored`: the field that differs (`role`, `use_default_mtu`). */
  field?: string;
}

/** What an outcome item says, as a code and the values its words need. */
export type OutcomeWords =
  /** A user `settings.protect` keeps. */
  | { code: 'protected'; label: string }
  /** A live object no file declares, kept (`admin`: a user who is an admin). */
  | { code: 'undeclared'; label: string; admin: boolean }
  /** A deletion or demotion a guard cancelled. */
  | { code: 'guarded'; action: 'delete' | 'demote'; label: string; why: GuardWhy }
  /** Changes `--target` left out. */
  | { code: 'target_left'; count: number }
  /** A user's role that differs and is not managed (`ignore_changes`). */
  | { code: 'role_ignored'; label: string; role: string }
  /** A device's field that differs and is not managed (`ignore_changes`); `value` is the live one. */
  | { code: 'field_ignored'; key: string; field: string; value: unknown }
  /** A difference an `acknowledged:` entry keeps (`name`: the label, and the field unless whole). */
  | { code: 'acknowledged'; name: string; whole: boolean; value?: unknown; until: string; reason: string };

/** An outcome item's words: a code made now, or words (a saved plan's, or another layer's). */
export type OutcomeText = OutcomeWords | string;

/**
 * What the plan amounts to, computed in one place (src/plan/outcome.ts) and read by every format,
 * by the exit codes and by drift:
 * - `changes`: there are changes (exit 2; drift).
 * - `pending`: no change, but the server does not match the files (`pending` lists why; exit 2; drift).
 * - `kept`: no change and nothing pending, but not everything matches or was checked (`kept`,
 *   `not_checked`): exit 0, and never "the server matches".
 * - `matches`: no change, nothing kept and nothing left unchecked.
 */
export interface PlanOutcome {
  status: 'changes' | 'pending' | 'kept' | 'matches';
  pending: OutcomeItem[];
  kept: OutcomeItem[];
  not_checked: OutcomeItem[];
}

export interface Plan {
  format: typeof PLAN_FORMAT;
  /** PLAN_FORMAT_VERSION for a plan made now; a saved plan read may have an earlier version it reads. */
  format_version: PlanFormatVersion;
  created_at: string;
  /** The server the plan was made against (no credentials). */
  server: string;
  /** The desired-state paths it was made from. */
  sources: string[];
  changes: Change[];
  summary: PlanSummary;
  limits: LimitCheck[];
  /**
   * Things a person should know that are not changes: unmanaged objects, detected server quirks.
   * Codes made now (src/plan/warnings.ts), which src/views/plan-warnings.ts words; a saved plan's words.
   */
  warnings: PlanWarning[];
  /**
   * Live objects inside the managed scope that no file declares (a user stands for its devices
   * and rules). Never silent: listed whether prune deletes them or leaves them alone.
   * Absent from plans saved by older versions.
   */
  undeclared?: UndeclaredItem[];
  /** What the plan amounts to (src/plan/outcome.ts); absent from plans saved by older versions (planOutcome derives it). */
  outcome?: PlanOutcome;
  settings?: PlanSettings;
  /** A saved plan's key: its source and id (src/plan/seal.ts). */
  seal_key?: SealKeyInfo;
  /**
   * A saved plan's seal: HMAC-SHA-256 over the canonical JSON of every other member, present or
   * added later (src/plan/seal.ts).
   */
  seal?: string;
  /** Who can reach what after this plan, compared with now (src/access): set by plan and apply. */
  access?: AccessChanges;
  /** `plan --base`: what the plan was compared with (each change then has its `origin`). */
  base?: PlanBase;
  /** `plan --base`: changes of the base's plan that this one does not make (this pull request undoes them). */
  resolved_by_pr?: ResolvedChange[];
  /** Fields not compared with the server because their secret cannot be read here. */
  not_checked?: NotCheckedField[];
  /** The access tests of the desired state, run with the plan on the state after apply; absent without tests. */
  tests?: PlanTests;
  /**
   * Live objects no file declares that decide packets inside the managed blocks after apply
   * (src/access/deciding.ts): a global rule broader than `manage.rules`, a rule left in place that
   * changes a verdict for the repository's users (access drift, whatever `drift.undeclared` says),
   * a user outside `manage.users` reaching in (listed only). Absent when there are none.
   */
  deciding?: DecidingItem[];
  /**
   * `plan --format json` and `-o`: per user and device, what is gained and lost with the deciding
   * rules, and the blast radius (src/access/delta.ts; schemas/access-delta.schema.json). A plan
   * saved by an earlier release holds version 1 (expandAccessDelta reads either).
   */
  access_delta?: AccessDeltaDocument | AccessDeltaV1;
  /** Format version 3: the reviewers this plan's changes need (`settings.owners` of the base), and the pull request approvals count for. */
  owners?: PlanOwners;
  /**
   * Format version 3: the desired state's access tests and what judging them needs, so that a
   * saved plan's apply runs them again on the server as it is then (src/access/saved-tests.ts).
   * Absent without tests.
   */
  access_tests?: PlanAccessTests;
}

/** The access tests a plan carries to its apply, with the settings they are judged under. */
export interface PlanAccessTests {
  tests: { name: string; from: string; to: string; expect: 'accept' | 'drop' | 'partial'; at?: string }[];
  /** `settings.manage` as declared. */
  manage: { users: string[] | null; rules: string[] | null };
  /** Present when declared false. */
  port_rules?: boolean;
  server_addresses?: string[];
}

/** A reviewer a plan needs, and why in words (`gains tcp/5432 to 10.20.0.0/16 for alice@example.com`). */
export interface PlanOwnerRequirement {
  owner: string;
  because: string[];
}

/** Who must approve a plan's changes (src/access/owners.ts), from where, and for which pull request. */
export interface PlanOwners {
  /** Where `settings.owners` was read: `origin/main (0123abcd…)`, or `the files` without --base. */
  from: OwnersSource | string;
  required: PlanOwnerRequirement[];
  /** The pull request reviewed: approvals count only for its head commit, never from its author. */
  pull_request?: { head: string; author: string };
}
