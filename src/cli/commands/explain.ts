/** `netform explain FROM TO`: how one packet is decided, against the declared rules or (`--live`) the server's. */
import { Option, type Command } from 'commander';
import { parseFrom, parseTo } from '../../access/notation.js';
import { explainPacket } from '../../ops/access.js';
import type { Diagnostic } from '../../model/diagnostic.js';
import { explainJson, explainText } from '../../views/access.js';
import { formatDiagnostic } from '../../views/diagnostics.js';
import type { CliContext } from '../command.js';
import { CliError, ExitCode } from '../exit.js';
import { accessSourceOf, addAfterApplyOption, type StateOptions } from '../flags/after-apply.js';
import { addConnectionOptions } from '../flags/connection.js';

interface ExplainOptions extends StateOptions {
  format: 'text' | 'json';
}

export function registerExplain(program: Command, cli: CliContext): void {
  const { io } = cli;
  const cmd = program
    .command('explain <from> <to>')
    .description(
      'how the server decides one packet: FROM is *, EMAIL (each device), EMAIL/DEVICE or EMAIL/* (any device of the user); TO is ADDRESS:PORT/tcp|udp, ADDRESS/icmp, ADDRESS/other (one packet), or ADDRESS or ADDRESS/PREFIX (every protocol and port: accept, drop or partial)',
    )
    .option('-f, --file <path>', 'desired state: a YAML file, a folder of YAML files, or a cdk.tf.json')
    .option('--live', "evaluate against the server's rules and devices (--url or --embedded)")
    .addOption(new Option('--format <format>', 'output format').choices(['text', 'json']).default('text'));
  addAfterApplyOption(cmd);
  addConnectionOptions(cmd);
  cmd.action(
    cli.action(async (fromText: string, toText: string, opts: ExplainOptions) => {
      const from = parseFrom(fromText);
      if (!from.ok) throw new CliError(`FROM ${from.message}`);
      const to = parseTo(toText);
      if (!to.ok) throw new CliError(`TO ${to.message}`);
      if (!opts.file && !opts.live)
        throw new CliError('give -f PATH (the desired state), or --live with --url/--embedded');
      const { state, ...source } = accessSourceOf(opts, io);
      // Secrets are not needed to evaluate rules; one that cannot be read is a warning.
      const warning = (d: Diagnostic) => io.err.write(`warning: ${formatDiagnostic(d)}\n`);
      const decisions = await explainPacket({ ...source, from: from.value, to: to.value }, { warning });
      const shown = opts.format === 'json' ? explainJson : explainText;
      io.out.write(shown(fromText, toText, decisions, state));
      return ExitCode.ok;
    }),
  );
}
