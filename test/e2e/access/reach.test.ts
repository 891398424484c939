/**
 * End to end: `who-can-reach` and `reach` with the built CLI, offline from YAML and with --live
 * against a real server process (objects made by hand through the API, a hostile device name
 * among them), text and json, bounds, and bad input. Build first (`npm test` does).
 */
import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { runCli } from '../../helpers/cli.js';
import { openSql } from '../../helpers/store.js';
import type { TestServer } from '../../helpers/server.js';
import { create, netform, useServerAndWorkspace, wgKey, type Workspace } from '../../helpers/workspace.js';

let server: TestServer;
let ws: Workspace;
useServerAndWorkspace((started) => ({ server, ws } = started));

const STATE = `version: 1
users:
  - email: alice@example.com
    devices:
      - { name: laptop, public_key: "${wgKey()}" }
      - { name: phone, public_key: "${wgKey()}" }
    rules:
      - { action: accept, destination: 10.1.0.0/16, port_type: tcp, port_range: "22" }
  - email: bob@example.com
    devices:
      - { name: desk, public_key: "${wgKey()}" }
  - email: carol@example.com
rules:
  - { action: drop, destination: 10.0.0.0/8 }
`;

const offline = (args: string[]) => netform(server, args, { NETFORM_URL: undefined, NETFORM_TOKEN: undefined });

