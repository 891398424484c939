/**
 * `netform nft -f PATH [--live] [--wg-interface NAME]`: the nftables ruleset a Firezone 0.7.36
 * server installs for the desired state (or with --live for the server's users, devices and
 * rules), in `nft list ruleset` syntax. The ruleset itself is src/nft/ruleset.ts.
 */
import type { Command } from 'commander';
import { displayPath, loadDesiredState } from '../desired/index.js';
import type { DesiredState } from '../model/state.js';
import {
  DEFAULT_WG_INTERFACE,
  interfaceNameProblem,
  nftStateOfDesired,
  nftStateOfLive,
  renderRuleset,
} from '../nft/ruleset.js';
import { addConnectionOptions, openConnection, readLiveState, type ConnectionOptions } from './connection.js';
import { action } from './boundary.js';
import { CliError, ExitCode } from './exit.js';
import { loadDesired } from './plan.js';

interface NftOptions extends ConnectionOptions {
  file?: string;
  live?: boolean;
  wgInterface: string;
}

export function registerNft(program: Command): void {
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
    action(async (opts: NftOptions) => {
      const problem = interfaceNameProblem(opts.wgInterface);
      if (problem) throw new CliError(`--wg-interface: "${opts.wgInterface}" ${problem}`);
      if (!opts.file && !opts.live)
        throw new CliError('give -f PATH (the desired state), or --live with --url/--embedded');
      // Secrets play no part in a ruleset: one that cannot be read here is no error.
      const desired: DesiredState | undefined = opts.file
        ? (await loadDesired(opts.file, (path) => loadDesiredState(path, { secrets: 'check' }))).state
        : undefined;
      let text: string;
      if (opts.live) {
        const connection = await openConnection(opts);
        try {
          const live = await readLiveState(connection);
          text = renderRuleset(
            nftStateOfLive(live, {
              portRules: desired?.settings.port_rules !== false,
              wgInterface: opts.wgInterface,
              server: connection.url,
            }),
          );
        } finally {
          await connection.close();
        }
      } else {
        text = renderRuleset(
          nftStateOfDesired(desired!, { wgInterface: opts.wgInterface, files: displayPath(opts.file!) }),
        );
      }
      process.stdout.write(text);
      return ExitCode.ok;
    }),
  );
}
