/**
 * A throwaway PostgreSQL for tests: `initdb` into a temporary folder, `pg_ctl start` on a free
 * loopback port, stopped and removed afterwards. PostgreSQL refuses to run as root, so as root
 * the cluster belongs to the `postgres` user (or `nobody`) and its binaries run through runuser.
 *
 *   const cluster = await startPostgresCluster();   // cluster.url: postgres://netform@127.0.0.1:PORT/postgres
 *   const url = await createDatabase(cluster.url);   // a new empty database on it
 *   await dropDatabase(url); await cluster.stop();
 */
import { execFile, execFileSync } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { randomBytes } from 'node:crypto';
import pg from 'pg';

const run = promisify(execFile);

/** Where Debian's postgresql package puts the binaries; the newest version first. */
const BIN_DIRS = [
  '/usr/lib/postgresql/17/bin',
  '/usr/lib/postgresql/16/bin',
  '/usr/lib/postgresql/15/bin',
  '/usr/lib/postgresql/14/bin',
  '/usr/lib/postgresql/13/bin',
];

export function postgresBinDir(): string | null {
  if (process.env.NETFORM_TEST_POSTGRES_BIN) return process.env.NETFORM_TEST_POSTGRES_BIN;
  return BIN_DIRS.find((dir) => existsSync(join(dir, 'initdb')) && existsSync(join(dir, 'pg_ctl'))) ?? null;
}

export interface PostgresCluster {
  /** A URL of the cluster's `postgres` database, as the superuser `netform` (trust auth on loopback). */
  url: string;
  /** Stops PostgreSQL and keeps its data (`pg_ctl stop -m MODE`), for outage tests; resume() starts it again. */
  halt(mode?: 'fast' | 'immediate'): Promise<void>;
  /** Starts a halted cluster again, on the same port. */
  resume(): Promise<void>;
  stop(): Promise<void>;
}

/**
 * Why tests that stop PostgreSQL are skipped, or null: with NETFORM_TEST_POSTGRES_URL the run is
 * on an outside PostgreSQL, which a test must not stop, and there may be no binaries to start one.
 */
export function outageTestsSkipReason(): string | null {
  return process.env.NETFORM_TEST_POSTGRES_URL
    ? 'NETFORM_TEST_POSTGRES_URL names an outside PostgreSQL, which these tests would have to stop'
    : null;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
    });
  });
}

/** The unprivileged account that owns the cluster when we are root. */
function clusterOwner(): { name: string; uid: number; gid: number } | null {
  if (userInfo().uid !== 0) return null;
  for (const name of ['postgres', 'nobody']) {
    try {
      const id = (option: string) =>
        Number(execFileSync('id', [option, name], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim());
      return { name, uid: id('-u'), gid: id('-g') };
    } catch {
      // try the next account
    }
  }
  throw new Error('running as root and neither a postgres nor a nobody account exists to own a test cluster');
}

export async function startPostgresCluster(): Promise<PostgresCluster> {
  const bin = postgresBinDir();
  if (!bin) throw new Error('no PostgreSQL binaries found (install the postgresql package)');
  const dir = mkdtempSync(join(tmpdir(), 'netform-pg-'));
  const owner = clusterOwner();
  if (owner) chownSync(dir, owner.uid, owner.gid);
  const as = (command: string, args: string[]) =>
    owner ? run('runuser', ['-u', owner.name, '--', join(bin, command), ...args]) : run(join(bin, command), args);
  const data = join(dir, 'data');
  const port = await freePort();
  // fsync off: a test cluster is thrown away, and durability is PostgreSQL's own business.
  const settings = `-c listen_addresses=127.0.0.1 -p ${port} -k ${dir} -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=300`;
  try {
    await as('initdb', ['-D', data, '-U', 'netform', '-A', 'trust', '--no-sync', '--locale=C', '-E', 'UTF8']);
    await as('pg_ctl', ['-D', data, '-l', join(dir, 'log'), '-o', settings, '-w', '-t', '60', 'start']);
  } catch (error) {
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
  let running = true;
  return {
    url: `postgres://netform@127.0.0.1:${port}/postgres`,
    async halt(mode = 'fast') {
      await as('pg_ctl', ['-D', data, '-m', mode, '-w', 'stop']);
      running = false;
    },
    async resume() {
      await as('pg_ctl', ['-D', data, '-l', join(dir, 'log'), '-o', settings, '-w', '-t', '60', 'start']);
      running = true;
    },
    async stop() {
      try {
        if (running) await as('pg_ctl', ['-D', data, '-m', 'immediate', '-w', 'stop']);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}

function withDatabase(url: string, database: string): string {
  const u = new URL(url);
  u.pathname = `/${database}`;
  return u.toString();
}

async function adminQuery(url: string, sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: withDatabase(url, 'postgres') });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

/** Creates a new empty database on the cluster of `url` and returns its URL. */
export async function createDatabase(url: string, prefix = 'netform_test'): Promise<string> {
  const name = `${prefix}_${randomBytes(6).toString('hex')}`;
  await adminQuery(url, `CREATE DATABASE ${name}`);
  return withDatabase(url, name);
}

/** Drops the database of `url`, closing whatever connections are still open on it. */
export async function dropDatabase(url: string): Promise<void> {
  const name = new URL(url).pathname.slice(1);
  await adminQuery(url, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
}
