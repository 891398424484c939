/**
 * `netform check no-new-access` and `netform check no-access-to BLOCK[:PORT/PROTO]`: access gates
 * for CI. Exit 0 pass, 1 fail (each grant listed as `who → what` with the rule responsible), 6 when
 * the gate could not be evaluated (result `error`).
 */
import { Option, type Command } from 'commander';
import type { Diagnostic } from '../../model/diagnostic.js';
import {
  checkErrorOutput,
  checkOutput,
  CHECK_FORMATS,
  grantsOf,
  type CheckFormat,
  type CheckName,
  type CheckReport,
} from '../../views/check.js';
import type { CliContext } from '../command.js';
import { CliError, ExitCode, expectedFailure } from '../exit.js';
import { accessSourceOf, addAfterApplyOption, type StateOptions } from '../flags/after-apply.js';
import { addConnectionOptions } from '../flags/connection.js';
import { addNowOption, clockOf } from '../flags/now.js';
import { inputOf, type CliIo } from '../io.js';

interface CheckOptions extends StateOptions {
  file: string;
  format: CheckFormat;
  base?: string;
  except?: string;
}

function common(cmd: Command): Command {
  cmd
    .requiredOption('-f, --file <path>', 'desired state: a YAML file, a folder of YAML files, or a cdk.tf.json')
    .addOption(new Option('--format <format>', 'output format').choices([...CHECK_FORMATS]).default('text'));
  addConnectionOptions(cmd);
  return cmd;
}

/** Runs a gate: its report printed, exit 0 or 1; an expected failure is the result `error` (exit 6). */
async function gate(
  check: CheckName,
  opts: CheckOptions,
  io: CliIo,
  evaluate: (warning: (d: Diagnostic) => void) => Promise<CheckReport>,
): Promise<ExitCode> {
  const { sarifRoot } = await import('../../ops/validate.js');
  const { formatDiagnostic } = await import('../../views/diagnostics.js');
  const { wholeOutput } = await import('../output.js');
  const where = { root: sarifRoot(io.cwd), cwd: io.cwd };
  const warning = (d: Diagnostic) => io.err.write(`warning: ${formatDiagnostic(d)}\n`);
  let report: CheckReport;
  let output: string;
  try {
    report = await evaluate(warning);
    output = wholeOutput('check', () => checkOutput(report, opts.format, where));
  } catch (error) {
    const expected = expectedFailure(error);
    if (!expected) throw error;
    const message = io.secrets.redact(expected.message, [io.env.NETFORM_TOKEN]);
    (opts.format === 'text' ? io.err : io.out).write(checkErrorOutput(check, message, opts.format, where));
    return ExitCode.unevaluated;
  }
  io.out.write(output);
  return report.grants.length === 0 ? ExitCode.ok : ExitCode.error;
}

export function registerCheck(program: Command, cli: CliContext): void {
  const { io } = cli;
  const check = program
    .command('check')
    .description('access gates for CI: exit 0 pass, 1 fail (each grant named with its rule), 6 could not evaluate');
  const noNew = common(
    check
      .command('no-new-access')
      .description(
        'fail when a user or device reaches, after the change, a packet it could not reach before: the files at --base REF against the files now, or with --live the server now against after apply',
      )
      .option(
        '--base <ref>',
        "compare with the same -f path at this git ref (a pull request's base), the declared rules on both sides",
      )
      .option(
        '--live',
        'compare the server as it is now (--url or --embedded) with the server after apply of the files',
      ),
  );
  addNowOption(noNew);
  noNew.action(
    cli.action((opts: CheckOptions) =>
      gate('no-new-access', opts, io, async (warning) => {
        const { noNewAccess } = await import('../../ops/check.js');
        const { comparedText } = await import('../../views/ops-compared.js');
        const { connectorOf, resolveConnection } = await import('../flags/session.js');
        if (opts.base !== undefined && opts.live) throw new CliError('give --base REF or --live, not both');
        const live = opts.live ? connectorOf(resolveConnection(opts, io)) : undefined;
        const { delta, document } = await noNewAccess(
          { file: opts.file, base: opts.base, live, input: inputOf(io, clockOf(io, opts)) },
          { warning },
        );
        const subject = comparedText(delta.compared);
        const grants = grantsOf(delta.entries);
        return { check: 'no-new-access', subject, grants, blastRadius: delta.blast_radius, delta: document };
      }),
    ),
  );
  const noAccess = common(
    check
      .command('no-access-to')
      .argument(
        '<target>',
        'BLOCK (every protocol and port), or BLOCK:PORT/tcp, BLOCK:LOW-HIGH/udp ([BLOCK]:PORT/tcp for IPv6)',
      )
      .description(
        'fail when a user or device outside --except reaches any packet of the target: the declared rules, or --live, or --after-apply',
      )
      .option('--except <users>', 'comma-separated emails or globs (*@ops.example.com) allowed to reach it')
      .option('--live', "evaluate against the server's rules and devices (--url or --embedded)"),
  );
  addAfterApplyOption(noAccess);
  noAccess.action(
    cli.action((target: string, opts: CheckOptions) =>
      gate('no-access-to', opts, io, async (warning) => {
        const { noAccessTo } = await import('../../ops/check.js');
        const except = (opts.except ?? '')
          .split(',')
          .map((u) => u.trim())
          .filter((u) => u !== '');
        const { state, ...source } = accessSourceOf(opts, io);
        const result = await noAccessTo({ ...source, file: opts.file, target, except }, { warning });
        const against = {
          files: 'the declared rules',
          live: 'the server now',
          'after-apply': 'the server after apply',
        }[state];
        return {
          check: 'no-access-to',
          subject: `${result.target.text} (against ${against})`,
          grants: grantsOf(result.reaching),
          except,
        };
      }),
    ),
  );
}
