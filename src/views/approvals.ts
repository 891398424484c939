/**
 * The reviewers a plan needs (`settings.owners`), in words: `approval needed from @org/db-team
 * (gains tcp/5432 to 10.20.0.0/16 for alice@example.com)`, and what `apply --reviewed` says when
 * approvals are missing. Pure functions of the data.
 */
import type { Plan, PlanOwners } from '../plan/types.js';
import { inertText, markdownCode, markdownText } from './escape.js';
import { ownersSourceText } from './ops-plan.js';

function neededLine(
  owner: string,
  because: readonly string[],
  code: (s: string) => string,
  text: (s: string) => string,
): string {
  return `approval needed from ${code(owner)}${because.length > 0 ? ` (${because.map(text).join('; ')})` : ''}`;
}

/** Text lines (with a blank line after), or none when the plan needs no reviewer. */
export function approvalsText(plan: Plan): string[] {
  const owners = plan.owners;
  if (!owners || owners.required.length === 0) return [];
  return [
    `Approvals (settings.owners of ${inertText(ownersSourceText(owners.from))}):`,
    ...owners.required.map((r) => `  ${neededLine(r.owner, r.because, inertText, inertText)}`),
    '',
  ];
}

/** The pull-request comment's lines: a callout listing each reviewer needed and why. */
export function approvalsMarkdown(plan: Plan): string[] {
  const owners = plan.owners;
  if (!owners || owners.required.length === 0) return [];
  return [
    '> [!IMPORTANT]',
    `> Approvals (\`settings.owners\` of ${markdownCode(ownersSourceText(owners.from))}):`,
    ...owners.required.map((r) => `> - ${neededLine(r.owner, r.because, markdownCode, markdownText)}`),
    '',
  ];
}

/** What apply says when changes were withheld for want of approvals: who is missing, and what counts. */
export function missingApprovalsText(
  missing: readonly string[],
  pullRequest: PlanOwners['pull_request'],
  given: boolean,
): string {
  const who = missing.map(inertText).join(', ');
  const why = !pullRequest
    ? 'the reviewed plan names no pull request (plan with --pr-head SHA --pr-author LOGIN), so no approval counts'
    : !given
      ? 'no --approvals FILE was given'
      : `an approval counts for commit ${inertText(pullRequest.head.slice(0, 12))} only, never from ${inertText(pullRequest.author)} (the author), and only for the teams it lists`;
  return `approval missing from ${who}: the changes that need it were withheld (${why})\n`;
}
