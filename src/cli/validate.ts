/** `netform validate -f PATH`: every offline check of the desired state, no server needed. */
import { Option, type Command } from 'commander';
import { countDeclarations, displayPath, formatDiagnostic, loadDesiredState, type Diagnostic } from '../desired/index.js';
import { action, ExitCode } from './exit.js';

type Format = 'text' | 'github' | 'json';

/** GitHub Actions workflow-command escaping: data and property values differ. */
function escapeData(text: string): string {
  return text.replace(/%/g, '%25').replace(/\r/g, '%0D').replace(/\n/g, '%0A');
}

function escapeProperty(text: string): string {
  return escapeData(text).replace(/:/g, '%3A').replace(/,/g, '%2C');
}

export function githubAnnotation(d: Diagnostic): string {
  const properties = [
    d.file !== undefined ? `file=${escapeProperty(d.file)}` : undefined,
    d.line !== undefined ? `line=${d.line}` : undefined,
    d.column !== undefined ? `col=${d.column}` : undefined,
  ].filter((p) => p !== undefined);
  const message = d.path ? `${d.path}: ${d.message}` : d.message;
  return `::error${properties.length > 0 ? ` ${properties.join(',')}` : ''}::${escapeData(message)}`;
}

function plural(count: number, word: string): string {
  return `${count} ${word}${count === 1 ? '' : 's'}`;
}

export function registerValidate(program: Command): void {
  program
    .command('validate')
    .description('Check the desired state offline: file format, the server\'s field rules, duplicates, overlapping rules, scope, secrets.')
    .requiredOption('-f, --file <path>', 'a YAML file, a folder of *.yaml/*.yml files, or a cdk.tf.json (or its folder)')
    .addOption(new Option('--format <format>', 'output format').choices(['text', 'github', 'json']).default('text'))
    .action(
      action(async (options: { file: string; format: Format }) => {
        const result = await loadDesiredState(options.file);
        const diagnostics = result.ok ? [] : result.diagnostics;
        if (options.format === 'json') {
          process.stdout.write(`${JSON.stringify(diagnostics, null, 2)}\n`);
        } else if (options.format === 'github') {
          for (const d of diagnostics) process.stdout.write(`${githubAnnotation(d)}\n`);
        } else {
          for (const d of diagnostics) process.stderr.write(`${formatDiagnostic(d)}\n`);
        }
        if (!result.ok) {
          if (options.format !== 'json') process.stderr.write(`${plural(diagnostics.length, 'error')} in ${displayPath(options.file)}\n`);
          return ExitCode.error;
        }
        if (options.format !== 'json') {
          const counts = countDeclarations(result.state);
          process.stdout.write(
            `${displayPath(options.file)} is valid: ${plural(counts.users, 'user')}, ${plural(counts.devices, 'device')}, ${plural(counts.rules, 'rule')}\n`,
          );
        }
        return ExitCode.ok;
      }),
    );
}