describe('who-can-reach (offline)', () => {
  it('a packet: accepted with the rule at file:line, stopped with the rule, no tunnel for a user without devices', async () => {
    const file = ws.write('who/netform.yaml', STATE);
    const r = await offline(['who-can-reach', '10.1.2.3:22/tcp', '-f', file]);
    expect(r.code, r.stderr).toBe(0);
    const lines = r.stdout.trim().split('\n');
    expect(lines[0]).toBe('who can reach 10.1.2.3:22/tcp (tcp 22), against the declared rules (files only):');
    expect(lines[1]).toBe('accepted by a rule: 1 user (2 devices)');
    expect(lines[2]).toMatch(
      /^ {2}alice@example\.com \(2 devices\): 10\.1\.2\.3\/32 tcp 22 by accept 10\.1\.0\.0\/16 tcp 22 \(alice@example\.com\) at .*netform\.yaml:8, user port-accept$/,
    );
    expect(lines[3]).toBe('stopped by a drop: 1 user (1 device)');
    expect(lines[4]).toMatch(
      /^ {2}1 user without own rules there \(bob@example\.com\), 1 device: 10\.1\.2\.3\/32 tcp 22 by drop 10\.0\.0\.0\/8 \(global\) at .*netform\.yaml:14, global portless-drop$/,
    );
    expect(lines.slice(5)).toEqual(['no tunnel: 1 source', '  carol@example.com: no device (no tunnel)']);
  });

  it('a bare address is any protocol and port; a block is any part of it, with the own-rule part apart', async () => {
    const file = ws.write('who2/netform.yaml', STATE);
    const bare = await offline(['who-can-reach', '10.1.2.3', '-f', file]);
    expect(bare.stdout).toContain('who can reach 10.1.2.3 (any protocol and port)');
    // alice reaches part of it: what is accepted, and what the drop stops.
    expect(bare.stdout).toMatch(
      /alice@example\.com \(2 devices\), part of it:\n {4}accepted: 10\.1\.2\.3\/32 tcp 22 by accept .*\n {4}stopped by a drop: 10\.1\.2\.3\/32 tcp 0-21, 23-65535; 10\.1\.2\.3\/32 udp 0-65535; 10\.1\.2\.3\/32 other protocols \(icmp, …\) by drop 10\.0\.0\.0\/8/,
    );
    expect(bare.stdout).toMatch(/\(bob@example\.com\), 1 device: 10\.1\.2\.3\/32 \(all protocols\) by drop/);
    const block = await offline(['who-can-reach', '10.1.0.0/15', '-f', file]);
    expect(block.code, block.stderr).toBe(0);
    const lines = block.stdout.split('\n');
    const alice = lines.indexOf('  alice@example.com (2 devices), part of it:');
    expect(lines.slice(alice + 1, alice + 5).join('\n')).toMatch(
      /^ {4}within its own rules \(10\.1\.0\.0\/16\):\n {6}accepted: 10\.1\.0\.0\/16 tcp 22 by accept 10\.1\.0\.0\/16 tcp 22 \(alice@example\.com\) at .*netform\.yaml:8, user port-accept\n {6}stopped by a drop: 10\.1\.0\.0\/16 tcp 0-21, 23-65535; .* by drop 10\.0\.0\.0\/8 \(global\) at .*netform\.yaml:14, global portless-drop\n {4}elsewhere in it: as a user without own rules there$/,
    );
    expect(block.stdout).toMatch(/\(bob@example\.com\), 1 device: 10\.0\.0\.0\/15 \(all protocols\) by drop/);

    const json = JSON.parse((await offline(['who-can-reach', '10.1.0.0/15', '-f', file, '--format', 'json'])).stdout);
    expect(json).toMatchObject({ to: '10.1.0.0/15', family: 4, against: 'declared' });
    expect(json.accepted.entries[0]).toMatchObject({
      users: ['alice@example.com'],
      devices: 2,
      verdict: 'partial',
      within: ['10.1.0.0/16'],
      reaches: [
        {
          verdict: 'accept',
          by: 'rule',
          rule: { action: 'accept', destination: '10.1.0.0/16', scope: 'user', stage: 'port-accept' },
          blocks: [{ family: 4, addresses: ['10.1.0.0/16'], protocol: 'tcp', ports: '22' }],
        },
      ],
    });
    expect(json.everyone_else).toEqual([
      expect.objectContaining({
        verdict: 'drop',
        blocks: [{ family: 4, addresses: ['10.0.0.0/15'], protocol: 'all' }],
      }),
    ]);
    expect(json.no_tunnel).toEqual({
      count: 1,
      omitted: 0,
      sources: [{ user: 'carol@example.com', reason: 'no device (no tunnel)' }],
    });
  });

  it('reaching by default is one line, listed with --all; drops are bounded at 100 with a count', async () => {
    const many = Array.from(
      { length: 150 },
      (_, i) => `  - { email: u${i}@example.com, devices: [{ name: d, public_key: "${wgKey()}" }] }`,
    );
    const file = ws.write(
      'who3/netform.yaml',
      `version: 1\nusers:\n${many.join('\n')}\nrules:\n  - { action: drop, destination: 10.9.0.0/16 }\n`,
    );
    const open = await offline(['who-can-reach', '[2001:db8::1]:443/tcp', '-f', file]);
    expect(open.stdout.trim().split('\n')).toEqual([
      'who can reach [2001:db8::1]:443/tcp (tcp 443), against the declared rules (files only):',
      'accepted by a rule: nobody',
      'by default: 150 users (150 devices) reach it only because no rule matches (0.7.36 accepts by default); a global drop (::/0) makes deny-by-default (--all lists them)',
    ]);
    const all = await offline(['who-can-reach', '[2001:db8::1]:443/tcp', '-f', file, '--all']);
    expect(all.stdout).toMatch(
      /u0@example\.com, u1@example\.com, .*u149@example\.com\), 150 devices: 2001:db8::1\/128 tcp 443 by default/,
    );
    const stopped = await offline(['who-can-reach', '10.9.1.1/icmp', '-f', file]);
    expect(stopped.stdout).toContain('stopped by a drop: 150 users (150 devices)');
    expect(stopped.stdout).toMatch(
      /150 users without own rules there \(u0@example\.com, .*u99@example\.com and 50 more\)/,
    );
    expect(stopped.stdout).not.toContain('u100@example.com');
    expect(stopped.stdout).toContain('  … and 50 more users stopped by a drop (--all lists them)');
    const json = JSON.parse((await offline(['who-can-reach', '10.9.1.1/icmp', '-f', file, '--format', 'json'])).stdout);
    expect(json.stopped).toMatchObject({ users: 150, devices: 150, omitted: 50 });
    expect(json.stopped.entries[0].users).toHaveLength(100);
  });

  it('bad input: a clear error naming what was wrong and the expected shape, no stack trace', async () => {
    const file = ws.write('who4/netform.yaml', STATE);
    for (const [to, why] of [
      ['10.1.2.3/tcp', '/tcp needs a port (ADDRESS:PORT/tcp)'],
      ['10.1.2.3/33', '/33 is longer than an IPv4 prefix (at most /32)'],
      ['db.example.com:5432/tcp', '"db.example.com:5432" is not an IP address'],
      ['10.1.2.3:22/sctp', 'a port needs /tcp or /udp'],
    ]) {
      const r = await offline(['who-can-reach', to!, '-f', file]);
      expect(r.code, to).toBe(1);
      expect(r.stdout).toBe('');
      expect(r.stderr).toBe(
        `error: TO must be ADDRESS (any protocol and port), ADDRESS/PREFIX (any part of the block), ADDRESS:PORT/tcp, ADDRESS:PORT/udp, ADDRESS/icmp or ADDRESS/other (IPv6 as [ADDRESS]:PORT/tcp); ${why}\n`,
      );
    }
    const none = await offline(['who-can-reach', '10.1.2.3']);
    expect(none.code).toBe(1);
    expect(none.stderr).toMatch(/^error: give -f PATH \(the desired state\), or --live with --url\/--embedded/);
  });
});

