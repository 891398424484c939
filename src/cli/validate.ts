/**
 * `netform validate -f PATH`: every offline check of the desired state, the access tests included
 * (W3.6), no server and no secret needed.
 */
import { Option, type Command } from 'commander';
import {
  countDeclarations,
  displayPath,
  formatDiagnostic,
  loadDesiredState,
  type Diagnostic,
} from '../desired/index.js';
import { shadowedRuleWarnings } from '../access/shadow.js';
import { failingTestDiagnostics, portRuleWarnings } from '../access/tests.js';
import { findingsOfDiagnostics, netformVersion, sarifLog } from '../sarif/index.js';
import { action } from './boundary.js';
import { ExitCode } from './exit.js';
import { githubData, githubProperty, inertText } from '../render/escape.js';

type Format = 'text' | 'github' | 'json' | 'sarif';

/**
 * A `--format github` annotation: message and properties escaped as GitHub documents (`%25`, `%0D`,
 * `%0A`, and `%3A`, `%2C` in properties), then every other control character shown as `\u` escape.
 */
export function githubAnnotation(d: Diagnostic, level: 'error' | 'warning' = 'error'): string {
  const properties = [
    d.file !== undefined ? `file=${inertText(githubProperty(d.file))}` : undefined,
    d.line !== undefined ? `line=${d.line}` : undefined,
    d.column !== undefined ? `col=${d.column}` : undefined,
  ].filter((p) => p !== undefined);
  const message = d.path ? `${d.path}: ${d.message}` : d.message;
  return `::${level}${properties.length > 0 ? ` ${properties.join(',')}` : ''}::${inertText(githubData(message))}`;
}

function plural(count: number, word: string): string {
  return `${count} ${word}${count === 1 ? '' : 's'}`;
}

export function registerValidate(program: Command): void {
  program
    .command('validate')
    .description(
      "Check the desired state offline: file format, the server's field rules, duplicates, overlapping rules, scope, secrets, and the access tests.",
    )
    .requiredOption(
      '-f, --file <path>',
      'a YAML file, a folder of *.yaml/*.yml files, a cdk.tf.json (or its folder), or - for a YAML stream on stdin',
    )
    .addOption(
      new Option('--format <format>', 'output format').choices(['text', 'github', 'json', 'sarif']).default('text'),
    )
    .action(
      action(async (options: { file: string; format: Format }) => {
        // Secrets are not read; one that cannot be read here is a warning (forks get no secrets: W3.6).
        const result = await loadDesiredState(options.file);
        // The access tests run offline (W3.6): a failing one is an error at its line.
        const failedTests = result.ok ? failingTestDiagnostics(result.state) : [];
        const diagnostics = result.ok ? failedTests : result.diagnostics;
        const warnings = [
          ...(result.warnings ?? []),
          ...(result.ok ? [...portRuleWarnings(result.state), ...shadowedRuleWarnings(result.state)] : []),
        ];
        if (options.format === 'sarif') {
          const findings = [
            ...findingsOfDiagnostics(result.ok ? [] : diagnostics, warnings),
            ...findingsOfDiagnostics(failedTests).map((f) => ({ ...f, ruleId: 'access-test/failed' as const })),
          ];
          process.stdout.write(
            `${JSON.stringify(sarifLog({ name: 'netform', version: netformVersion() }, findings), null, 2)}\n`,
          );
        } else if (options.format === 'json') {
          const entries = [
            ...diagnostics.map((d) => ({ ...d, severity: 'error' })),
            ...warnings.map((d) => ({ ...d, severity: 'warning' })),
          ];
          process.stdout.write(`${JSON.stringify(entries, null, 2)}\n`);
        } else if (options.format === 'github') {
          for (const d of diagnostics) process.stdout.write(`${githubAnnotation(d)}\n`);
          for (const d of warnings) process.stdout.write(`${githubAnnotation(d, 'warning')}\n`);
        } else {
          for (const d of diagnostics) process.stderr.write(`${formatDiagnostic(d)}\n`);
          for (const d of warnings) process.stderr.write(`warning: ${formatDiagnostic(d)}\n`);
        }
        const machine = options.format === 'json' || options.format === 'sarif';
        if (diagnostics.length > 0) {
          if (!machine)
            process.stderr.write(`${plural(diagnostics.length, 'error')} in ${displayPath(options.file)}\n`);
          return ExitCode.error;
        }
        if (!machine && result.ok) {
          const counts = countDeclarations(result.state);
          const shown = options.file === '-' ? 'stdin' : displayPath(options.file);
          const warned = warnings.length > 0 ? ` (${plural(warnings.length, 'warning')})` : '';
          process.stdout.write(
            `${shown} is valid${warned}: ${plural(counts.users, 'user')}, ${plural(counts.devices, 'device')}, ${plural(counts.rules, 'rule')}\n`,
          );
        }
        return ExitCode.ok;
      }),
    );
}
