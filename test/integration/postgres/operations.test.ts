/**
 * Operations on PostgreSQL: /readyz follows the database (503 while it is down, /healthz stays
 * 200), and a write waiting for a write lock held elsewhere fails after the lock timeout, counted
 * as a store error, instead of hanging.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { issueToken, startServer, type RunningServer } from '../../../server/index.js';
import { WRITE_LOCK } from '../../../server/store/postgres.js';
import {
  createDatabase,
  outageTestsSkipReason,
  startPostgresCluster,
  type PostgresCluster,
} from '../../helpers/postgres.js';
import { openSql, testPostgresUrl } from '../../helpers/store.js';

const skipReason = outageTestsSkipReason();

describe.skipIf(skipReason !== null)(
  `readiness follows the database${skipReason ? ` (skipped: ${skipReason})` : ''}`,
  () => {
    let cluster: PostgresCluster;
    let server: RunningServer | undefined;
    beforeAll(async () => {
      // A cluster of its own: this test stops it.
      cluster = await startPostgresCluster();
    });
    afterAll(async () => {
      await server?.close().catch(() => {});
      await cluster?.stop().catch(() => {});
    });

    it('/readyz is 200, then 503 "database unreachable" once PostgreSQL stops, while /healthz stays 200', async () => {
      const url = await createDatabase(cluster.url);
      await issueToken({ dbPath: url, email: 'admin@example.com' });
      server = await startServer({ dbPath: url, port: 0 });
      expect((await fetch(`${server.url}/readyz`)).status).toBe(200);
      await cluster.stop();
      const down = await fetch(`${server.url}/readyz`);
      expect(down.status).toBe(503);
      expect(await down.json()).toEqual({ status: 'unavailable', reason: 'database unreachable' });
      expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
    });
  },
);

describe('a write lock held elsewhere', () => {
  it('fails the waiting write with 500 after the lock timeout, counted as a store error', async () => {
    const url = await createDatabase(testPostgresUrl());
    const { token } = await issueToken({ dbPath: url, email: 'admin@example.com' });
    const server = await startServer({ dbPath: url, port: 0 });
    const holder = await openSql(url);
    try {
      await holder.run('BEGIN');
      await holder.all('SELECT pg_advisory_xact_lock(?::bigint)', WRITE_LOCK.toString());
      const res = await fetch(`${server.url}/v0/users`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ user: { email: 'blocked@example.com' } }),
      });
      expect(res.status).toBe(500);
      expect(await res.json()).toEqual({ error: 'Internal Server Error' });
      const page = await (await fetch(`${server.url}/metrics`)).text();
      expect(page).toMatch(/netform_store_errors_total\{[^}]*operation="transaction"[^}]*\} 1/);
    } finally {
      await holder.run('ROLLBACK');
      await holder.close();
      await server.close();
    }
  }, 20_000);
});
