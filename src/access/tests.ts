/**
 * The `tests:` of a desired state: their offline checks (notation, declared users and devices)
 * and running them against an access model (the declared rules, or a live server's).
 */
import type { DesiredState, DesiredTest } from '../model/state.js';
import type { Diagnostic } from '../desired/types.js';
import { describeMatch } from '../views/model-rule.js';
import type { PlanTestFailure, PlanTests } from '../plan/types.js';
import { CompiledRules, type Decision } from './evaluate.js';
import type { AfterApplyRule, StateAfterApply } from './after-apply.js';
import { leftRuleText, repositoryCanChange } from './deciding.js';
import type { AccessModel } from './model.js';
import { evaluateFrom, parseFrom, parseTo, type SourceDecision } from './notation.js';
import type { ReachPiece } from './partition.js';
import { diagnosticAt } from './test-checks.js';

// The offline checks live beside the notation they need (what reading the files loads).
export { checkAccessTests, portRuleWarnings } from './test-checks.js';

export interface TestResult {
  test: DesiredTest;
  pass: boolean;
  /** The verdict of every source (each device of each user `from` names). */
  decisions: SourceDecision[];
  /** The source shown: the first that fails, or the first. */
  shown?: SourceDecision;
  /** Set when the test could not be evaluated (a user or device unknown to the model, no source). */
  error?: string;
  /** `from: "*"` with no device to test from: the test fails, and `validate` warns (offline, devices may be registered later). */
  noSource?: true;
  /** With `from: "*"`: users without a device, not sources there (a note, never a failure). */
  withoutDevice?: string[];
}

export type Expectation = DesiredTest['expect'];

/**
 * Whether a decision meets the expectation: `accept` when every packet gets through, `drop` when
 * none does (dropped, or no tunnel), `partial` when some do and some do not.
 */
export function satisfies(decision: Decision, expect: Expectation): boolean {
  if (expect === 'accept') return decision.verdict === 'accept';
  if (expect === 'partial') return decision.verdict === 'partial';
  return decision.verdict === 'drop' || decision.verdict === 'no tunnel';
}

export function runAccessTests(model: AccessModel, tests: readonly DesiredTest[]): TestResult[] {
  const rules = new CompiledRules(model);
  return tests.map((test) => {
    const from = parseFrom(test.from);
    const to = parseTo(test.to);
    if (!from.ok) return { test, pass: false, decisions: [], error: `from: ${from.message}` };
    if (!to.ok) return { test, pass: false, decisions: [], error: `to: ${to.message}` };
    const evaluated = evaluateFrom(model, rules, from.value, to.value);
    if (!evaluated.ok)
      return {
        test,
        pass: false,
        decisions: [],
        error: evaluated.message,
        ...('noSource' in evaluated ? { noSource: true as const } : {}),
      };
    const { decisions, withoutDevice } = evaluated.value;
    const failing = decisions.find((d) => !satisfies(d.decision, test.expect));
    return {
      test,
      pass: failing === undefined,
      decisions,
      shown: failing ?? decisions[0],
      ...(withoutDevice.length > 0 ? { withoutDevice } : {}),
    };
  });
}

/** `alice@example.com/laptop`, `alice@example.com/*` (any device), or the user alone (no device). */
function sourceName(source: SourceDecision): string {
  return `${source.user}${source.device ? `/${source.device}` : ''}`;
}

/**
 * `validate`'s warning for each test whose `from: "*"` names no device (no declared user has one):
 * `test` and `plan` fail it; offline, devices registered on the server are not known yet.
 */
export function noSourceWarnings(results: readonly TestResult[]): Diagnostic[] {
  return results
    .map((result, i) => ({ result, i }))
    .filter(({ result }) => result.noSource)
    .map(({ result, i }) =>
      diagnosticAt(
        result.test.source,
        'from',
        `tests[${i}]`,
        `test "${result.test.name}": ${result.error ?? ''}; no declared user has a device, so "*" names no source and the test fails in test and plan`,
      ),
    );
}

/** `accepted by accept 10.1.0.0/16 tcp 1 - 65534 (global) at a.yaml:2, …; dropped by drop 0.0.0.0/0 (global) at a.yaml:3, …`: the rules of a decision in parts. */
function partsSummary(parts: readonly ReachPiece[]): string {
  const byRule = (verdict: 'accept' | 'drop') =>
    parts
      .filter((p) => p.verdict === verdict)
      .map((p) => (p.match ? describeMatch(p.match) : p.by === 'server' ? "the server's own address" : 'default'));
  const accepted = byRule('accept');
  const dropped = byRule('drop');
  const words: string[] = [];
  if (accepted.length > 0) words.push(`accepted by ${accepted.join('; ')}`);
  if (dropped.length > 0) words.push(`dropped by ${dropped.join('; ')}`);
  return words.join('; ');
}

/** One failing test as a plan shows it: where, expected, got, and the deciding rule or reason. */
export function testFailureSummary(result: TestResult): PlanTestFailure {
  const { test } = result;
  const shown = result.shown;
  const decision = shown?.decision;
  return {
    name: test.name,
    ...(test.source ? { at: `${test.source.file}:${test.source.line}` } : {}),
    from: test.from,
    to: test.to,
    expected: test.expect,
    got: result.error ? 'error' : (decision?.verdict ?? 'nothing (no source to evaluate)'),
    decided_by: result.error
      ? result.error
      : decision?.decidedBy
        ? describeMatch(decision.decidedBy)
        : decision?.parts
          ? partsSummary(decision.parts)
          : (decision?.reason ?? 'no source to evaluate'),
    ...(shown ? { source: sourceName(shown) } : {}),
    ...(leftCause(result) ? { because: leftCause(result) } : {}),
  };
}

/**
 * The desired state's tests run against the state after apply (after-apply.ts), as a plan carries
 * them: a failure decided by a live rule apply leaves in place names it (`because`). Undefined
 * without tests.
 */
export function afterApplyTestsSummary(state: DesiredState, after: StateAfterApply): PlanTests | undefined {
  const tests = state.tests ?? [];
  if (tests.length === 0) return undefined;
  return testsSummary(runAccessTests(after.repositoryModel(), tests), 'after-apply');
}

function testsSummary(results: readonly TestResult[], evaluated: PlanTests['evaluated']): PlanTests {
  const failures = results.filter((r) => !r.pass).map(testFailureSummary);
  return { evaluated, passed: results.length - failures.length, failed: failures.length, failures };
}

/** The live rule apply leaves in place that decided a failing test, when one did. */
function leftCause(result: TestResult): PlanTestFailure['because'] {
  const rule = result.shown?.decision.decidedBy?.rule as AfterApplyRule | undefined;
  if (!rule?.left) return undefined;
  return {
    rule: leftRuleText(rule),
    ...(rule.id ? { id: rule.id } : {}),
    left: rule.left.kind,
    ...(rule.left.reason ? { reason: rule.left.reason } : {}),
    changeable: repositoryCanChange(rule.left),
  };
}
