/**
 * `netform nft -f PATH [--live] [--wg-interface NAME]`: the nftables ruleset a Firezone 0.7.36
 * server installs for the desired state (or with --live for the server's users, devices and
 * rules), in `nft list ruleset` syntax.
 */
import type { Command } from 'commander';
import { DEFAULT_WG_INTERFACE, interfaceNameProblem } from '../../nft/ruleset.js';
import { nftRuleset } from '../../ops/nft.js';
import type { CliContext } from '../command.js';
import { inputOf } from '../io.js';
import { CliError, ExitCode } from '../exit.js';
import { addConnectionOptions, type ConnectionOptions } from '../flags/connection.js';
import { connectorOf, resolveConnection } from '../flags/session.js';

interface NftOptions extends ConnectionOptions {
  file?: string;
  live?: boolean;
  wgInterface: string;
}

export function registerNft(program: Command, cli: CliContext): void {
  const { io } = cli;
  const cmd = program
    .command('nft')
    .description(
      'print the nftables ruleset a Firezone 0.7.36 server installs for the desired state, or with --live for the server; `nft -f` loads it, replacing table inet firezone only',
    )
    .option('-f, --file <path>', 'desired state: a YAML file, a folder of YAML files, or a cdk.tf.json')
    .option(
      '--live',
      "the server's users, devices and rules (--url or --embedded): its user ids and device addresses, so the exact ruleset",
    )
    .option('--wg-interface <name>', "the server's WireGuard interface (filter rules match it)", DEFAULT_WG_INTERFACE);
  addConnectionOptions(cmd);
  cmd.action(
    cli.action(async (opts: NftOptions) => {
      const problem = interfaceNameProblem(opts.wgInterface);
      if (problem) throw new CliError(`--wg-interface: "${opts.wgInterface}" ${problem}`);
      if (!opts.file && !opts.live)
        throw new CliError('give -f PATH (the desired state), or --live with --url/--embedded');
      const connect = opts.live ? connectorOf(resolveConnection(opts, io)) : undefined;
      io.out.write(await nftRuleset({ file: opts.file, connect, wgInterface: opts.wgInterface, input: inputOf(io) }));
      return ExitCode.ok;
    }),
  );
}
