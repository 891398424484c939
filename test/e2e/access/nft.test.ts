/**
 * `netform nft` with the built CLI: from the examples' files and with --live against a real server
 * process, its output loaded by `nft -f` into a network namespace of its own and listed back by
 * nft, text for text; its errors; its shell completion. And `settings.port_rules: false` seen
 * from the CLI: validate and plan warn, test evaluates such rules without their ports.
 * Loading needs root and nftables (test/kernel/lab.ts): under CI=true their absence is an error.
 */
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { runCli } from '../../helpers/cli.js';
import type { TestServer } from '../../helpers/server.js';
import { labUnavailable, listInFreshNamespace } from '../../kernel/lab.js';
import {
  create,
  describeResult,
  netform,
  useServerAndWorkspace,
  wgKey,
  type Workspace,
} from '../../helpers/workspace.js';

let server: TestServer;
let ws: Workspace;
useServerAndWorkspace((started) => ({ server, ws } = started));

const unavailable = labUnavailable();
if (unavailable && process.env.CI === 'true')
  throw new Error(`netform nft's output cannot be loaded here: ${unavailable}; CI must load it`);
if (unavailable) console.warn(`loading netform nft's output skipped: ${unavailable}`);

const EXAMPLES = fileURLToPath(new URL('../../../examples/', import.meta.url));

