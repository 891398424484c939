/** Shared setup of the `netform server ...` CLI tests: database files in one temporary folder, servers stopped after each test. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll } from 'vitest';
import type { TestServer } from './server.js';

/**
 * Registers the hooks of the calling test file: a temporary folder removed after all its tests,
 * and the servers pushed on `servers` stopped after each test. `freshDb()` names a new database
 * file in that folder (not created); `createdDb()` creates one.
 */
export function useDatabaseFiles(): { freshDb: () => string; createdDb: () => Promise<string>; servers: TestServer[] } {
  let dir: string;
  let n = 0;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'netform-cli-'));
  });
  afterAll(() => {
    rmSync(dir, { recursive: true, force: true });
  });
  const servers: TestServer[] = [];
  afterEach(async () => {
    await Promise.all(servers.splice(0).map((s) => s.stop()));
  });
  const freshDb = () => join(dir, `db-${++n}.db`);
  /** A new database file, created and migrated (as `netform serve` would on first start). */
  const createdDb = async () => {
    const path = freshDb();
    const { openStore } = await import('../../server/store/index.js');
    await (await openStore(path, { create: true })).close();
    return path;
  };
  return { freshDb, createdDb, servers };
}
