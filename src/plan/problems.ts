/**
 * Why a plan cannot be made (PlanError.problems), as codes and the values their words need: the
 * planner records them, and src/views/plan-problems.ts words them. `at`: where in the files the
 * object at fault is declared (`teams/a.yaml:12`), when known.
 */
import type { SecretRef } from '../model/secret.js';

/** Why a change sends a secret (what it is about to do with it). */
export type SecretSend =
  | { send: 'user_created'; email: string }
  | { send: 'password_rotated'; email: string }
  | { send: 'device_created'; key: string }
  | { send: 'device_replaced'; key: string }
  | { send: 'psk_changed'; key: string };

export type ProblemWords =
  /** `--token-user` names no user on the server. */
  | { code: 'token_user_unknown'; given: string }
  /** `--token-user` names a user who is not an admin. */
  | { code: 'token_user_not_admin'; given: string }
  /** A user or device both declared and listed under `absent`. */
  | { code: 'declared_and_absent'; kind: 'user' | 'device'; name: string }
  /** A secret a change sends cannot be read (`unreadable`: why), or the server would refuse it (`invalid`). */
  | ({ code: 'secret_unsendable'; at?: string; ref: SecretRef } & SecretSend &
      ({ unreadable: string } | { invalid: string }))
  /** Several live objects share one key. */
  | { code: 'duplicate_key'; kind: 'user' | 'device' | 'rule'; count: number; key: string }
  /** A user's `renamed_from` names a live user, and the new email is on the server too. */
  | { code: 'rename_both_live'; at?: string; email: string; from: string; live: string; old: string }
  /** A user's `renamed_from` names a user the files also declare. */
  | { code: 'rename_from_declared'; at?: string; email: string; from: string }
  /** A device's `renamed_from` names a live device, and the new name is on the server too. */
  | { code: 'device_rename_both_live'; at?: string; name: string; owner: string; from: string }
  /** A new user whose devices' keys a live user no file declares holds: the same person, renamed? */
  | { code: 'rename_hint'; at?: string; email: string; owner: string; inScope: boolean }
  /** A change needs a value (a public key, an address) a live device holds and keeps. */
  | { code: 'value_held'; label: string; field: string; value: string; holder: string; movedFrom?: string }
  /** A rule overlaps a live rule no file declares that the plan keeps. */
  | { code: 'rule_overlaps'; label: string; live: string; prune: boolean }
  /** A pinned tunnel address the server would refuse: a server address, or outside the network. */
  | { code: 'pin_refused'; label: string; field: string; address: string; network?: string }
  /** The new devices do not fit in the declared tunnel networks. */
  | { code: 'network_full'; missing: NetworkShortfall[] }
  /** The desired state declares a configuration, and the live state was read without one. */
  | { code: 'configuration_unread' };

/** One family's shortfall: `missing` addresses for `wanted` new devices, `free` left in `network`. */
export interface NetworkShortfall {
  field: 'ipv4' | 'ipv6';
  missing: string;
  wanted: number;
  free: string;
  network: string;
}

/** A problem: a code, or words another layer gave. */
export type PlanProblem = ProblemWords | string;
