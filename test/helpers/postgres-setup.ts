/**
 * Vitest global setup of the `postgres` project: one throwaway cluster for the whole run (each
 * test server then gets its own database on it, created in milliseconds), unless
 * NETFORM_TEST_POSTGRES_URL names a PostgreSQL to use instead. Tests read the URL with
 * `inject('postgresUrl')`.
 */
import type { TestProject } from 'vitest/node';
import { startPostgresCluster } from './postgres.js';

declare module 'vitest' {
  export interface ProvidedContext {
    postgresUrl: string;
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const given = process.env.NETFORM_TEST_POSTGRES_URL;
  if (given) {
    project.provide('postgresUrl', given);
    return async () => {};
  }
  const cluster = await startPostgresCluster();
  project.provide('postgresUrl', cluster.url);
  return () => cluster.stop();
}
