/**
 * Why a plan cannot be made, in words (the codes are src/plan/problems.ts's): one problem as it
 * is, several as a list under their count.
 */
import { describeSecretRef } from '../model/secret.js';
import type { NetworkShortfall, PlanProblem, ProblemWords, SecretSend } from '../plan/problems.js';

const plural = (count: number | string, one: string, many: string) => (String(count) === '1' ? one : many);

/** `teams/a.yaml:12: `, or nothing when the place is not known. */
const where = (at: string | undefined) => (at !== undefined ? `${at}: ` : '');

function sendText(send: SecretSend): string {
  switch (send.send) {
    case 'user_created':
      return `user ${send.email} is created with its password`;
    case 'password_rotated':
      return `--rotate-passwords sends the password of user ${send.email}`;
    case 'device_created':
      return `device ${send.key} is created with its preshared key`;
    case 'device_replaced':
      return `device ${send.key} is replaced, and created again with its preshared key`;
    case 'psk_changed':
      return `device ${send.key} gets a new preshared key`;
  }
}

function shortfallText(s: NetworkShortfall): string {
  return (
    `${s.missing} ${s.field} address${plural(s.missing, '', 'es')} missing: ` +
    `${s.wanted} new device${plural(s.wanted, '', 's')} without a pinned ${s.field}, ` +
    `${s.free} free in ${s.network} (settings.tunnel_networks.${s.field})`
  );
}

/** The hint to write `renamed_from`, among the problems or the warnings. */
export function renameHintText(hint: Extract<ProblemWords, { code: 'rename_hint' }>): string {
  return (
    `${where(hint.at)}user ${hint.email} is new, and its devices' public keys are held by ${hint.owner}, which no file declares: ` +
    `if it is ${hint.owner} renamed, write renamed_from: ${hint.owner} under it (one update of its email; its devices and rules stay)` +
    (hint.inScope ? '' : `, and widen settings.manage.users to include ${hint.owner}`) +
    ', not a delete and a create'
  );
}

export function planProblemText(problem: PlanProblem): string {
  if (typeof problem === 'string') return problem;
  switch (problem.code) {
    case 'token_user_unknown':
      return `--token-user/NETFORM_TOKEN_USER ${problem.given} names no user on the server; give the email of the admin the API token belongs to`;
    case 'token_user_not_admin':
      return `--token-user/NETFORM_TOKEN_USER ${problem.given} is not an admin on the server, so the API token cannot be its; give the email of the admin the token belongs to`;
    case 'declared_and_absent':
      return `${problem.kind} ${problem.name} is both declared and listed under absent`;
    case 'secret_unsendable': {
      const why = `${where(problem.at)}${sendText(problem)}`;
      return 'unreadable' in problem
        ? `${why}, and ${problem.unreadable}`
        : `${why}, and it ${problem.invalid} (${describeSecretRef(problem.ref)})`;
    }
    case 'duplicate_key':
      return `the server holds ${problem.count} ${problem.kind}s with the key ${problem.key}; netform will not guess which one is meant: remove the extra ones by hand`;
    case 'rename_both_live':
      return `${where(problem.at)}user ${problem.email} has renamed_from: ${problem.from}, but both ${problem.live} and ${problem.old} exist on the server; delete one of them or remove renamed_from`;
    case 'rename_from_declared':
      return `${where(problem.at)}user ${problem.email} has renamed_from: ${problem.from}, which the files also declare`;
    case 'device_rename_both_live':
      return `${where(problem.at)}device ${problem.name} of ${problem.owner} has renamed_from: ${problem.from}, but both devices exist on the server; delete one of them or remove renamed_from`;
    case 'rename_hint':
      return renameHintText(problem);
    case 'value_held':
      return (
        `${problem.label} needs ${problem.field} ${problem.value}, which the live ${problem.holder} holds, and the plan neither deletes nor changes it: ` +
        (problem.movedFrom !== undefined
          ? `if ${problem.movedFrom} was renamed, give the new user \`renamed_from: ${problem.movedFrom}\` (or turn prune on to move the device)`
          : `free it on ${problem.holder} first, or give ${problem.label} another ${problem.field}`)
      );
    case 'rule_overlaps':
      return `${problem.label} overlaps the live rule ${problem.live} (same owner and action), which no file declares and the plan does not delete${problem.prune ? ' (outside settings.manage)' : ' (prune is off)'}: the server would refuse it; declare or delete that rule, or change this one`;
    case 'pin_refused': {
      const why =
        problem.network === undefined
          ? 'a server address'
          : `outside settings.tunnel_networks.${problem.field} (${problem.network})`;
      return `${problem.label} pins ${problem.field} ${problem.address}, which is ${why}: the server would refuse it`;
    }
    case 'network_full':
      return `the new devices do not fit in the tunnel network: ${problem.missing.map(shortfallText).join('; ')}. Delete devices, pin fewer addresses, or widen the server's network (and settings.tunnel_networks)`;
    case 'configuration_unread':
      return 'the live state holds no configuration although the desired state declares one';
  }
}

/** A PlanError's problems in words: `2 problems:` and one a line when there are several. */
export function planProblemsText(problems: readonly PlanProblem[]): string {
  const lines = problems.map(planProblemText);
  return lines.length === 1 ? lines[0]! : `${lines.length} problems:\n${lines.map((p) => `  - ${p}`).join('\n')}`;
}