describe('reach (offline)', () => {
  it('what a user reaches: by rule, the server address, blocked by rule, everything else by default', async () => {
    const file = ws.write('reach/netform.yaml', STATE);
    const r = await offline(['reach', 'alice@example.com', '-f', file]);
    expect(r.code, r.stderr).toBe(0);
    const lines = r.stdout.trim().split('\n');
    expect(lines.slice(0, 3)).toEqual([
      'what alice@example.com reaches, against the declared rules (files only):',
      'IPv4 from laptop, phone:',
      '  reached by a rule:',
    ]);
    expect(lines[3]).toMatch(
      /^ {4}10\.1\.0\.0\/16 tcp 22 by accept 10\.1\.0\.0\/16 tcp 22 \(alice@example\.com\) at .*netform\.yaml:8, user port-accept$/,
    );
    expect(lines[4]).toBe("  reached always: 10.3.2.1/32 (all protocols): the server's own address (never filtered)");
    expect(lines[5]).toBe('  blocked by a rule:');
    // Exactly the /8 without the accepted tcp 22 and the server's own address (shorter as "except").
    expect(lines[6]).toMatch(
      /^ {4}10\.0\.0\.0\/8 except 10\.1\.0\.0\/16, 10\.3\.2\.1\/32 \(all protocols\); 10\.1\.0\.0\/16 tcp 0-21, 23-65535; 10\.1\.0\.0\/16 udp 0-65535; 10\.1\.0\.0\/16 other protocols \(icmp, …\) by drop 10\.0\.0\.0\/8 \(global\) at .*:14, global portless-drop$/,
    );
    expect(lines.slice(7)).toEqual([
      '  everything else: reached by default (no rule matches; 0.7.36 accepts by default)',
      'IPv6 from laptop, phone:',
      "  reached always: fd00::3:2:1/128 (all protocols): the server's own address (never filtered)",
      '  everything else: reached by default (no rule matches; 0.7.36 accepts by default)',
    ]);
  });

  it('a user with no device reaches nothing; EMAIL/* is any future device of theirs; json', async () => {
    const file = ws.write('reach2/netform.yaml', STATE);
    const none = await offline(['reach', 'carol@example.com', '-f', file]);
    expect(none.code, none.stderr).toBe(0);
    expect(none.stdout).toBe(
      'what carol@example.com reaches, against the declared rules (files only):\n' +
        'nothing: carol@example.com has no device: no tunnel, so nothing is reached (carol@example.com/* shows what any future device of theirs would reach)\n',
    );
    const future = await offline(['reach', 'carol@example.com/*', '-f', file]);
    expect(future.stdout).toContain('what carol@example.com/* (any future device of theirs) reaches');
    expect(future.stdout).toMatch(
      /\n {4}10\.0\.0\.0\/8 except 10\.3\.2\.1\/32 \(all protocols\) by drop 10\.0\.0\.0\/8/,
    );
    const json = JSON.parse((await offline(['reach', 'carol@example.com', '-f', file, '--format', 'json'])).stdout);
    expect(json).toMatchObject({ user: 'carol@example.com', against: 'declared', families: [] });
    expect(json.no_tunnel).toMatch(/has no device/);
    const device = JSON.parse(
      (await offline(['reach', 'alice@example.com/phone', '-f', file, '--format', 'json'])).stdout,
    );
    expect(device.device).toBe('phone');
    expect(device.families[0]).toMatchObject({
      family: 4,
      devices: ['phone'],
      without_address: [],
      otherwise: 'accept by default',
      reached: [
        { by: 'rule', blocks: [{ family: 4, addresses: ['10.1.0.0/16'], protocol: 'tcp', ports: '22' }] },
        { by: 'server', blocks: [{ family: 4, addresses: ['10.3.2.1/32'], protocol: 'all' }] },
      ],
    });
  });

  it('bad input: unknown user or device, malformed USER', async () => {
    const file = ws.write('reach3/netform.yaml', STATE);
    const unknown = await offline(['reach', 'dave@example.com', '-f', file]);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toBe('error: no user dave@example.com is declared\n');
    const device = await offline(['reach', 'alice@example.com/tablet', '-f', file]);
    expect(device.stderr).toBe(
      'error: user alice@example.com has no device named tablet (its devices: laptop, phone)\n',
    );
    const bad = await offline(['reach', 'alice', '-f', file]);
    expect(bad.stderr).toBe(
      `error: USER must be a user's email (each of their devices), EMAIL/DEVICE_NAME, or EMAIL/* (as any future device of theirs); "alice" has no @\n`,
    );
  });
});

