/**
 * What `netform apply` asks and says around an apply: the confirmation on a terminal, where a
 * saved plan's secrets are read, and each outcome in words with its exit code.
 */
import { otherPendingText } from '../views/expiry.js';
import { createInterface } from 'node:readline/promises';
import type { SecretRef } from '../model/secret.js';
import { resolveSecret, SecretResolutionError, workingContainment } from '../desired/secrets.js';
import type { ReviewedOutcome } from '../ops/apply.js';
import type { Plan } from '../plan/types.js';
import * as say from '../views/apply.js';
import { missingApprovalsText } from '../views/approvals.js';
import { CliError, ExitCode } from './exit.js';
import type { CliIo } from './io.js';

export function exitCodeOf(signal: unknown): ExitCode {
  return signal === 'SIGINT' ? ExitCode.interrupted : ExitCode.terminated;
}

/** Asks on the terminal; without one, refuses. */
export async function confirm(plan: Plan, server: string, io: CliIo): Promise<boolean> {
  if (!io.isTTY.in) {
    throw new CliError(
      'refusing to apply without confirmation: there is no terminal to ask on; pass --yes to apply unattended, or apply a saved plan (netform plan -o FILE, then netform apply FILE)',
    );
  }
  const rl = createInterface({ input: io.in, output: io.err });
  const answer = await rl.question(say.confirmQuestion(plan.changes.length, server));
  rl.close();
  return answer.trim() === 'yes';
}

/** A saved plan's secret, read within the repository apply runs in (never a folder the plan names). */
export function readSecret(ref: SecretRef, io: Pick<CliIo, 'env'>): { value: string } | { problem: string } {
  try {
    return { value: resolveSecret(ref, io.env, { within: workingContainment() }) };
  } catch (error) {
    if (!(error instanceof SecretResolutionError)) throw error;
    return { problem: error.message };
  }
}

/**
 * What the outcome says, and its exit code: 5 when all went well but changes were withheld as not
 * reviewed. `logged`: the changes whose outcome line the progress already wrote (said once).
 */
export function outcomeCode(
  outcome: ReviewedOutcome,
  io: CliIo,
  color: boolean,
  logged?: ReadonlySet<string>,
): ExitCode {
  const code = writtenCode(outcome, io, color, logged);
  // --expired-only: the expiries were written; what else is pending was not (exit 2).
  if (outcome.otherPending?.length) {
    io.err.write(otherPendingText(outcome.otherPending));
    return code === ExitCode.ok ? ExitCode.changes : code;
  }
  if (!outcome.withheld) return code;
  const missing = outcome.missingApprovals;
  if (missing) io.err.write(missingApprovalsText(missing.owners, missing.pullRequest, missing.given));
  io.err.write(say.withheldLine(outcome.withheld, missing !== undefined));
  return code === ExitCode.ok ? ExitCode.unreviewed : code;
}

function writtenCode(outcome: ReviewedOutcome, io: CliIo, color: boolean, logged?: ReadonlySet<string>): ExitCode {
  if (outcome.status === 'no-changes') return ExitCode.ok;
  if (outcome.status === 'refused')
    return (io.err.write(say.refusedText(outcome.overLimit, outcome.nowManaged, outcome.plan)), ExitCode.refused);
  if (outcome.status === 'stale') return (io.err.write(say.staleText(outcome.stale, outcome.cause)), ExitCode.stale);
  if (outcome.status === 'cancelled') return (io.err.write(say.CANCELLED), ExitCode.error);
  const { summary, stoppedBy } = outcome;
  io.out.write(`\n${say.renderApplySummary(summary, { color, ...(logged ? { logged } : {}) })}`);
  if (stoppedBy !== null) {
    io.err.write(say.unfinishedLine(summary, String(stoppedBy)));
    // Writes still in flight after the wait are abandoned, not waited for again.
    if (outcome.abandoned) io.exit(exitCodeOf(stoppedBy));
    return exitCodeOf(stoppedBy);
  }
  if (summary.failed > 0 || summary.notAttempted > 0) {
    io.err.write(say.unfinishedLine(summary, null));
    return ExitCode.error;
  }
  return ExitCode.ok;
}
