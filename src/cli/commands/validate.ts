/** `netform validate -f PATH`: every offline check of the desired state, no server needed. */
import { Option, type Command } from 'commander';
import { displayPath } from '../../ops/desired.js';
import { validateDesired } from '../../ops/validate.js';
import { validationOutput, type ValidationFormat } from '../../views/diagnostics.js';
import { action } from '../boundary.js';
import { ExitCode } from '../exit.js';

export function registerValidate(program: Command): void {
  program
    .command('validate')
    .description(
      "Check the desired state offline: file format, the server's field rules, duplicates, overlapping rules, scope, secrets.",
    )
    .requiredOption(
      '-f, --file <path>',
      'a YAML file, a folder of *.yaml/*.yml files, a cdk.tf.json (or its folder), or - for a YAML stream on stdin',
    )
    .addOption(new Option('--format <format>', 'output format').choices(['text', 'github', 'json']).default('text'))
    .action(
      action(async (options: { file: string; format: ValidationFormat }) => {
        const result = await validateDesired({ file: options.file });
        const input = displayPath(options.file);
        const names = { input, valid: options.file === '-' ? 'stdin' : input };
        for (const { stream, text } of validationOutput(result, options.format, names)) process[stream].write(text);
        return result.ok ? ExitCode.ok : ExitCode.error;
      }),
    );
}
