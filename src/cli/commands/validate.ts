/**
 * `netform validate -f PATH`: every offline check of the desired state, the access tests included
 * (they run on the declared rules): no server and no secret needed.
 */
import { Option, type Command } from 'commander';
import type { ValidationFormat } from '../../views/diagnostics.js';
import type { CliContext } from '../command.js';
import { inputOf } from '../io.js';
import { ExitCode } from '../exit.js';
import { addNowOption, clockOf } from '../flags/now.js';

export function registerValidate(program: Command, cli: CliContext): void {
  const { io } = cli;
  const cmd = program
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
    );
  addNowOption(cmd).action(
    cli.action(async (options: { file: string; format: ValidationFormat; now?: string }) => {
      const { displayPath } = await import('../../desired/files.js');
      const { sarifRoot, validateDesired } = await import('../../ops/validate.js');
      const { failedTestDiagnostics } = await import('../../views/access.js');
      const { validationOutput } = await import('../../views/diagnostics.js');
      const { sarifOutput, validationFindings } = await import('../../views/sarif.js');
      const result = await validateDesired({ file: options.file, input: inputOf(io, clockOf(io, options)) });
      if (options.format === 'sarif') {
        const cwd = io.cwd;
        io.out.write(sarifOutput(validationFindings(result), { root: sarifRoot(cwd), cwd }));
      } else {
        const input = displayPath(options.file);
        const names = { input, valid: options.file === '-' ? 'stdin' : input };
        // A failing access test is an error at its test: validation fails.
        const errors = [...result.errors, ...failedTestDiagnostics(result.tests)];
        for (const { stream, text } of validationOutput({ ...result, errors }, options.format, names))
          io[stream === 'stdout' ? 'out' : 'err'].write(text);
      }
      return result.ok ? ExitCode.ok : ExitCode.error;
    }),
  );
}
