/**
 * `netform test -f PATH` runs the access tests of a desired state, offline against its declared
 * rules, or with `--live` against the rules and devices of a server.
 */
import { Option, type Command } from 'commander';
import { runTests } from '../../ops/access.js';
import { testResultsJson, testResultsText } from '../../views/access.js';
import { action } from '../boundary.js';
import { ExitCode } from '../exit.js';
import { addConnectionOptions, connectorOf, type ConnectionOptions } from '../flags/connection.js';

interface TestOptions extends ConnectionOptions {
  file: string;
  live?: boolean;
  format: 'text' | 'json' | 'github';
}

export function registerTest(program: Command): void {
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
    .addOption(new Option('--format <format>', 'output format').choices(['text', 'json', 'github']).default('text'));
  addConnectionOptions(cmd);
  cmd.action(
    action(async (opts: TestOptions) => {
      const results = await runTests({ file: opts.file, live: opts.live ? connectorOf(opts) : undefined });
      process.stdout.write(
        opts.format === 'json'
          ? testResultsJson(results)
          : testResultsText(results, { github: opts.format === 'github', live: opts.live === true }),
      );
      return results.some((r) => !r.pass) ? ExitCode.error : ExitCode.ok;
    }),
  );
}
