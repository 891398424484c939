/**
 * Approvals routed by impact. `plan --pr-head SHA --pr-author LOGIN` records the pull request
 * reviewed in the sealed plan (default: NETFORM_PR_HEAD and NETFORM_PR_AUTHOR, else the GitHub
 * event of a `pull_request` workflow run); `apply --reviewed --approvals FILE --base REF` reads
 * the approvals and where `settings.owners` is read at merge.
 */
import type { Command } from 'commander';
import { DESIRED_STATE_MAX_BYTES, readBoundedFileSync, sizeLimit } from '../../model/files.js';
import { handleProblem } from '../../model/owners.js';
import type { PullRequest } from '../../ops/owners.js';
import type { Approval } from '../../plan/approvals.js';
import { inertText } from '../../views/escape.js';
import { CliError } from '../exit.js';
import type { CliIo } from '../io.js';

export interface PullRequestOptions {
  prHead?: string;
  prAuthor?: string;
}

export function addPullRequestOptions(cmd: Command): Command {
  return cmd
    .option(
      '--pr-head <sha>',
      "the pull request's head commit, recorded in the saved plan: approvals count for it only (default: NETFORM_PR_HEAD, or the GitHub pull_request event)",
    )
    .option(
      '--pr-author <login>',
      "the pull request's author, recorded in the saved plan: their approval never counts (default: NETFORM_PR_AUTHOR, or the GitHub event)",
    );
}

/** The pull request of a GitHub `pull_request` workflow run, from its event file; undefined elsewhere. */
function fromGithubEvent(io: CliIo): Partial<PullRequest> {
  const path = io.env.GITHUB_EVENT_PATH;
  // Only the event of a pull_request (or pull_request_target) run names the pull request reviewed.
  if (!path || !io.env.GITHUB_EVENT_NAME?.startsWith('pull_request')) return {};
  try {
    const event = JSON.parse(
      readBoundedFileSync(path, sizeLimit(DESIRED_STATE_MAX_BYTES, 'github_event')).toString('utf8'),
    );
    const pr = event?.pull_request;
    return { head: pr?.head?.sha, author: pr?.user?.login };
  } catch {
    return {};
  }
}

const FULL_HASH = /^[0-9a-f]{40}([0-9a-f]{24})?$/i;
const isLogin = (text: unknown): text is string =>
  typeof text === 'string' && handleProblem(text) === null && !text.includes('/');

/**
 * The pull request reviewed: flags, else NETFORM_PR_HEAD and NETFORM_PR_AUTHOR (both checked), else
 * the GitHub event of a pull_request run (used only when both are well formed); none without any.
 */
export function pullRequestOf(opts: PullRequestOptions, io: CliIo): PullRequest | undefined {
  const head = opts.prHead ?? io.env.NETFORM_PR_HEAD;
  const author = opts.prAuthor ?? io.env.NETFORM_PR_AUTHOR;
  if (head === undefined && author === undefined) {
    const event = fromGithubEvent(io);
    return typeof event.head === 'string' && FULL_HASH.test(event.head) && isLogin(event.author)
      ? { head: event.head, author: event.author }
      : undefined;
  }
  if (head === undefined || !FULL_HASH.test(head))
    throw new CliError(
      `--pr-head: expected the pull request's head commit, a full hash (got ${inertText(head ?? 'nothing')})`,
    );
  if (!isLogin(author))
    throw new CliError(`--pr-author: expected the pull request author's login (got ${inertText(author ?? 'nothing')})`);
  return { head, author: author.replace(/^@/, '') };
}

export interface ApprovalOptions {
  file?: string;
  reviewed?: string;
  approvals?: string;
  base?: string;
}

export function addApprovalOptions(cmd: Command): Command {
  return cmd
    .option(
      '--approvals <file>',
      'with --reviewed: the pull request\'s approvals, [{ "login", "teams", "commit" }]; changes that need a reviewer (settings.owners) without one are withheld (exit 5)',
    )
    .option(
      '--base <ref>',
      'with --reviewed: read settings.owners at this git ref (at merge: HEAD^1, the first parent of the merge commit)',
    );
}

/** `--reviewed`'s companions, checked and read before anything is opened (the approvals' reader loaded only then). */
export async function approvalsRequest(
  opts: ApprovalOptions,
): Promise<{ approvals?: Approval[]; ownersBase?: { ref: string } }> {
  if (opts.reviewed && !opts.file)
    throw new CliError(
      '--reviewed goes with -f PATH: the files are planned again and only the reviewed changes are written',
    );
  if ((opts.approvals !== undefined || opts.base !== undefined) && !opts.reviewed)
    throw new CliError('--approvals and --base go with -f PATH --reviewed PLANFILE');
  const readApprovals = async (path: string) => (await import('../../ops/owners.js')).readApprovals(path);
  return {
    ...(opts.approvals !== undefined ? { approvals: await readApprovals(opts.approvals) } : {}),
    ...(opts.base !== undefined ? { ownersBase: { ref: opts.base } } : {}),
  };
}
