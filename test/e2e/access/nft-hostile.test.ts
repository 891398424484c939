/**
 * `netform nft` on hostile values (security review 2026-11b, G3, G8 and `--wg-interface`): a
 * server's values are data, never ruleset text. `--live` reads a real in-process server through a
 * rewriting loopback proxy (a hostile or intercepted `/v0` server) and refuses the whole state,
 * naming the object, when a value it would render is not what it must be; comments from names are
 * inert; an interface name nft would read as more than a name is refused. Build first.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli, type CliResult } from '../../helpers/cli.js';
import { startInProcessServer } from '../../helpers/in-process-server.js';
import { startRewritingProxy, type Rewrite } from '../../helpers/rewriting-proxy.js';
import { TEST_ADMIN_EMAIL, type TestServer } from '../../helpers/server-api.js';
import { describeResult, workspace, type Workspace } from '../../helpers/workspace.js';

let server: TestServer;
let ws: Workspace;
const ids: Record<string, string> = {};

beforeAll(async () => {
  ws = workspace();
  server = await startInProcessServer();
  const post = async (collection: string, body: Record<string, unknown>): Promise<string> => {
    const wrapper = { users: 'user', devices: 'device', rules: 'rule' }[collection]!;
    const res = await server.api('POST', `/v0/${collection}`, { [wrapper]: body });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    return res.body.data.id;
  };
  ids.alice = await post('users', { email: 'alice@nft.test' });
  ids.laptop = await post('devices', {
    user_id: ids.alice,
    name: 'laptop',
    public_key: randomBytes(32).toString('base64'),
  });
  ids.web = await post('rules', { action: 'accept', destination: '10.0.0.0/8', port_type: 'tcp', port_range: '80' });
  ids.own = await post('rules', { action: 'drop', destination: '10.9.0.0/16', user_id: ids.alice });
});
afterAll(async () => {
  await server?.stop();
  ws?.cleanup();
});

/** `nft --live` through a proxy that rewrites the server's answers. */
async function liveThrough(rewrite: Rewrite): Promise<CliResult> {
  const proxy = await startRewritingProxy(server.url, rewrite);
  try {
    return await runCli(['nft', '--live'], {
      env: { NETFORM_URL: proxy.url, NETFORM_TOKEN: server.token, NETFORM_TOKEN_USER: TEST_ADMIN_EMAIL },
    });
  } finally {
    await proxy.close();
  }
}

/** Rewrites each object of a list answer at `path`. */
function eachOf(path: string, change: (object: any) => void): Rewrite {
  return (url, body) => {
    if (url.startsWith(path)) for (const object of body.data ?? []) change(object);
    return body;
  };
}

function expectRefused(r: CliResult, ...named: string[]): void {
  expect(r.code, describeResult(r)).toBe(1);
  expect(r.stdout).toBe('');
  for (const text of named) expect(r.stderr).toContain(text);
  expect(r.stderr).toContain('no ruleset is written from a state with such a value');
  expect(r.stderr).not.toMatch(/\n\s+at /);
}

