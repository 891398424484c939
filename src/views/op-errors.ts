/**
 * The operations' expected failures in words: an OpError's code and values (src/ops/errors.ts)
 * as the command line prints them after `error: `.
 */
import type { OpError, OpWords } from '../ops/errors.js';
import { emailGlobProblemText } from './model-email.js';
import { fileProblemText } from './model-files.js';
import { instantProblemText } from './model-instant.js';
import { savedPlanRefusalText } from './saved-plan.js';
import { approvalsProblemText } from './plan-approvals.js';
import { planProblemsText } from './plan-problems.js';
import { targetProblemText } from './model-target.js';

/** An OpError's message for people: its words, or another layer's message it passes on. */
export function opErrorText(error: Pick<OpError, 'words' | 'message'>): string {
  return error.words ? opWordsText(error.words) : error.message;
}

/** Any failure's message for people: an OpError's words, another error's message. */
export function failureText(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const words = (error as Partial<Pick<OpError, 'words'>>).words;
  return words ? opWordsText(words) : error.message;
}

const indented = (problems: readonly string[]) => problems.map((p) => `  ${p}`).join('\n');

export function opWordsText(words: OpWords): string {
  switch (words.code) {
    case 'cannot_plan':
      return `cannot plan: ${planProblemsText(words.problems)}`;
    case 'target_refused':
      return targetProblemText(words.problem, words.flag);
    case 'approvals_refused':
      return `--approvals ${approvalsProblemText(words.problem)}`;
    case 'after_apply_needs_files_and_server':
      return '--after-apply needs the desired state (-f) and a server (--url or --embedded)';
    case 'nothing_to_evaluate':
      return 'nothing to evaluate against: give the desired state (file) or a live server';
    case 'review_after_apply_needs_files':
      return '--after-apply needs the desired state (-f): its files are planned against the server';
    case 'field_not_acknowledgeable':
      return `${words.key}: field ${JSON.stringify(words.field)} cannot be acknowledged (a user's role, a device's writable fields, or * for the whole object)`;
    case 'until_not_in_future':
      return `--until ${words.until} is not in the future (now ${words.now})`;
    case 'until_not_an_instant':
      return `--until: ${instantProblemText(words.problem)}`;
    case 'reason_missing':
      return '--reason must say why the difference is kept';
    case 'acknowledge_writes_yaml':
      return `-f ${words.file}: acknowledge writes YAML files: give a file or folder of them`;
    case 'no_such_object':
      return `${words.key}: no such object on the server (netform show lists them)`;
    case 'nothing_differs':
      return `${words.key}${words.field === '*' ? '' : ` ${words.field}`}: nothing differs from the files now: nothing to acknowledge`;
    case 'no_file_for_entry':
      return `-f ${words.file}: no desired-state file to write the entry into`;
    case 'adopt_branch_writes_yaml':
      return '--adopt-branch commits YAML files; for a CDKTF stack, netform adopt prints the constructs to add';
    case 'adopt_objects_or_all_drift':
      return 'give the objects to adopt, or --all-drift for every difference, not both';
    case 'adopt_names_nothing':
      return 'name the objects to adopt (user:EMAIL, device:EMAIL/NAME, rule:KEY, as `netform show` takes them), or give --all-drift';
    case 'adopt_edits_invalid':
      return `adopt's edits would leave the desired state with errors (nothing is written):\n${indented(words.problems)}`;
    case 'adopt_does_not_write':
      return `${words.file} ${words.escape}: adopt does not write it (nothing is written)`;
    case 'adopt_edits_files':
      return 'adopt edits files: give the desired-state file or folder, not -';
    case 'desired_state_errors':
      return `the desired state${words.at !== undefined ? ` at ${words.at}` : ''} has errors:\n${indented(words.problems)}`;
    case 'show_configuration':
      return 'show prints users, devices and rules; netform export writes the configuration';
    case 'server_has_no':
      return `the server has no ${words.keys.map((k) => (k.near ? `${k.key} (did you mean ${k.near}?)` : k.key)).join(', ')}`;
    case 'embedded_token_refused':
      return `the embedded token: ${words.path} ${fileProblemText(words.problem)}`;
    case 'embedded_token_unreadable':
      return `the embedded token: cannot read ${words.path} (${fileProblemText(words.problem)})`;
    case 'approvals_unreadable':
      return `--approvals ${words.path}: ${fileProblemText(words.problem)}`;
    case 'server_unreadable':
      return `cannot read the server's state: ${words.problem}`;
    case 'check_base_or_live':
      return 'give --base REF (the files at a git ref) or --live (the server as it is now), one of them';
    case 'except_glob_unusable':
      return `--except ${words.glob}: ${emailGlobProblemText(words.problem)}`;
    case 'output_too_large':
      return OUTPUT_TOO_LARGE[words.output];
    case 'export_folder_not_created':
      return `-o: cannot create the folder ${words.dir} (${words.error})`;
    case 'export_files_exist': {
      const { names, dir } = words;
      const shown = names.slice(0, 5).join(', ') + (names.length > 5 ? ` and ${names.length - 5} more` : '');
      return `-o: ${shown} already exist(s) in ${dir}; nothing was written. Pass --force to overwrite, or choose an empty folder`;
    }
    case 'migrate_needs_source':
      return 'give -f DIR (the desired state), --url (the live server), or both (the state after apply)';
    case 'migrate_portal_refuses':
      return `the 1.x portal would refuse ${words.count} emitted resource(s): ${words.problems.join('; ')}`;
    case 'base_file_missing':
      return `--base-file ${words.file}: no such file or folder`;
    case 'tests_fail_after_apply':
      return `${words.count} access test${words.count === 1 ? '' : 's'} failed on the server as it would be after apply; nothing was written:`;
    case 'saved_plan_elsewhere':
      return `the saved plan was made against ${words.planned}, not ${words.server}; plan again against this server`;
    case 'reviewed_plan_elsewhere':
      return `the reviewed plan was made against ${words.reviewed}, not ${words.server}; nothing was changed`;
    case 'saved_plan_applied':
      return `this saved plan was already applied to ${words.server} ${words.at !== null ? `on ${words.at}` : 'before'}, and a saved plan is applied once; plan again (netform plan -o), then apply the new plan. Nothing was changed`;
    case 'saved_plan_refused':
      return savedPlanRefusalText(words.refusal);
    case 'saved_plan_secrets_unreadable':
      return `the saved plan's secrets cannot be read here; nothing was changed:\n${words.problems.map((p) => `  - ${p}`).join('\n')}`;
  }
}

/** Output longer than a JavaScript string can be (about 512 M characters): what was too large, and what to do. */
const OUTPUT_TOO_LARGE = {
  plan_json:
    'the JSON plan is too large to write (longer than a JavaScript string can be); nothing was written: plan part of the change at a time (fewer users, devices or rules), or read it with `netform plan` or `--format markdown`, which leave out the access delta',
  saved_plan:
    'the saved plan is too large to write (longer than a JavaScript string can be); nothing was written: save a plan of part of the change at a time (fewer users, devices or rules), or apply with `apply -f` without a saved plan',
  check:
    "the check's output is too large to write (longer than a JavaScript string can be): check part of the change at a time (fewer users, devices or rules), or use `--format text`, which leaves out the access delta",
} as const;
