/**
 * What `netform serve` and the `netform server ...` commands load: a process costs about as much
 * CPU as the modules it loads, and the test suite starts dozens of each. A loader hook in the
 * child (NODE_OPTIONS=--import) lists every ES module it loads, and at exit every CommonJS one.
 * `serve` on a SQLite file, from start to listening and stopping, loads neither the PostgreSQL
 * driver, nor the OpenAPI and /docs plugins (@fastify/swagger, @fastify/swagger-ui,
 * @fastify/static, yaml: built on their first request), nor a response serializer's or
 * validator's compiler (fast-json-stringify's compiler, ajv: compiled on a route's first answer).
 * The `server` commands load the store and the administration only: no Fastify, no metrics.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCliProcess } from '../../helpers/cli.js';
import { startServerProcess } from '../../helpers/server.js';

let dir: string;
let preload: string;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'netform-serve-modules-'));
  const hooks = join(dir, 'hooks.mjs');
  preload = join(dir, 'preload.mjs');
  writeFileSync(
    hooks,
    `import { appendFileSync } from 'node:fs';
export async function load(url, context, next) {
  if (process.env.NETFORM_MODULE_LOG) appendFileSync(process.env.NETFORM_MODULE_LOG, url + '\\n');
  return next(url, context);
}\n`,
  );
  writeFileSync(
    preload,
    `import { register, createRequire } from 'node:module';
import { appendFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
register(${JSON.stringify(pathToFileURL(hooks).href)});
const cache = createRequire(import.meta.url)('node:module')._cache;
process.on('exit', () => {
  const lines = Object.keys(cache).map((p) => pathToFileURL(p).href + '\\n').join('');
  appendFileSync(process.env.NETFORM_MODULE_LOG, lines);
});\n`,
  );
});

afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

let runs = 0;

function moduleEnv(): { env: Record<string, string>; log: string } {
  const log = join(dir, `modules-${++runs}.txt`);
  return { log, env: { NODE_OPTIONS: `--import ${pathToFileURL(preload).href}`, NETFORM_MODULE_LOG: log } };
}

/** The paths (dist/…, node_modules/NAME/…) of the modules a child logged. */
function modulesIn(log: string): string[] {
  const paths = readFileSync(log, 'utf8')
    .split('\n')
    .filter((u) => u.startsWith('file:'))
    .map((u) => decodeURIComponent(new URL(u).pathname));
  // The hook saw the bin itself: an empty list would pass every assertion below.
  expect(paths.some((p) => p.endsWith('/dist/src/cli/main.js'))).toBe(true);
  return [
    ...new Set(paths.map((p) => p.replace(/^.*\/node_modules\//, 'node_modules/').replace(/^.*\/dist\//, 'dist/'))),
  ];
}

/** The packages of node_modules that modules were loaded from (`pg`, `@fastify/static`). */
function packagesOf(paths: string[]): Set<string> {
  return new Set(
    paths
      .filter((p) => p.startsWith('node_modules/'))
      .map((p) => {
        const parts = p.split('/');
        return parts[1]!.startsWith('@') ? `${parts[1]}/${parts[2]}` : parts[1]!;
      }),
  );
}

describe('the modules the server loads', () => {
  it('serve on a SQLite file loads no PostgreSQL driver, no OpenAPI or /docs plugin, no schema compiler', async () => {
    const { env, log } = moduleEnv();
    // Started (it printed its listening line) and stopped, nothing asked of it.
    const server = await startServerProcess({ env });
    await server.stop();
    expect(server.lastExit).toEqual({ code: 0, signal: null });
    const paths = modulesIn(log);
    const packages = packagesOf(paths);
    expect(packages.has('fastify')).toBe(true);
    // Fastify's own error serializer is precompiled (fast-json-stringify/lib/serializer.js); the compiler is index.js.
    expect(paths).not.toContain('node_modules/fast-json-stringify/index.js');
    expect(packages.has('better-sqlite3')).toBe(true);
    for (const name of [
      'pg',
      'pg-protocol',
      '@fastify/swagger',
      '@fastify/swagger-ui',
      '@fastify/static',
      'yaml',
      'ajv',
      '@fastify/ajv-compiler',
    ]) {
      expect(packages.has(name), `${name} loaded`).toBe(false);
    }
  });

  it('the server commands load the store and the administration: no Fastify, no metrics, no PostgreSQL driver', async () => {
    const db = join(dir, 'admin.db');
    for (const args of [
      ['server', 'token', 'create', '--email', 'ann@modules.test', '--db', db],
      ['server', 'token', 'list', '--db', db],
      ['server', 'defaults', 'show', '--db', db],
    ]) {
      const { env, log } = moduleEnv();
      const result = await runCliProcess(args, { env });
      expect(result.code, `${args.join(' ')}: ${result.stderr}`).toBe(0);
      const paths = modulesIn(log);
      const packages = packagesOf(paths);
      expect(packages.has('better-sqlite3'), args.join(' ')).toBe(true);
      for (const name of ['fastify', 'pino', 'prom-client', '@opentelemetry/api', 'pg']) {
        expect(packages.has(name), `${args.join(' ')}: ${name} loaded`).toBe(false);
      }
      expect(paths.filter((p) => /^dist\/server\/(app|index|openapi|metrics|routes\/)/.test(p))).toEqual([]);
    }
  });
});
