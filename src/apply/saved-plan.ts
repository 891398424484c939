/**
 * The secrets of a saved plan, read again where it is applied: its document was read and checked
 * by src/plan/planfile.ts; here each secret it sends is read and compared with the HMAC the plan
 * holds (src/plan/seal.ts), so the value sent is the one the plan was made with.
 */
import { describeSecretRef, type SecretRef } from '../model/secret.js';
import { sameHmac, type PlanKey } from '../plan/seal.js';
import type { Plan, PlanSecret } from '../plan/types.js';

/** A secret as apply reads it again: its value, or why it cannot be read (safe to print). */
export type SecretReading = { value: string } | { problem: string };

export interface SavedPlanSecrets {
  /** The value of each secret reference of the plan that was read and matches: apply sends these. */
  values: Map<SecretRef, string>;
  /** Secrets that cannot be read here (apply refuses, exit 1). */
  unreadable: string[];
  /** Secrets whose value differs from the one the plan was made with (stale, exit 4). */
  changed: string[];
  /** How many secrets were not pinned when the plan was made (`pinned: false`): read now, and sent as read. */
  unpinned: number;
}

/**
 * Reads every secret a saved plan will send (with `read`: within the repository apply runs in) and
 * compares each with the HMAC the plan holds. A secret that changed since the plan makes its change
 * stale, as a changed live object does; the values that match are the ones to send, read once. An
 * unpinned one (`pinned: false`) has no HMAC to compare: `check` tells whether the server would
 * take it (a problem in words, or null).
 */
export function readSavedPlanSecrets(
  plan: Plan,
  key: PlanKey,
  read: (ref: SecretRef) => SecretReading,
  check: (field: PlanSecret['field'], value: string) => string | null = () => null,
): SavedPlanSecrets {
  const result: SavedPlanSecrets = { values: new Map(), unreadable: [], changed: [], unpinned: 0 };
  for (const change of plan.changes) {
    const { label } = change;
    for (const secret of change.secrets ?? []) {
      // Where the reference is declared comes first, as in every message about a secret.
      const where = `${secret.at ? `${secret.at}: ` : ''}${label}: its ${secret.field}`;
      const reading = read(secret.ref);
      if ('problem' in reading) {
        result.unreadable.push(`${where}: ${reading.problem}`);
        continue;
      }
      // Unpinned (format version 3): not read when the plan was made, so checked and sent as read now.
      const pinned = secret.pinned !== false;
      if (!pinned) {
        result.unpinned += 1;
        const problem = check(secret.field, reading.value);
        if (problem !== null) {
          result.unreadable.push(`${where} ${problem} (${describeSecretRef(secret.ref)})`);
          continue;
        }
      }
      if (pinned && !sameHmac(secret.hmac, key.secretHmac(change.id, secret.field, reading.value))) {
        result.changed.push(
          `${label}: its ${secret.field} (${describeSecretRef(secret.ref)}) changed since the plan was made`,
        );
        continue;
      }
      result.values.set(secret.ref, reading.value);
    }
  }
  return result;
}