describe('--live against a real server', () => {
  it('reads users, devices and rules from the server; rules named by id; hostile names inert', async () => {
    const erin = await create(server, 'users', { email: 'erin@live.test' });
    const frank = await create(server, 'users', { email: 'frank@live.test' });
    await create(server, 'users', { email: 'gina@live.test' });
    await create(server, 'devices', { user_id: erin.id, name: 'laptop\u001b[2J\n::error::pwned', public_key: wgKey() });
    await create(server, 'devices', { user_id: frank.id, name: 'desk', public_key: wgKey() });
    const rule = await create(server, 'rules', {
      action: 'accept',
      destination: '10.20.0.0/16',
      port_type: 'tcp',
      port_range: '443',
      user_id: erin.id,
    });
    await create(server, 'rules', { action: 'drop', destination: '10.20.0.0/16' });

    const who = await netform(server, ['who-can-reach', '10.20.1.1:443/tcp', '--live']);
    expect(who.code, who.stderr).toBe(0);
    expect(who.stdout).toContain('against the live server (live now)');
    expect(who.stdout).toContain(
      `  erin@live.test (1 device): 10.20.1.1/32 tcp 443 by accept 10.20.0.0/16 tcp 443 (erin@live.test) at id ${rule.id}, user port-accept`,
    );
    expect(who.stdout).toMatch(
      /without own rules there \(.*frank@live\.test.*\).*by drop 10\.20\.0\.0\/16 \(global\) at id /,
    );
    expect(who.stdout).toMatch(/ {2}gina@live\.test: no device \(no tunnel\)/);
    const json = JSON.parse(
      (await netform(server, ['who-can-reach', '10.20.1.1:443/tcp', '--live', '--format', 'json'])).stdout,
    );
    expect(json.against).toBe('live');
    expect(json.accepted.entries[0].reaches[0].rule.at).toBe(`id ${rule.id}`);

    const reach = await netform(server, ['reach', 'erin@live.test', '--live']);
    expect(reach.code, reach.stderr).toBe(0);
    // The device name from the server, made inert: no escape sequence, no new line starting a workflow command.
    expect(reach.stdout).not.toMatch(/[\u001b]/);
    expect(reach.stdout).not.toMatch(/^::error::/m);
    expect(reach.stdout).toContain('IPv4 from laptop\\u001b[2J\\u000a::error::pwned:');
    expect(reach.stdout).toContain(
      `    10.20.0.0/16 tcp 443 by accept 10.20.0.0/16 tcp 443 (erin@live.test) at id ${rule.id}, user port-accept`,
    );
    const unknown = await netform(server, ['reach', 'nobody@live.test', '--live']);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toBe('error: the server has no user nobody@live.test\n');
  });
});

