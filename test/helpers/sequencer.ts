/**
 * The order vitest starts test files in. Vitest's own order runs the longest files first once its
 * cache (node_modules/.vite/vitest) holds their durations; without one, as in a fresh clone and so
 * in CI, it runs the largest files first, and a short file that takes long (the kernel suite, the
 * package install) can start late and finish last, alone. Here the files known to take long start
 * first, within each project (a worker is reused only between files of one project), and the rest
 * follow in vitest's order. With a cache that knows every file, vitest's order is kept.
 */
import { relative } from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/** The longest files of a fresh-clone CI run (wall seconds there, 3 workers), longest first. */
const LONG_FIRST = [
  'test/e2e/cli/safety-net.test.ts', // 130
  'test/e2e/package/action.test.ts', // 93
  'test/e2e/package/install.test.ts', // 79
  'test/kernel/kernel-oracle.test.ts', // 52
  'test/e2e/cli/error-boundary.test.ts', // 48
  'test/integration/server/process.test.ts', // 28 (sqlite), 25 (postgres)
  'test/integration/conformance/devices.test.ts', // 19 (postgres), 12
  'test/integration/server/auth-limit.test.ts', // 18
  'test/unit/access/delta-equivalence.test.ts', // 15
  'test/integration/postgres/replicas.test.ts', // 15
  'test/unit/desired/export-yaml.test.ts', // 15
  'test/integration/server/tls.test.ts', // 12
  'test/kernel/migrate-oracle.test.ts', // 12
  'test/e2e/reconcile/apply-progress.test.ts', // 11
  'test/integration/server/operations.test.ts', // 11
  'test/e2e/cli/loaded-modules.test.ts', // 10
  'test/e2e/cli/process-path.test.ts', // 10
  'test/kernel/after-apply.test.ts', // 10
];

export class LongFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const key = (spec: TestSpecification) => `${spec.project.name}:${relative(this.ctx.config.root, spec.moduleId)}`;
    if (sorted.every((spec) => this.ctx.cache.getFileTestResults(key(spec)))) return sorted;
    const rank = (spec: TestSpecification) => {
      const at = LONG_FIRST.indexOf(relative(this.ctx.config.root, spec.moduleId).split('\\').join('/'));
      return at < 0 ? LONG_FIRST.length : at;
    };
    // The project holding the longest file first (the SQLite one: the package, the safety net and the
    // kernel run there only), so that its long files start at once rather than after the other
    // project's files; the other project's short files then fill the workers at the end.
    const projects = [...new Set(sorted.map((spec) => spec.project.name))];
    const best = (name: string) => Math.min(...sorted.filter((spec) => spec.project.name === name).map(rank));
    projects.sort((a, b) => best(a) - best(b));
    // Array.prototype.sort is stable: within a rank, vitest's order stays.
    return projects.flatMap((name) =>
      sorted.filter((spec) => spec.project.name === name).sort((a, b) => rank(a) - rank(b)),
    );
  }
}
