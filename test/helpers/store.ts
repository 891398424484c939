/**
 * The store a test run is on, chosen per vitest project (vitest.config.ts): `sqlite`, or
 * `postgres` (NETFORM_TEST_STORE=postgres), so that the same server suites run on both.
 *
 *   const location = await freshLocation(dir);   // a new .db file in dir, or a new PostgreSQL database
 *   const sql = await openSql(location);         // plant or inspect rows, whichever the store
 *   await disposeLocation(location);
 */
import Database from 'better-sqlite3';
import { join } from 'node:path';
import pg from 'pg';
import { inject } from 'vitest';
import { createDatabase, dropDatabase } from './postgres.js';

export type TestStoreKind = 'sqlite' | 'postgres';

export function testStoreKind(): TestStoreKind {
  return process.env.NETFORM_TEST_STORE === 'postgres' ? 'postgres' : 'sqlite';
}

/** The PostgreSQL of this run (the `postgres` project's global setup provides it). */
export function testPostgresUrl(): string {
  const url = inject('postgresUrl');
  if (!url) throw new Error('no test PostgreSQL: run this file in the vitest project `postgres`');
  return url;
}

let sqliteFiles = 0;

/** A new, empty database: `dir/netform.db` (numbered after the first) or a new PostgreSQL database. */
export async function freshLocation(dir: string): Promise<string> {
  if (testStoreKind() === 'postgres') return createDatabase(testPostgresUrl());
  return join(dir, sqliteFiles++ === 0 ? 'netform.db' : `netform-${sqliteFiles}.db`);
}

/** Drops a PostgreSQL database made by freshLocation; a SQLite file goes with its folder. */
export async function disposeLocation(location: string): Promise<void> {
  if (/^postgres(ql)?:/.test(location)) await dropDatabase(location);
}

/** Direct SQL on a store's database, with `?` placeholders on both stores. */
export interface SqlHandle {
  run(sql: string, ...params: unknown[]): Promise<void>;
  all<T = Record<string, unknown>>(sql: string, ...params: unknown[]): Promise<T[]>;
  close(): Promise<void>;
}

export async function openSql(location: string): Promise<SqlHandle> {
  if (/^postgres(ql)?:/.test(location)) {
    const client = new pg.Client({ connectionString: location });
    await client.connect();
    const numbered = (sql: string) => {
      let n = 0;
      return sql.replace(/\?/g, () => `$${++n}`);
    };
    return {
      async run(sql, ...params) {
        await client.query(numbered(sql), params);
      },
      async all<T>(sql: string, ...params: unknown[]) {
        return (await client.query(numbered(sql), params)).rows as T[];
      },
      close: () => client.end(),
    };
  }
  const db = new Database(location);
  return {
    async run(sql, ...params) {
      if (params.length === 0) db.exec(sql);
      else db.prepare(sql).run(...params);
    },
    async all<T>(sql: string, ...params: unknown[]) {
      return db.prepare(sql).all(...params) as T[];
    },
    close: async () => void db.close(),
  };
}