describe('nft --live refuses server values that would become ruleset text (G3)', () => {
  it('the unaltered server: a ruleset, as before', async () => {
    const r = await liveThrough((_, body) => body);
    expect(r.code, describeResult(r)).toBe(0);
    expect(r.stdout).toContain('elements = { 10.0.0.0/8 . tcp . 80 }');
  });

  it('the review reproduction: a port_type that closes the set and adds a table', async () => {
    const PT =
      'tcp . 80 }\n\t}\n}\ntable ip atk2evil {\n\tchain c {\n\t\ttype filter hook input priority 0; policy drop;\n\t}\n}\ntable inet firezone {\n\tset atkzz {\n\t\ttype ipv4_addr . inet_proto . inet_service\n\t\tflags interval\n\t\telements = { 10.0.0.0/8 . tcp';
    const r = await liveThrough(
      eachOf('/v0/rules', (rule) => {
        if (rule.port_type) rule.port_type = PT;
      }),
    );
    expectRefused(r, `the server's rule "${ids.web}" has port_type "tcp . 80 }\\n\\t}\\n}\\ntable ip atk2evil {`);
    expect(r.stderr).not.toContain('\n\t}');
  });

  it('a user id that closes the set and chain names', async () => {
    const evil = 'x { } } ; flush ruleset ; table ip evil {';
    const swap = (id: string) => (id === ids.alice ? evil : id);
    const r = await liveThrough((url, body) => {
      for (const object of body.data ?? []) {
        if (url.startsWith('/v0/users')) object.id = swap(object.id);
        if (object.user_id) object.user_id = swap(object.user_id);
      }
      return body;
    });
    expectRefused(r, `the server's user "alice@nft.test" has the id "${evil}", not a UUID`);
  });

  it('an action, a destination, a port range, an owner or a device address that is not one', async () => {
    const cases: [Rewrite, string][] = [
      [eachOf('/v0/rules', (r) => r.id === ids.web && (r.action = 'accept; flush ruleset')), 'action'],
      [eachOf('/v0/rules', (r) => r.id === ids.web && (r.destination = '10.0.0.0/8 } flush')), 'destination'],
      [eachOf('/v0/rules', (r) => r.id === ids.web && (r.port_range = '80 }')), 'port_range'],
      [eachOf('/v0/rules', (r) => r.id === ids.own && (r.user_id = 'not-a-uuid')), 'user_id'],
    ];
    for (const [rewrite, field] of cases) {
      const r = await liveThrough(rewrite);
      expectRefused(r, `the server's rule "`, `has ${field} `);
    }
    const device = await liveThrough(eachOf('/v0/devices', (d) => (d.ipv4 = '10.0.0.1 } flush ruleset')));
    expectRefused(
      device,
      `the server's device "${ids.laptop}" has ipv4 "10.0.0.1 } flush ruleset", not an IPv4 address`,
    );
  });
});

describe('nft comments and --wg-interface', () => {
  it('the review reproduction: control characters from device names never reach the ruleset raw (G8)', async () => {
    const names = [
      'a\u2028} flush ruleset',
      'b\u000b} ; flush ruleset',
      'c\u000c#x\nflush ruleset',
      'd\u0085flush ruleset',
      'f\r\nflush ruleset',
      'g"; flush ruleset; #',
      'h\\\nflush ruleset',
      'i}}} table ip x { }',
      'j\u001b[2Jx',
    ];
    const lines = ['version: 1', 'users:', '  - email: nft@example.com', '    devices:'];
    for (const name of names)
      lines.push(
        `      - {name: ${JSON.stringify(name)}, public_key: ${JSON.stringify(randomBytes(32).toString('base64'))}}`,
      );
    const file = ws.write('g8/netform.yaml', `${lines.join('\n')}\n`);
    const r = await runCli(['nft', '-f', file]);
    expect(r.code, describeResult(r)).toBe(0);
    // Tabs and line feeds are the ruleset's own; nothing else below U+0020, no C1, no separators.
    expect(r.stdout).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u2028\u2029]/);
    expect(r.stdout).toContain('# nft@example.com/j\\u001b[2Jx: no pinned IPv4 address');
    expect(r.stdout).toContain('# nft@example.com/a\\u2028} flush ruleset: no pinned IPv4 address');
    // Every line that holds `flush ruleset` is a comment.
    for (const line of r.stdout.split('\n').filter((l) => l.includes('flush ruleset')))
      expect(line, line).toMatch(/^\s*#/);
  });

  it('--wg-interface refuses `*`, `\\` and `"` and follows Linux\'s rules (1-15 bytes, no / or white space)', async () => {
    const file = ws.write('wg/netform.yaml', 'version: 1\nrules:\n  - { action: drop, destination: 10.0.0.0/8 }\n');
    // Each rule of the name is tested on interfaceNameProblem (test/unit/nft/ruleset.test.ts); here the command line.
    for (const bad of ['a*', '\u00fc'.repeat(8)]) {
      const r = await runCli(['nft', '-f', file, '--wg-interface', bad]);
      expect(r.code, `${bad}: ${describeResult(r)}`).toBe(1);
      expect(r.stdout).toBe('');
      expect(r.stderr).toContain('--wg-interface: ');
    }
    for (const good of ['\u00fc'.repeat(7)]) {
      const r = await runCli(['nft', '-f', file, '--wg-interface', good]);
      expect(r.code, `${good}: ${describeResult(r)}`).toBe(0);
      expect(r.stdout).toContain(`iifname "${good}" drop`);
    }
  });
});