/** The table as nft lists it: the output without its comments and the guard's two lines. */
function listed(output: string): string {
  return output
    .split('\n')
    .filter((line) => !/^\s*#/.test(line))
    .join('\n')
    .replace('table inet firezone\ndelete table inet firezone\n', '');
}

/** Loads the output with nft -f in a namespace of its own; nft lists back exactly the table printed. */
async function loadsAsPrinted(output: string): Promise<void> {
  if (unavailable) return;
  expect(await listInFreshNamespace(output)).toBe(listed(output));
}

describe('netform nft from files', () => {
  it.each(['basic', 'multi-team/payments', 'multi-team/search'])(
    'examples/%s: a ruleset nft loads and lists back as printed',
    async (example) => {
      const r = await runCli(['nft', '-f', `${EXAMPLES}${example}`]);
      expect(r.code, describeResult(r)).toBe(0);
      expect(r.stdout).toMatch(/^# The nftables ruleset a Firezone 0\.7\.36 server installs/);
      expect(r.stdout).toContain('\ntable inet firezone\ndelete table inet firezone\ntable inet firezone {\n');
      expect(r.stdout).toContain('\t\ttype filter hook forward priority filter; policy accept;\n');
      await loadsAsPrinted(r.stdout);
    },
  );

  it("examples/basic: each declared user's chain, pinned addresses, the others said to be left out", async () => {
    const r = await runCli(['nft', '-f', `${EXAMPLES}basic`]);
    expect(r.code, describeResult(r)).toBe(0);
    expect(r.stdout.match(/^\tchain user[0-9a-f-]{36} \{$/gm)).toHaveLength(5);
    expect(r.stdout).toContain('\t\t# dave@example.com\n\t\telements = { 10.3.2.20 }');
    expect(r.stdout).toContain('# alice@example.com/laptop: no pinned IPv4 address (the server assigns one), left out');
    expect(r.stdout).toContain('elements = { 10.1.0.0/16 . tcp . 443 }');
    expect(r.stdout).toContain('elements = { 10.9.0.0/16 }');
  });

  it('--wg-interface names the interface the filter rules match; a name Linux refuses is an error', async () => {
    const file = ws.write('wg/netform.yaml', 'version: 1\nrules:\n  - { action: drop, destination: 10.0.0.0/8 }\n');
    const r = await runCli(['nft', '-f', file, '--wg-interface', 'wg0']);
    expect(r.code, describeResult(r)).toBe(0);
    expect(r.stdout).toContain('\t\tip daddr @ip_drop iifname "wg0" drop\n');
    expect(r.stdout).not.toContain('"wg-firezone"');
    await loadsAsPrinted(r.stdout);

    const bad = await runCli(['nft', '-f', file, '--wg-interface', 'wg 0']);
    expect(bad.code).toBe(1);
    expect(bad.stdout).toBe('');
    expect(bad.stderr).toContain('--wg-interface: "wg 0" must be 1 to 15 bytes of printable characters without spaces');
    expect(bad.stderr).not.toMatch(/\n\s+at /);
  });

  it('needs -f or --live; bad files are reported by file and line', async () => {
    const none = await runCli(['nft']);
    expect(none.code).toBe(1);
    expect(none.stderr).toContain('give -f PATH (the desired state), or --live with --url/--embedded');
    const file = ws.write('bad/netform.yaml', 'version: 1\nrules:\n  - { action: maybe, destination: 10.0.0.0/8 }\n');
    const bad = await runCli(['nft', '-f', file]);
    expect(bad.code).toBe(1);
    expect(bad.stdout).toBe('');
    expect(bad.stderr).toMatch(/netform\.yaml:3:\d+/);
  });

  it('is completed by the shell scripts', async () => {
    const script = await runCli(['completion', 'bash']);
    expect(script.code).toBe(0);
    const complete = (words: string[]) => {
      const program = `${script.stdout}\nCOMP_WORDS=(${words.map((w) => `'${w}'`).join(' ')}); COMP_CWORD=${words.length - 1}; _netform; echo "\${COMPREPLY[*]}"`;
      return spawnSync('bash', ['-c', program], { encoding: 'utf8' }).stdout.trim();
    };
    expect(complete(['netform', 'nf'])).toBe('nft');
    expect(complete(['netform', 'nft', '--wg'])).toBe('--wg-interface');
    expect(complete(['netform', 'nft', '--li'])).toBe('--live');
  });
});

describe('netform nft --live', () => {
  it("prints the server's ruleset: its user ids, device addresses and rules", async () => {
    const alice = await create(server, 'users', { email: 'alice@nft.test' });
    const bob = await create(server, 'users', { email: 'bob@nft.test' });
    const laptop = await create(server, 'devices', { user_id: alice.id, name: 'laptop', public_key: wgKey() });
    const phone = await create(server, 'devices', { user_id: bob.id, name: 'phone', public_key: wgKey() });
    await create(server, 'rules', { action: 'drop', destination: '0.0.0.0/0' });
    await create(server, 'rules', { action: 'accept', destination: '10.1.2.3/16', user_id: alice.id });
    await create(server, 'rules', {
      action: 'accept',
      destination: '2001:db8::/32',
      port_type: 'udp',
      port_range: '53',
      user_id: bob.id,
    });

    const r = await netform(server, ['nft', '--live']);
    expect(r.code, describeResult(r)).toBe(0);
    expect(r.stdout).toContain(`the users, devices and rules of ${server.url}`);
    for (const user of [alice, bob]) {
      expect(r.stdout).toContain(`\t\tip saddr @user${user.id}_ip_devices jump user${user.id}\n`);
      expect(r.stdout).toContain(`\tchain user${user.id} {\n`);
    }
    expect(r.stdout).toContain(`\t\t# alice@nft.test\n\t\telements = { ${laptop.ipv4} }`);
    expect(r.stdout).toContain(`elements = { ${phone.ipv6} }`);
    expect(r.stdout).toContain(
      `set user${alice.id}_ip_accept {\n\t\ttype ipv4_addr\n\t\tflags interval\n\t\telements = { 10.1.0.0/16 }`,
    );
    expect(r.stdout).toContain(
      `set user${bob.id}_ip6_accept_layer4 {\n\t\ttype ipv6_addr . inet_proto . inet_service\n\t\tflags interval\n\t\telements = { 2001:db8::/32 . udp . 53 }`,
    );
    await loadsAsPrinted(r.stdout);

    // With the files' port_rules: false the server loads no rule with ports, and has no _layer4 sets.
    const file = ws.write('off/netform.yaml', 'version: 1\nsettings: { port_rules: false }\n');
    const off = await netform(server, ['nft', '--live', '-f', file]);
    expect(off.code, describeResult(off)).toBe(0);
    expect(off.stdout).not.toContain('layer4');
    expect(off.stdout).not.toContain('2001:db8::/32');
    expect(off.stdout).toContain('# settings.port_rules is false: 1 rule with ports left out');
    await loadsAsPrinted(off.stdout);
  });

  it('refuses to run without a server, saying how to give one', async () => {
    const r = await runCli(['nft', '--live'], { env: { NETFORM_URL: undefined, NETFORM_TOKEN: undefined } });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('no server given');
  });
});

describe('settings.port_rules: false from the command line', () => {
  const YAML = `version: 1
settings: { port_rules: false }
users:
  - email: carol@ports.test
rules:
  - { action: drop, destination: 0.0.0.0/0 }
  - { action: accept, destination: 1.2.3.4, port_type: tcp, port_range: "443" }
tests:
  - { name: dns to the https host, from: carol@ports.test/*, to: "1.2.3.4:53/udp", expect: accept }
`;

  it('validate and plan warn about the rule with ports; test evaluates it without them', async () => {
    const file = ws.write('ports/netform.yaml', YAML);
    const validate = await runCli(['validate', '-f', file]);
    expect(validate.code, describeResult(validate)).toBe(0);
    expect(validate.stderr).toMatch(
      /^warning: .*netform\.yaml:7:\d+: rules\[1\]\.port_type: settings\.port_rules is false: a 0\.7\.36 server .* stores this rule without its ports \(tcp 443\), so it accepts every protocol and port to 1\.2\.3\.4/m,
    );
    expect(validate.stdout).toContain('(1 warning)');

    const plan = await netform(server, ['plan', '-f', file]);
    expect(plan.code, describeResult(plan)).toBe(2);
    expect(plan.stderr).toMatch(
      /^warning: .*netform\.yaml:7:\d+: rules\[1\]\.port_type: settings\.port_rules is false/m,
    );

    const test = await runCli(['test', '-f', file]);
    expect(test.code, describeResult(test)).toBe(0);
    expect(test.stdout).toContain(
      'got accept by accept 1.2.3.4 (global; declared tcp 443, stored without ports as settings.port_rules is false)',
    );
  });
});
