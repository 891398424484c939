/**
 * An adoption as a commit on a branch, made with git's plumbing in the repository that holds the
 * desired state: the new texts are written as blobs into a temporary index read from HEAD, and the
 * commit is made from that tree with HEAD as its parent. The checkout's working tree, index and
 * HEAD are never touched, so this is safe in a CI job's checkout and on a workstation alike.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative, resolve, sep } from 'node:path';
import { realLocation } from '../containment.js';

export class AdoptBranchError extends Error {
  override readonly name = 'AdoptBranchError';
}

interface Git {
  (args: string[], input?: string): Promise<string>;
}

function gitIn(cwd: string, env: NodeJS.ProcessEnv): Git {
  return (args, input) =>
    new Promise((done, fail) => {
      const child = execFile('git', args, { cwd, env, maxBuffer: 64 * 1024 * 1024 }, (error, stdout, stderr) => {
        if (error) fail(new AdoptBranchError(`git ${args[0]} failed: ${(stderr || error.message).trim()}`));
        else done(stdout.trim());
      });
      if (input !== undefined) child.stdin?.end(input);
    });
}

export interface AdoptionCommit {
  branch: string;
  commit: string;
  /** The parent: the commit HEAD named. */
  base: string;
}

/**
 * Commits `files` (absolute paths inside the repository of `folder`, with their new texts) on
 * `branch`, created at (or moved to) a commit whose parent is HEAD. `message` is the commit
 * message; `env` is the run's environment (an author is supplied when git has none configured).
 */
export async function commitAdoption(
  folder: string,
  branch: string,
  files: readonly { path: string; text: string }[],
  message: string,
  env: NodeJS.ProcessEnv,
): Promise<AdoptionCommit> {
  const probe = gitIn(folder, env);
  let root: string;
  try {
    root = await probe(['rev-parse', '--show-toplevel']);
  } catch {
    throw new AdoptBranchError(`${folder} is not in a git repository: --adopt-branch writes a commit there`);
  }
  try {
    await probe(['check-ref-format', '--branch', branch]);
  } catch {
    throw new AdoptBranchError(`--adopt-branch ${branch}: not a valid branch name`);
  }
  const base = await probe(['rev-parse', '--verify', 'HEAD^{commit}']).catch(() => {
    throw new AdoptBranchError('the repository has no commit yet: --adopt-branch needs one to start the branch from');
  });
  const current = await probe(['symbolic-ref', '-q', 'HEAD']).catch(() => '');
  if (current === `refs/heads/${branch}`)
    throw new AdoptBranchError(`--adopt-branch ${branch} is the branch checked out here: name another branch`);
  const scratch = await mkdtemp(join(tmpdir(), 'netform-adopt-'));
  try {
    const identity = (await probe(['config', 'user.email']).catch(() => '')) === '';
    const git = gitIn(root, {
      ...env,
      GIT_INDEX_FILE: join(scratch, 'index'),
      ...(identity
        ? {
            GIT_AUTHOR_NAME: env.GIT_AUTHOR_NAME ?? 'netform',
            GIT_AUTHOR_EMAIL: env.GIT_AUTHOR_EMAIL ?? 'netform@localhost',
            GIT_COMMITTER_NAME: env.GIT_COMMITTER_NAME ?? 'netform',
            GIT_COMMITTER_EMAIL: env.GIT_COMMITTER_EMAIL ?? 'netform@localhost',
          }
        : {}),
    });
    await git(['read-tree', base]);
    const realRoot = realLocation(root);
    for (const file of files) {
      const inside = relative(realRoot, realLocation(resolve(file.path)));
      if (inside.startsWith('..') || inside === '')
        throw new AdoptBranchError(`${file.path} is outside the repository ${root}`);
      const name = inside.split(sep).join('/');
      const blob = await git(['hash-object', '-w', '--stdin'], file.text);
      // A file keeps its mode (an executable bit, however odd on YAML); a new one is a plain file.
      const mode = (await git(['ls-files', '-s', '--', name])).split(' ')[0] || '100644';
      await git(['update-index', '--add', '--cacheinfo', `${mode},${blob},${name}`]);
    }
    const tree = await git(['write-tree']);
    const commit = await git(['commit-tree', tree, '-p', base, '-F', '-'], message);
    await git(['update-ref', '-m', 'netform drift --adopt-branch', `refs/heads/${branch}`, commit]);
    return { branch, commit, base };
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
}
