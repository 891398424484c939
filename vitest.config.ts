import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';
import { postgresBinDir } from './test/helpers/postgres.js';
import { LongFirstSequencer } from './test/helpers/sequencer.js';
import { filesRunningTheBuild } from './test/helpers/tiers.js';

/**
 * Two projects: every test on SQLite, and the server suites again on PostgreSQL (the same files,
 * the store chosen by NETFORM_TEST_STORE; see test/helpers/store.ts) with the PostgreSQL-only
 * tests. Without PostgreSQL on the machine the second project is left out with one line saying
 * why; in CI (CI=true) that is an error, so that CI never passes without having run them.
 */
const SERVER_SUITES = ['test/integration/server/**/*.test.ts', 'test/integration/conformance/**/*.test.ts'];
const POSTGRES_ONLY = 'test/integration/postgres/**/*.test.ts';
/**
 * Run on SQLite only. By nature: the `server` commands' database files, file modes, SQLite's
 * query plans and group commit. To keep CI short: the layers above the store, which no store
 * changes (TLS, the auth rate limit, the OpenAPI document, the docs page in Chromium).
 */
const SQLITE_ONLY = [
  'test/integration/server/cli-*.test.ts',
  'test/integration/server/indexes.test.ts',
  'test/integration/server/database-files.test.ts',
  'test/integration/server/group-commit.test.ts',
  // Plants rows and holds SQLite's write lock through the file; postgres/operations covers PostgreSQL.
  'test/integration/server/operations.test.ts',
  'test/integration/server/tls.test.ts',
  'test/integration/server/auth-limit.test.ts',
  'test/integration/server/slow-clients.test.ts',
  'test/integration/server/openapi.test.ts',
  'test/integration/server/docs-page.test.ts',
];

/**
 * `npm run test:fast` (NETFORM_TEST_TIER=fast): every file that needs no build (test/helpers/tiers.ts),
 * on SQLite: unit tests, the server in-process, the CLI in-process. `npm test` runs every file.
 */
const FAST = process.env.NETFORM_TEST_TIER === 'fast';
/** Left out of test:fast too, though they need no build: the kernel suite and Chromium, minutes of their own. */
const OTHER_PROCESSES = ['test/kernel/**', 'test/integration/server/docs-page.test.ts'];

function postgresProjects() {
  if (FAST) return [];
  if (!process.env.NETFORM_TEST_POSTGRES_URL && !postgresBinDir()) {
    const reason =
      'PostgreSQL tests skipped: no PostgreSQL binaries under /usr/lib/postgresql/*/bin and no NETFORM_TEST_POSTGRES_URL';
    if (process.env.CI === 'true') throw new Error(`${reason} (CI must run them: install the postgresql package)`);
    console.warn(reason);
    return [];
  }
  return [
    {
      extends: true as const,
      test: {
        name: 'postgres',
        include: [...SERVER_SUITES, POSTGRES_ONLY],
        exclude: SQLITE_ONLY,
        env: { NETFORM_TEST_STORE: 'postgres' },
        globalSetup: ['test/helpers/postgres-setup.ts'],
      },
    },
  ];
}

export default defineConfig({
  test: {
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Each test file gets its own server and database; files run in parallel workers. Without
    // maxWorkers vitest runs cores - 1 of them: one file at a time on a 2-core runner, while most
    // files mostly wait (on a server, on a child process). Files that wait overlap; NETFORM_TEST_WORKERS
    // overrides the count (say, 1 to measure one file alone).
    pool: 'forks',
    // Workers are reused from file to file (no fresh process and no fresh import of the server, the
    // CLI and their dependencies per file): about a third of the suite's CPU otherwise. Test files
    // keep no state in the process (no vi.mock, no environment writes; the in-process CLI restores
    // the folder it changes to); `--isolate` gives each file a fresh worker again.
    isolate: false,
    maxWorkers: Number(process.env.NETFORM_TEST_WORKERS) || Math.max(3, availableParallelism() + 1),
    // Files known to take long start first (a fresh clone has no durations cached): test/helpers/sequencer.ts.
    sequence: { sequencer: LongFirstSequencer },
    reporters: ['default'],
    // NETFORM_TEST_CPU_LOG=FILE: one line per test file with its CPU seconds, child processes included.
    setupFiles: process.env.NETFORM_TEST_CPU_LOG ? ['test/helpers/cpu-log.ts'] : [],
    projects: [
      {
        extends: true,
        test: {
          name: 'sqlite',
          include: ['test/**/*.test.ts'],
          exclude: [
            POSTGRES_ONLY,
            'node_modules/**',
            ...(FAST
              ? [...filesRunningTheBuild(fileURLToPath(new URL('.', import.meta.url))), ...OTHER_PROCESSES]
              : []),
          ],
        },
      },
      ...postgresProjects(),
    ],
  },
});
