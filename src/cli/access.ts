/**
 * `netform test -f PATH` runs the access tests of a desired state, offline against its declared
 * rules, or with `--live` against the rules and devices of a server. `netform explain FROM TO`
 * shows how one packet is decided. Plan and apply run the tests first (refuseFailingTests).
 */
import { Option, type Command } from 'commander';
import {
  accessModelOfDesired,
  accessModelOfLive,
  accessSettingsOf,
  CompiledRules,
  evaluateFrom,
  parseFrom,
  parseTo,
  runAccessTests,
  type AccessModel,
} from '../access/index.js';
import { explainJson, explainText, testLine, testResultsJson, testResultsText } from '../views/access.js';
import type { DesiredState } from '../model/state.js';
import { addConnectionOptions, openConnection, readLiveState, type ConnectionOptions } from './connection.js';
import { action } from './boundary.js';
import { CliError, ExitCode } from './exit.js';
import { loadDesired } from './plan.js';

interface AccessOptions extends ConnectionOptions {
  file?: string;
  live?: boolean;
  format: 'text' | 'json' | 'github';
}

/** The access model to evaluate against: the declared one, or with --live the server's. */
async function modelFor(opts: AccessOptions, desired: DesiredState | undefined): Promise<AccessModel> {
  if (!opts.live) {
    if (!desired) throw new CliError('give -f PATH (the desired state), or --live with --url/--embedded');
    return accessModelOfDesired(desired);
  }
  const connection = await openConnection(opts);
  try {
    const live = await readLiveState(connection);
    return accessModelOfLive(live, desired ? accessSettingsOf(desired) : undefined);
  } finally {
    await connection.close();
  }
}

/** Plan and apply refuse (exit 1, nothing written) when an access test of the desired state fails. */
export function refuseFailingTests(state: DesiredState): void {
  if (!state.tests || state.tests.length === 0) return;
  const failed = runAccessTests(accessModelOfDesired(state), state.tests).filter((r) => !r.pass);
  if (failed.length === 0) return;
  const lines = failed.map(
    (r) => `  ${r.test.source ? `${r.test.source.file}:${r.test.source.line}: ` : ''}${testLine(r)}`,
  );
  throw new CliError(
    `${failed.length} access test${failed.length === 1 ? '' : 's'} failed; nothing was planned or written:\n${lines.join('\n')}`,
  );
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
    action(async (opts: AccessOptions & { file: string }) => {
      const { state } = await loadDesired(opts.file);
      const tests = state.tests ?? [];
      const results = runAccessTests(await modelFor(opts, state), tests);
      const failed = results.filter((r) => !r.pass).length;
      process.stdout.write(
        opts.format === 'json'
          ? testResultsJson(results)
          : testResultsText(results, { github: opts.format === 'github', live: opts.live === true }),
      );
      return failed > 0 ? ExitCode.error : ExitCode.ok;
    }),
  );
}

export function registerExplain(program: Command): void {
  const cmd = program
    .command('explain <from> <to>')
    .description(
      'how the server decides one packet: FROM is *, EMAIL or EMAIL/DEVICE; TO is ADDRESS:PORT/tcp|udp, ADDRESS/icmp or ADDRESS',
    )
    .option('-f, --file <path>', 'desired state: a YAML file, a folder of YAML files, or a cdk.tf.json')
    .option('--live', "evaluate against the server's rules and devices (--url or --embedded)")
    .addOption(new Option('--format <format>', 'output format').choices(['text', 'json']).default('text'));
  addConnectionOptions(cmd);
  cmd.action(
    action(async (fromText: string, toText: string, opts: AccessOptions) => {
      const from = parseFrom(fromText);
      if (!from.ok) throw new CliError(`FROM ${from.message}`);
      const to = parseTo(toText);
      if (!to.ok) throw new CliError(`TO ${to.message}`);
      if (!opts.file && !opts.live)
        throw new CliError('give -f PATH (the desired state), or --live with --url/--embedded');
      const desired = opts.file ? (await loadDesired(opts.file)).state : undefined;
      const model = await modelFor(opts, desired);
      const evaluated = evaluateFrom(model, new CompiledRules(model), from.value, to.value, true);
      if (!evaluated.ok) throw new CliError(evaluated.message);
      process.stdout.write(
        opts.format === 'json'
          ? explainJson(fromText, toText, evaluated.value)
          : explainText(fromText, toText, evaluated.value),
      );
      return ExitCode.ok;
    }),
  );
}
