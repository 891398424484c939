import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Each test file gets its own server and database files; files run in parallel workers.
    pool: 'forks',
    reporters: ['default'],
  },
});
