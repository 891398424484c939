/**
 * The `tests:` of a desired state: their offline checks (notation, declared users and devices)
 * and running them against an access model (the declared rules, or a live server's).
 */
import { userKey } from '../model/keys.js';
import { parseIpAddress } from '../model/net.js';
import type { DesiredRule, DesiredState, DesiredTest, DesiredUser, SourceLocation } from '../model/state.js';
import type { Diagnostic } from '../desired/types.js';
import { describeMatch } from '../views/model-rule.js';
import type { PlanTestFailure, PlanTests } from '../plan/types.js';
import { CompiledRules, type Decision } from './evaluate.js';
import type { AfterApplyRule, StateAfterApply } from './after-apply.js';
import { leftRuleText, repositoryCanChange } from './deciding.js';
import type { AccessModel } from './model.js';
import { evaluateFrom, parseFrom, parseTo, type SourceDecision } from './notation.js';
import type { ReachPiece } from './partition.js';

function at(
  source: SourceLocation | undefined,
  field: string | undefined,
  fallback: string,
  message: string,
): Diagnostic {
  const where = (field ? source?.fields?.[field] : undefined) ?? source;
  const path = where?.path ?? (field ? `${fallback}.${field}` : fallback);
  return where ? { file: where.file, line: where.line, column: where.column, path, message } : { path, message };
}

/** The checks `validate` runs on `tests:` and on the evaluator's settings. */
export function checkAccessTests(state: DesiredState): Diagnostic[] {
  const diagnostics: Diagnostic[] = [];
  (state.settings.server_addresses ?? []).forEach((address, i) => {
    if (!parseIpAddress(address)) {
      diagnostics.push(
        at(state.settings.source, `server_addresses[${i}]`, 'settings', 'must be an IP address such as 10.3.2.1'),
      );
    }
  });
  const tests = state.tests ?? [];
  // Only when there are tests to check: a fleet's desired state declares tens of thousands of users.
  const users = new Map<string, DesiredUser>(tests.length > 0 ? state.users.map((u) => [userKey(u.email), u]) : []);
  const names = new Map<string, DesiredTest>();
  tests.forEach((test, i) => {
    const fallback = `tests[${i}]`;
    const from = parseFrom(test.from);
    if (!from.ok) diagnostics.push(at(test.source, 'from', fallback, from.message));
    else if (from.value.kind !== 'everyone') {
      // EMAIL/* needs the user only: a policy test needs no device.
      const user = users.get(from.value.user);
      if (!user) diagnostics.push(at(test.source, 'from', fallback, `no user ${from.value.user} is declared`));
      else if (
        from.value.kind === 'device' &&
        !user.devices.some((d) => d.name === (from.value as { device: string }).device)
      ) {
        diagnostics.push(
          at(test.source, 'from', fallback, `user ${from.value.user} declares no device named ${from.value.device}`),
        );
      }
    }
    const to = parseTo(test.to);
    if (!to.ok) diagnostics.push(at(test.source, 'to', fallback, to.message));
    const first = names.get(test.name);
    if (first) {
      const there = first.source ? ` (first at ${first.source.file}:${first.source.line})` : '';
      diagnostics.push(
        at(
          test.source,
          'name',
          fallback,
          `another test has the name "${test.name}"${there}; give each test its own name`,
        ),
      );
    } else names.set(test.name, test);
  });
  return diagnostics;
}

/**
 * With `settings.port_rules: false`, every declared rule with ports: a 0.7.36 server on a kernel
 * without port-rule support stores it without them (docs/rule-semantics.md §5.1.1), so it matches every protocol and
 * port. Warnings of `validate` and `plan`; tests, explain and access changes evaluate it so.
 */
export function portRuleWarnings(state: DesiredState): Diagnostic[] {
  if (state.settings.port_rules !== false) return [];
  const warnings: Diagnostic[] = [];
  const scopes: [string, readonly DesiredRule[]][] = [
    ...state.users.map((u, i): [string, DesiredRule[]] => [`users[${i}].rules`, u.rules]),
    ['rules', state.rules],
  ];
  for (const [path, rules] of scopes) {
    rules.forEach((rule, i) => {
      if (rule.port_type === null) return;
      const ports = `${rule.port_type} ${rule.port_range ?? ''}`.trim();
      const verb = rule.action === 'accept' ? 'accepts' : 'drops';
      warnings.push(
        at(
          rule.source,
          'port_type',
          `${path}[${i}]`,
          `settings.port_rules is false: a 0.7.36 server on a kernel without port-rule support stores this rule ` +
            `without its ports (${ports}), so it ${verb} every protocol and port to ${rule.destination}; ` +
            'tests, explain and access changes evaluate it so. Declare it without port_type and port_range to say what the server does',
        ),
      );
    });
  }
  return warnings;
}

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
      at(
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
