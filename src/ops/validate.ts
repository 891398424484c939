/**
 * Validation as an operation: every offline check of the desired state, the access tests included
 * (they run on the declared rules): no server and no secret needed.
 */
import { resolve } from 'node:path';
import { accessModelOfDesired } from '../access/model.js';
import { shadowedRuleWarnings } from '../access/shadow.js';
import { portRuleWarnings } from '../access/test-checks.js';
import { noSourceWarnings, runAccessTests, type TestResult } from '../access/tests.js';
import { repositoryRootOf } from '../desired/containment.js';
import { pastExpiryWarnings } from '../desired/expiry.js';
import { countDeclarations, type Diagnostic } from '../desired/index.js';
import { loaderFor, type DesiredInput } from './desired.js';

export interface Validation {
  /** No error and no failing access test. */
  ok: boolean;
  errors: Diagnostic[];
  warnings: Diagnostic[];
  /** Every access test's result against the declared rules (when the files are valid); a failing one is an error. */
  tests: TestResult[];
  /** What the files declare (when they are valid). */
  counts?: { users: number; devices: number; rules: number };
}

export async function validateDesired(request: { file: string; input?: DesiredInput }): Promise<Validation> {
  // Secrets are not read; one that cannot be read here is a warning (a fork's pull request has no secrets).
  const result = await loaderFor(request.input)(request.file);
  const warnings = [
    ...(result.warnings ?? []),
    ...(result.ok
      ? [...portRuleWarnings(result.state), ...shadowedRuleWarnings(result.state), ...pastExpiryWarnings(result.state)]
      : []),
  ];
  if (!result.ok) return { ok: false, errors: result.diagnostics, warnings, tests: [] };
  // The access tests run offline, on the declared rules: a failing one is an error at its line.
  const declared = result.state.tests ?? [];
  const tests = declared.length > 0 ? runAccessTests(accessModelOfDesired(result.state), declared) : [];
  return {
    // A `*` test with no declared device is a warning here: `test` and `plan` fail it.
    ok: tests.every((r) => r.pass || r.noSource),
    errors: [],
    warnings: [...warnings, ...noSourceWarnings(tests)],
    tests,
    counts: countDeclarations(result.state),
  };
}

/** The folder SARIF URIs are relative to: the git work tree holding `cwd`, or `cwd` outside git. */
export function sarifRoot(cwd: string): string {
  return repositoryRootOf(cwd) ?? resolve(cwd);
}
