/**
 * What a plan says besides its changes, for review: the fields it did not compare because
 * their secret cannot be read here ("not checked", never "matches"), and how the desired state's
 * access tests fared (failures first, each with its place, expectation, outcome and deciding rule).
 * Pure; every string from files or servers goes through the escaping helpers.
 */
import { notCheckedLine } from './model-secret.js';
import type { Plan, PlanTestFailure, PlanTests } from '../plan/types.js';
import { inertText, markdownCode } from './escape.js';
import { keptReasonText } from './notes.js';

export function notCheckedLines(plan: Plan): string[] {
  return (plan.not_checked ?? []).map((item) => inertText(notCheckedLine(item)));
}

/**
 * The summary of a plan that changes nothing but left fields uncompared: never "matches".
 * Null when every field was compared.
 */
export function notCheckedSummary(plan: Plan): string | null {
  const count = plan.not_checked?.length ?? 0;
  if (count === 0 || plan.changes.length > 0) return null;
  const fields = count === 1 ? '1 field was' : `${count} fields were`;
  return `No changes in what was compared; ${fields} not checked (their secret cannot be read here).`;
}

/**
 * `Access tests (after apply): all 14 passed.` / `Access tests (after apply): 2 of 14 failed, 12
 * passed.`, naming the state they were evaluated on; null without tests.
 */
export function testsLine(tests: PlanTests | undefined): string | null {
  if (!tests) return null;
  const total = tests.passed + tests.failed;
  const head = `Access tests (${tests.evaluated === 'after-apply' ? 'after apply' : 'files only'})`;
  if (tests.failed === 0) return `${head}: ${total === 1 ? '1 passed' : `all ${total} passed`}.`;
  return `${head}: ${tests.failed} of ${total} failed, ${tests.passed} passed.`;
}

/** `FAIL name at a.yaml:12: from -> to: expected drop, got accept by accept … at a.yaml:3, …`. */
export function failureLine(failure: PlanTestFailure): string {
  const at = failure.at ? ` at ${failure.at}` : '';
  const source = failure.source && failure.source !== failure.from ? ` (from ${failure.source})` : '';
  return (
    `FAIL ${failure.name}${at}: ${failure.from} -> ${failure.to}${source}: ` +
    `expected ${failure.expected}, got ${failure.got}; decided by ${failure.decided_by}${becauseText(failure)}`
  );
}

/**
 * `; fails because of rule accept 10.0.0.0/7 (global, outside manage.rules), which this repository
 * cannot change`: a failure decided by a live rule apply leaves in place.
 */
function becauseText(failure: PlanTestFailure): string {
  const because = failure.because;
  if (!because) return '';
  const head = `; fails because of rule ${because.rule}`;
  if (!because.changeable) return `${head}, which this repository cannot change`;
  return `${head}, which apply leaves in place${because.reason ? ` (${keptReasonText(because.reason)})` : ''}`;
}

/** The text block that opens a plan whose tests fail. */
export function failuresText(tests: PlanTests | undefined): string[] {
  if (!tests || tests.failures.length === 0) return [];
  const noun = tests.failures.length === 1 ? 'access test fails' : 'access tests fail';
  return [
    `${tests.failures.length} ${noun}: this plan cannot be applied (nothing was saved)`,
    ...tests.failures.map((failure) => `  ${inertText(failureLine(failure))}`),
    '',
  ];
}

/** The markdown block that opens a plan comment whose tests fail: a caution, one code span per failure. */
export function failuresMarkdown(tests: PlanTests | undefined): string[] {
  if (!tests || tests.failures.length === 0) return [];
  const noun = tests.failures.length === 1 ? 'access test fails' : 'access tests fail';
  return [
    '> [!CAUTION]',
    `> ${tests.failures.length} ${noun}: this plan cannot be applied.`,
    '',
    ...tests.failures.map((failure) => `- ${markdownCode(failureLine(failure))}`),
    '',
  ];
}

/** Not-checked lines for a markdown comment. */
export function notCheckedMarkdown(plan: Plan): string[] {
  const items = plan.not_checked ?? [];
  if (items.length === 0) return [];
  return ['**Not checked**', '', ...items.map((item) => `- ${markdownCode(notCheckedLine(item))}`), ''];
}
