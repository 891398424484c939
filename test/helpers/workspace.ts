/** Shared pieces of the reconcile end-to-end tests: a workspace of YAML files and the CLI against a real server. */
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import { runCli, runCliProcessNode, SHORT_LIVED_NODE, type CliResult } from './cli.js';
import { startTestServer, TEST_ADMIN_EMAIL, type TestServer, type TestServerOptions } from './server.js';

/** A fresh WireGuard-shaped key (32 random bytes, base64). */
export function wgKey(): string {
  return randomBytes(32).toString('base64');
}

export interface Workspace {
  dir: string;
  write(name: string, text: string): string;
  path(name: string): string;
  cleanup(): void;
}

export function workspace(): Workspace {
  const dir = mkdtempSync(join(tmpdir(), 'netform-reconcile-'));
  return {
    dir,
    write(name, text) {
      const file = join(dir, name);
      mkdirSync(dirname(file), { recursive: true });
      writeFileSync(file, text);
      return file;
    },
    path: (name) => join(dir, name),
    cleanup: () => rmSync(dir, { recursive: true, force: true }),
  };
}

/**
 * A test server (in-process: test/helpers/server.ts) and a workspace for the tests of one file: started (and seeded by `seed`)
 * before them, handed to `bind`, stopped and removed after them.
 */
export function useServerAndWorkspace(
  bind: (started: { server: TestServer; ws: Workspace }) => void,
  seed?: (server: TestServer) => Promise<void>,
  options: TestServerOptions = {},
): void {
  let server: TestServer | undefined;
  let ws: Workspace | undefined;
  beforeAll(async () => {
    server = await startTestServer(options);
    ws = workspace();
    bind({ server, ws });
    await seed?.(server);
  });
  afterAll(async () => {
    await server?.stop();
    ws?.cleanup();
  });
}

/** Runs `netform ARGS` against the test server, as its admin, in this process (test/helpers/cli.ts's runCli). */
export function netform(
  server: TestServer,
  args: string[],
  env: Record<string, string | undefined> = {},
  cwd?: string,
): Promise<CliResult> {
  return runCli(args, { cwd, env: adminEnv(server, env) });
}

/** The same as netform(), through the built CLI as a child process that lives a second or less (SHORT_LIVED_NODE). */
export function netformProcess(
  server: TestServer,
  args: string[],
  env: Record<string, string | undefined> = {},
  cwd?: string,
): Promise<CliResult> {
  return runCliProcessNode(SHORT_LIVED_NODE, args, { cwd, env: adminEnv(server, env) });
}

function adminEnv(server: TestServer, env: Record<string, string | undefined>): Record<string, string | undefined> {
  return { NETFORM_URL: server.url, NETFORM_TOKEN: server.token, NETFORM_TOKEN_USER: TEST_ADMIN_EMAIL, ...env };
}

/** Everything the server holds, for assertions. */
export async function serverState(server: TestServer): Promise<{ users: any[]; devices: any[]; rules: any[] }> {
  const [users, devices, rules] = await Promise.all(
    ['/v0/users', '/v0/devices', '/v0/rules'].map((p) => server.api('GET', p)),
  );
  return { users: users!.body.data, devices: devices!.body.data, rules: rules!.body.data };
}

/** Creates an object by hand through the API, as a person would; fails loudly if the server refuses. */
export async function create(
  server: TestServer,
  collection: 'users' | 'devices' | 'rules',
  body: Record<string, unknown>,
): Promise<any> {
  const wrapper = { users: 'user', devices: 'device', rules: 'rule' }[collection];
  const res = await server.api('POST', `/v0/${collection}`, { [wrapper]: body });
  if (res.status !== 201)
    throw new Error(`creating ${collection} by hand failed: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.data;
}

export function describeResult(r: CliResult): string {
  return `exit ${r.code}\n--- stdout\n${r.stdout}\n--- stderr\n${r.stderr}`;
}

/**
 * The server and files the limits and saved-plan tests share: users u0..u{n-1}@bulk.test made by
 * hand, u0 with a laptop; the files declare u0 (with the laptop's mtu) and u1, prune on.
 */
export function bulkFixture(users: number) {
  const laptopKey = wgKey();
  return {
    yaml: (extra = '', mtu = 1400) => `version: 1
settings:
  prune: true
  manage: { users: ["*@bulk.test"], rules: [] }
users:
  - email: u0@bulk.test
    devices:
      - { name: laptop, public_key: "${laptopKey}", mtu: ${mtu} }
  - email: u1@bulk.test
${extra}`,
    async seed(server: TestServer): Promise<void> {
      const u0 = await create(server, 'users', { email: 'u0@bulk.test' });
      await create(server, 'devices', { user_id: u0.id, name: 'laptop', public_key: laptopKey });
      for (let i = 1; i < users; i++) await create(server, 'users', { email: `u${i}@bulk.test` });
    },
  };
}
