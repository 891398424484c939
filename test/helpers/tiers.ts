/**
 * Which test files run the build (dist/): a process of the built CLI or of `netform serve`, or a
 * module of dist/ in a child. `npm run test:fast` (vitest.config.ts, NETFORM_TEST_TIER=fast) leaves
 * them out, so that it needs no build; `npm test` runs every file. Read from the files themselves,
 * so a new test is in the right tier without a list to keep.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, sep } from 'node:path';

/**
 * A call that starts a process of the build (test/helpers/cli.ts, server.ts, workspace.ts,
 * drift.ts), a path into dist/, or the package by its name (its exports are dist/).
 */
const RUNS_THE_BUILD =
  /\b(runCliProcess|runCliProcessNode|netformProcess|startCli|startCliNode|builtCli|startDrift|startServerProcess|startReplica)\(|dist\/src\/|import\('netform(\/cdktf)?'\)|netform\/cdktf declarations/;

function* testFiles(dir: string): Generator<string> {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) yield* testFiles(path);
    else if (entry.name.endsWith('.test.ts')) yield path;
  }
}

/** The test files under `root/test` that run the build, as paths relative to `root` with `/`. */
export function filesRunningTheBuild(root: string): string[] {
  return [...testFiles(join(root, 'test'))]
    .filter((file) => RUNS_THE_BUILD.test(readFileSync(file, 'utf8')))
    .map((file) => relative(root, file).split(sep).join('/'))
    .sort();
}
