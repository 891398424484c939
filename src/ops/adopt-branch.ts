/**
 * `drift --adopt-branch NAME`: every difference drift reports, adopted (as `netform adopt
 * --all-drift` would write it) and committed on a branch of the repository holding the desired
 * state, for a workflow to push and open as a pull request. The checkout itself is never
 * written: the commit is made with git's plumbing (src/desired/adopt/branch.ts).
 */
import { dirname } from 'node:path';
import { statSync } from 'node:fs';
import { AdoptBranchError, commitAdoption, type AdoptionCommit } from '../desired/adopt/branch.js';
import { adoptFromServer, type AdoptRequest, type AdoptResult } from './adopt.js';
import { OpError } from './errors.js';

export interface AdoptBranchRequest extends Pick<AdoptRequest, 'file' | 'connect' | 'input' | 'now'> {
  branch: string;
  /** The commit message for what was adopted (the caller's words: src/views/adopt.ts). */
  message: (result: AdoptResult) => string;
  env: NodeJS.ProcessEnv;
}

/** The adoption and its commit; no commit when nothing could be written. */
export async function adoptOnBranch(
  request: AdoptBranchRequest,
): Promise<{ result: AdoptResult; commit: AdoptionCommit | null }> {
  const result = await adoptFromServer({ ...request, keys: [], allDrift: true, dryRun: true, removeDeleted: false });
  if (result.cdktf !== undefined) throw new OpError('request', { code: 'adopt_branch_writes_yaml' });
  if (result.files.length === 0) return { result, commit: null };
  const folder = statSync(request.file).isDirectory() ? request.file : dirname(request.file);
  try {
    const files = result.files.map((f) => ({ path: f.writtenTo, text: f.text }));
    return {
      result,
      commit: await commitAdoption(folder, request.branch, files, request.message(result), request.env),
    };
  } catch (error) {
    if (error instanceof AdoptBranchError) throw new OpError('request', error.message);
    throw error;
  }
}
