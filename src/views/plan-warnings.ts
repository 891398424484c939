/**
 * The plan's warnings in words (the codes are src/plan/warnings.ts's), and why a guard kept a
 * user. A warning read from a saved plan is already words and is shown as it is.
 */
import type { EntrySource, GuardWhy, PlanWarning } from '../plan/warnings.js';
import { renameHintText } from './plan-problems.js';

/** Why a guard keeps a user's deletion or demotion out of the plan. */
export function guardWhyText(why: GuardWhy): string {
  switch (why) {
    case 'protected':
      return 'it is protected (settings.protect)';
    case 'token_owner':
      return 'the API token in use belongs to it';
    case 'owner_unknown':
      return "it is an admin and the token's owner is unknown; pass --token-user EMAIL (or NETFORM_TOKEN_USER) to allow deleting other admins";
    case 'last_admin':
      return 'it would leave the server without an admin';
  }
}

/** `not deleting user alice@example.com: it is protected (settings.protect)`. */
export function guardedText(action: 'delete' | 'demote', label: string, why: GuardWhy): string {
  return `not ${action === 'delete' ? 'deleting' : 'demoting'} ${label}: ${guardWhyText(why)}`;
}

/** ` (teams/platform.yaml:12)`, or nothing when the entry's place is not known. */
function at(source: EntrySource | undefined): string {
  return source ? ` (${source.file}:${source.line})` : '';
}

/** A warning in words. */
export function warningText(warning: PlanWarning): string {
  if (typeof warning === 'string') return warning;
  switch (warning.code) {
    case 'guarded':
      return guardedText(warning.action, warning.label, warning.why);
    case 'forget_unmatched':
      return `forget: ${warning.key} matches nothing on the server${at(warning.source)}`;
    case 'forgotten':
      return `${warning.label}: forgotten: stays on the server, no longer managed`;
    case 'acknowledged_unmatched':
      return `acknowledged: ${warning.what} matches nothing on the server${at(warning.source)}`;
    case 'acknowledgement_expired':
      return `${warning.name}: acknowledgement expired ${warning.until} (${warning.reason}): ordinary drift again`;
    case 'acknowledged_changed':
      return `${warning.name}: changed on the server since it was acknowledged until ${warning.until} (${warning.reason}): ordinary drift`;
    case 'acknowledged_declared':
      return `acknowledged: ${warning.what}: a file declares this rule as it is: nothing to acknowledge${at(warning.source)}`;
    case 'acknowledged_field_undeclared':
      return `acknowledged: ${warning.what}: no file declares ${warning.key}; acknowledge it as a whole ("*")${at(warning.source)}`;
    case 'acknowledged_unused':
      return `acknowledged: ${warning.what} matches nothing: it does not differ from the files${at(warning.source)}`;
    case 'target_limited':
      return `limited by --target ${warning.targets.join(', ')}: ${warning.left} other change(s) are left out of this plan; a run without --target makes them`;
    case 'target_unmatched': {
      const hint = warning.near !== undefined ? ` (did you mean ${warning.near}?)` : '';
      return `--target ${warning.target}: no change is planned for it (already as declared, or not a key of these files)${hint}`;
    }
    case 'rename_hint':
      return renameHintText(warning);
    case 'network_unchecked': {
      const { wanted, field } = warning;
      return `${wanted} new device${wanted === 1 ? '' : 's'} need${wanted === 1 ? 's' : ''} an ${field} address, but the live devices sit in ${warning.network}, which has ${warning.free} free: if that is the server's tunnel network, apply will fail with "CIDR … is exhausted". Declare settings.tunnel_networks.${field} so that plan can check`;
    }
  }
}
