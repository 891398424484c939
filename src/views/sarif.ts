/**
 * SARIF 2.1.0 (OASIS) logs of `validate --format sarif` and `test --format sarif`, for code
 * scanning: each problem a result at the YAML file and line it is about, the file's URI relative to
 * the repository root (the git work tree, or the working directory outside git). A synthesized
 * CDKTF stack (`cdk.tf.json`) is usually not committed: its results carry no location, and their
 * message names the Terraform address. Pure: the caller gives the root (ops/validate.ts sarifRoot)
 * and the working directory; messages are made inert (escape.ts): SARIF viewers show them as text.
 */
import { basename, isAbsolute, relative, resolve, sep } from 'node:path';
import type { Diagnostic } from '../model/diagnostic.js';
import type { TestResult } from '../access/tests.js';
import { describeDecision, failedTestDiagnostics, sourceName } from './access.js';
import { NETFORM_VERSION } from '../version.js';
import { inertText, jsonDocument } from './escape.js';

/** A synthesized CDKTF stack's file name (src/desired/files.ts CDKTF_STACK_FILE). */
const CDKTF_STACK_FILE = 'cdk.tf.json';

export const SARIF_SCHEMA = 'https://json.schemastore.org/sarif-2.1.0.json';
export const SARIF_VERSION = '2.1.0';

/** The kinds of result netform reports, one SARIF rule each. */
export const SARIF_RULES = {
  'desired-state/error': 'The desired state has an error: plan and apply refuse it.',
  'desired-state/warning': 'The desired state has something to look at (a secret not at hand, a shadowed rule, …).',
  'access-test/failed': 'An access test (tests:) does not hold against the rules.',
  'access-gate/new-access':
    'A user or device reaches packets after the change that it could not reach before (netform check no-new-access).',
  'access-gate/forbidden-access':
    'A user or device reaches a block a standing invariant keeps closed (netform check no-access-to).',
  'access-gate/error': 'An access gate could not be evaluated (netform check).',
} as const;
export type SarifRuleId = keyof typeof SARIF_RULES;

export interface SarifFinding {
  ruleId: SarifRuleId;
  level: 'error' | 'warning' | 'note';
  message: string;
  /** As the diagnostics name it: relative to the working directory, or absolute. */
  file?: string;
  line?: number;
  column?: number;
}

/**
 * A relative URI reference for `file` (each segment percent-encoded), or null when the file lies
 * outside `root` or is a synthesized CDKTF stack.
 */
export function sarifUri(file: string, root: string, cwd: string): string | null {
  if (basename(file) === CDKTF_STACK_FILE) return null;
  const rel = relative(root, resolve(cwd, file));
  if (rel === '' || rel === '..' || rel.startsWith(`..${sep}`) || isAbsolute(rel)) return null;
  return rel.split(sep).map(encodeURIComponent).join('/');
}

/** Desired-state errors and warnings as findings; the message keeps the path in the document. */
export function findingsOfDiagnostics(
  errors: readonly Diagnostic[],
  warnings: readonly Diagnostic[] = [],
): SarifFinding[] {
  const of = (d: Diagnostic, level: 'error' | 'warning', ruleId: SarifRuleId): SarifFinding => ({
    ruleId,
    level,
    message: d.path ? `${d.path}: ${d.message}` : d.message,
    ...(d.file !== undefined ? { file: d.file } : {}),
    ...(d.line !== undefined ? { line: d.line } : {}),
    ...(d.column !== undefined ? { column: d.column } : {}),
  });
  return [
    ...errors.map((d) => of(d, 'error', 'desired-state/error')),
    ...warnings.map((d) => of(d, 'warning', 'desired-state/warning')),
  ];
}

/** Failing access tests as findings at the test's `name:` line. */
export function findingsOfTests(results: readonly TestResult[]): SarifFinding[] {
  return results
    .filter((r) => !r.pass)
    .map((r) => {
      const { test } = r;
      const shown = r.shown;
      const got =
        r.error ?? (shown ? `got ${describeDecision(shown.decision)} (from ${sourceName(shown)})` : 'no source');
      return {
        ruleId: 'access-test/failed' as const,
        level: 'error' as const,
        message: `access test "${test.name}" fails: ${test.from} -> ${test.to}, expected ${test.expect}, ${got}`,
        ...(test.source ? { file: test.source.file, line: test.source.line, column: test.source.column } : {}),
      };
    });
}

export interface SarifTool {
  name: string;
  version: string;
  informationUri?: string;
}

/** A SARIF 2.1.0 log of one run. */
export function sarifLog(
  tool: SarifTool,
  findings: readonly SarifFinding[],
  root: string,
  cwd: string,
): Record<string, unknown> {
  const ids = Object.keys(SARIF_RULES) as SarifRuleId[];
  const results = findings.map((finding) => {
    const uri = finding.file !== undefined ? sarifUri(finding.file, root, cwd) : null;
    const region =
      finding.line !== undefined && finding.line >= 1
        ? {
            startLine: finding.line,
            ...(finding.column !== undefined && finding.column >= 1 ? { startColumn: finding.column } : {}),
          }
        : undefined;
    return {
      ruleId: finding.ruleId,
      ruleIndex: ids.indexOf(finding.ruleId),
      level: finding.level,
      message: { text: inertText(finding.message) },
      ...(uri !== null
        ? { locations: [{ physicalLocation: { artifactLocation: { uri }, ...(region ? { region } : {}) } }] }
        : {}),
    };
  });
  return {
    $schema: SARIF_SCHEMA,
    version: SARIF_VERSION,
    runs: [
      {
        tool: {
          driver: {
            name: tool.name,
            version: tool.version,
            ...(tool.informationUri ? { informationUri: tool.informationUri } : {}),
            rules: ids.map((id) => ({ id, shortDescription: { text: SARIF_RULES[id] } })),
          },
        },
        results,
      },
    ],
  };
}

/** The SARIF log `validate` and `test` write with `--format sarif`, as JSON text. */
export function sarifOutput(findings: readonly SarifFinding[], where: { root: string; cwd: string }): string {
  const log = sarifLog({ name: 'netform', version: NETFORM_VERSION }, findings, where.root, where.cwd);
  return jsonDocument(log);
}

/** `validate --format sarif`: the desired state's errors and warnings, then its failing access tests. */
export function validationFindings(result: {
  errors: readonly Diagnostic[];
  warnings: readonly Diagnostic[];
  tests: readonly TestResult[];
}): SarifFinding[] {
  return [
    ...findingsOfDiagnostics(result.errors, result.warnings),
    ...findingsOfDiagnostics(failedTestDiagnostics(result.tests)).map((f) => ({
      ...f,
      ruleId: 'access-test/failed' as const,
    })),
  ];
}
