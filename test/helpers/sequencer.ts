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
  'test/e2e/package/action.test.ts', // 153
  'test/e2e/cli/safety-net.test.ts', // 149
  'test/kernel/kernel-oracle.test.ts', // 71
  'test/e2e/package/install.test.ts', // 54
  'test/e2e/cli/error-boundary.test.ts', // 38
  'test/integration/server/process.test.ts', // 36 (postgres), 26 (sqlite)
  'test/integration/conformance/devices.test.ts', // 30, 19
  'test/kernel/migrate-oracle.test.ts', // 28
  'test/integration/server/tls.test.ts', // 22
  'test/integration/server/auth-limit.test.ts', // 22
  'test/integration/postgres/replicas.test.ts', // 18
  'test/integration/conformance/rules.test.ts', // 17, 13
  'test/integration/server/database-files.test.ts', // 15
  'test/integration/postgres/resilience.test.ts', // 14
  'test/kernel/after-apply.test.ts', // 14
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
    const projects = [...new Set(sorted.map((spec) => spec.project.name))];
    // Array.prototype.sort is stable: within a rank, vitest's order stays.
    return projects.flatMap((name) =>
      sorted.filter((spec) => spec.project.name === name).sort((a, b) => rank(a) - rank(b)),
    );
  }
}
