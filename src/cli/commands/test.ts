/**
 * `netform test -f PATH` runs the access tests of a desired state, offline against its declared
 * rules, or with `--live` against the rules and devices of a server.
 */
import { Option, type Command } from 'commander';
import { runTests } from '../../ops/access.js';
import { sarifRoot } from '../../ops/validate.js';
import type { Diagnostic } from '../../model/diagnostic.js';
import { testResultsJson, testResultsText } from '../../views/access.js';
import { formatDiagnostic } from '../../views/diagnostics.js';
import { findingsOfDiagnostics, findingsOfTests, sarifOutput } from '../../views/sarif.js';
import type { CliContext } from '../command.js';
import { ExitCode } from '../exit.js';
import { accessSourceOf, addAfterApplyOption, type StateOptions } from '../flags/after-apply.js';
import { addConnectionOptions } from '../flags/connection.js';

interface TestOptions extends StateOptions {
  file: string;
  format: 'text' | 'json' | 'github' | 'sarif';
}

export function registerTest(program: Command, cli: CliContext): void {
  const { io } = cli;
  const cmd = program
    .command('test')
    .description(
      'run the access tests (tests:) of the desired state against its rules, or with --live against the server; exit 0 all pass, 1 otherwise',
    )
    .requiredOption('-f, --file <path>', 'desired state: a YAML file, a folder of YAML files, or a cdk.tf.json')
    .option(
      '--live',
      "evaluate against the server's rules and devices (--url or --embedded) instead of the declared ones",
    )
    .addOption(
      new Option('--format <format>', 'output format').choices(['text', 'json', 'github', 'sarif']).default('text'),
    );
  addAfterApplyOption(cmd);
  addConnectionOptions(cmd);
  cmd.action(
    cli.action(async (opts: TestOptions) => {
      // Secrets are not needed to evaluate rules; one that cannot be read is a warning.
      const warnings: Diagnostic[] = [];
      const { state, ...source } = accessSourceOf(opts, io);
      const results = await runTests({ ...source, file: opts.file }, { warning: (d) => warnings.push(d) });
      if (opts.format === 'sarif') {
        const cwd = io.cwd;
        const findings = [...findingsOfTests(results), ...findingsOfDiagnostics([], warnings)];
        io.out.write(sarifOutput(findings, { root: sarifRoot(cwd), cwd }));
      } else {
        for (const warning of warnings) io.err.write(`warning: ${formatDiagnostic(warning)}\n`);
        io.out.write(
          opts.format === 'json'
            ? testResultsJson(results)
            : testResultsText(results, { github: opts.format === 'github', state }),
        );
      }
      return results.some((r) => !r.pass) ? ExitCode.error : ExitCode.ok;
    }),
  );
}