describe('--live: what only a server has', () => {
  it('a disabled user has no tunnel; a device without an IPv6 address has no IPv6 tunnel', async () => {
    const hana = await create(server, 'users', { email: 'hana@live2.test' });
    const ivan = await create(server, 'users', { email: 'ivan@live2.test' });
    await create(server, 'devices', { user_id: hana.id, name: 'laptop', public_key: wgKey() });
    const phone = await create(server, 'devices', { user_id: hana.id, name: 'phone', public_key: wgKey() });
    await create(server, 'devices', { user_id: ivan.id, name: 'desk', public_key: wgKey() });
    await create(server, 'rules', { action: 'accept', destination: '2001:db8:5::/48', user_id: hana.id });
    // As a real server has them (the API cannot make them): a user disabled in the UI, and a
    // device made while the server's IPv6 was off.
    const sql = await openSql(server.dbPath);
    try {
      await sql.run('UPDATE users SET disabled_at = ? WHERE id = ?', new Date().toISOString(), ivan.id);
      await sql.run('UPDATE devices SET ipv6 = NULL WHERE id = ?', phone.id);
    } finally {
      await sql.close();
    }
    const who = await netform(server, ['who-can-reach', '[2001:db8:5::1]:22/tcp', '--live', '--all']);
    expect(who.code, who.stderr).toBe(0);
    expect(who.stdout).toMatch(
      /^ {2}hana@live2\.test \(1 device\): 2001:db8:5::1\/128 tcp 22 by accept 2001:db8:5::\/48 \(hana@live2\.test\) at id /m,
    );
    expect(who.stdout).toContain('  hana@live2.test/phone: no IPv6 address (no IPv6 tunnel)');
    expect(who.stdout).toContain(
      '  ivan@live2.test: user ivan@live2.test is disabled (its devices have no WireGuard peer)',
    );
    const reach = await netform(server, ['reach', 'hana@live2.test', '--live']);
    expect(reach.stdout).toContain('IPv4 from laptop, phone:');
    expect(reach.stdout).toContain('IPv6 from laptop (phone: no IPv6 address, no IPv6 tunnel):');
    const disabled = await netform(server, ['reach', 'ivan@live2.test', '--live']);
    expect(disabled.stdout).toContain('nothing: user ivan@live2.test is disabled (its devices have no WireGuard peer)');
  });
});

describe('shell completion', () => {
  it('offers both commands and their options', async () => {
    const script = await runCli(['completion', 'bash']);
    expect(script.code).toBe(0);
    const complete = (words: string[]) => {
      const program = `${script.stdout}\nCOMP_WORDS=(${words.map((w) => `'${w}'`).join(' ')}); COMP_CWORD=${words.length - 1}; _netform; echo "\${COMPREPLY[*]}"`;
      return spawnSync('bash', ['-c', program], { encoding: 'utf8' }).stdout.trim();
    };
    expect(complete(['netform', 'wh'])).toBe('who-can-reach');
    expect(complete(['netform', 'rea'])).toBe('reach');
    expect(complete(['netform', 'who-can-reach', '--al'])).toBe('--all');
    expect(complete(['netform', 'reach', '--li'])).toBe('--live');
  });
});
