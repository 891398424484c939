/**
 * `drift --adopt-branch NAME`: after a single check that finds drift, the adoption of every
 * difference committed on branch NAME of the desired state's repository (never the checkout).
 */
import type { Command } from 'commander';
import { inertText } from '../views/escape.js';
import type { Connector } from '../ops/session.js';
import { inputOf, type CliIo } from './io.js';

export function addAdoptBranchOption(cmd: Command): Command {
  return cmd.option(
    '--adopt-branch <name>',
    'on drift, commit the adoption of every difference (as `netform adopt --all-drift`) on this branch; the checkout is not touched',
  );
}

/** Writes the branch and says so on stderr. */
export async function proposeAdoption(
  file: string,
  branch: string,
  connect: Connector,
  io: CliIo,
  server: string,
): Promise<void> {
  // Loaded on drift only: a clean check (and every check without the flag) never loads adopt's modules.
  const [{ adoptOnBranch }, { adoptCommitMessage }] = await Promise.all([
    import('../ops/adopt-branch.js'),
    import('../views/adopt.js'),
  ]);
  const { result, commit } = await adoptOnBranch({
    file,
    branch,
    connect,
    input: inputOf(io),
    now: io.clock(),
    env: io.env,
    message: (r) => adoptCommitMessage(r.notes, r.files, server),
  });
  if (!commit) {
    io.err.write('drift: nothing adopt can write (see `netform adopt --all-drift --dry-run`): no branch written\n');
    return;
  }
  io.err.write(
    `drift: adoption of ${result.files.length} file(s) committed as ${commit.commit.slice(0, 12)} on branch ${inertText(branch)} (from ${commit.base.slice(0, 12)}); push it and open a pull request\n`,
  );
}
