import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { GLOBAL_RULES_FILE_NAME, SINGLE_FILE_NAME, userFileName } from '../../../src/desired/export/files.js';
import { exportDesiredState } from '../../../src/desired/export/index.js';
import { ExportError } from '../../../src/desired/export/types.js';
import type { ApiDevice, ApiRule, ApiUser, LiveState } from '../../../src/model/index.js';
import { KEY_A, liveDevice, liveUser } from '../../helpers/plan-fixtures.js';

const T = '2024-01-02T03:04:05.000000Z';
const KEY_B = 'AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=';
const PSK = 'cHJlc2hhcmVka2V5cHJlc2hhcmVka2V5cHJlc2hhcmU=';

function user(id: string, email: string, role: ApiUser['role'] = 'unprivileged'): ApiUser {
  return liveUser(email, { id, role, inserted_at: T, updated_at: T });
}

// With the flags on, responses show the server's defaults (liveDevice's): export must not write them.
function device(id: string, userId: string, name: string, overrides: Partial<ApiDevice> = {}): ApiDevice {
  return liveDevice({ id: userId } as ApiUser, name, {
    id,
    preshared_key: PSK,
    server_public_key: KEY_B,
    inserted_at: T,
    updated_at: T,
    ...overrides,
  });
}

function rule(
  id: string,
  action: ApiRule['action'],
  destination: string,
  userId: string | null = null,
  ports?: [ApiRule['port_type'], string],
): ApiRule {
  return {
    id,
    action,
    destination,
    port_type: ports?.[0] ?? null,
    port_range: ports?.[1] ?? null,
    user_id: userId,
    inserted_at: T,
    updated_at: T,
  };
}

function single(live: LiveState, options: Partial<Parameters<typeof exportDesiredState>[1]> = {}) {
  const result = exportDesiredState(live, { schemaRef: 'schemas/netform.schema.json', ...options });
  expect(result.files).toHaveLength(1);
  return { text: result.files[0]!.content, doc: parse(result.files[0]!.content), result };
}

describe('export mapping', () => {
  it('writes the schema comment first, version 1, users by email and devices by name', () => {
    const live: LiveState = {
      users: [user('u2', 'zed@example.com'), user('u1', 'Alice@example.com', 'admin'), user('u3', 'bob@example.com')],
      devices: [device('d2', 'u1', 'phone', { public_key: KEY_B }), device('d1', 'u1', 'laptop')],
      rules: [],
    };
    const { text, doc, result } = single(live);
    expect(text.split('\n')[0]).toBe('# yaml-language-server: $schema=schemas/netform.schema.json');
    expect(result.files[0]!.name).toBe(SINGLE_FILE_NAME);
    expect(doc.version).toBe(1);
    expect(doc.users.map((u: { email: string }) => u.email)).toEqual([
      'Alice@example.com',
      'bob@example.com',
      'zed@example.com',
    ]);
    expect(doc.users[0].devices.map((d: { name: string }) => d.name)).toEqual(['laptop', 'phone']);
    expect(result.counts).toEqual({ users: 3, devices: 2, rules: 0 });
  });

  it('leaves out fields at their defaults: role unprivileged, use_default_<x> on', () => {
    const live: LiveState = {
      users: [user('u1', 'a@example.com'), user('u2', 'b@example.com', 'admin')],
      devices: [device('d1', 'u1', 'laptop')],
      rules: [],
    };
    const { doc } = single(live);
    expect(doc.users[0]).toEqual({
      email: 'a@example.com',
      devices: [{ name: 'laptop', public_key: KEY_A, ipv4: '10.3.2.2', ipv6: 'fd00::3:2:2' }],
    });
    expect(doc.users[1]).toEqual({ email: 'b@example.com', role: 'admin' });
  });

  it('writes the defaults too with explicitDefaults (the same meaning: left out, they are managed at them)', () => {
    const live: LiveState = {
      users: [user('u1', 'a@example.com'), user('u2', 'b@example.com', 'admin')],
      devices: [device('d1', 'u1', 'laptop', { use_default_mtu: false, mtu: 1380 })],
      rules: [],
    };
    const { doc, text } = single(live, { explicitDefaults: true });
    expect(doc.users[0]).toEqual({
      email: 'a@example.com',
      role: 'unprivileged',
      devices: [
        {
          name: 'laptop',
          public_key: KEY_A,
          ipv4: '10.3.2.2',
          ipv6: 'fd00::3:2:2',
          mtu: 1380,
          use_default_allowed_ips: true,
          use_default_dns: true,
          use_default_endpoint: true,
          use_default_persistent_keepalive: true,
        },
      ],
    });
    expect(doc.users[1]).toEqual({ email: 'b@example.com', role: 'admin' });
    expect(text).toMatch(/^# - Fields left out are managed at their default/m);
    // The effective default values the server shows are still not written.
    expect(text).not.toContain('0.0.0.0/0');
  });

  it('writes values off their defaults, with the flag only when the value does not imply it', () => {
    const live: LiveState = {
      users: [user('u1', 'a@example.com')],
      devices: [
        device('d1', 'u1', 'custom', {
          description: 'build box',
          use_default_allowed_ips: false,
          allowed_ips: ['10.0.0.0/8', 'fd00::/8'],
          use_default_dns: false,
          dns: ['10.0.0.53', 'dns.internal'],
          use_default_endpoint: false,
          endpoint: '[2001:db8::1]:51820',
          use_default_mtu: false,
          mtu: 1380,
          use_default_persistent_keepalive: false,
          persistent_keepalive: 0,
        }),
        device('d2', 'u1', 'empty', {
          use_default_allowed_ips: false,
          allowed_ips: [],
          use_default_dns: false,
          dns: null,
          use_default_mtu: false,
          mtu: null,
        }),
      ],
      rules: [],
    };
    const { doc } = single(live);
    const [custom, empty] = [doc.users[0].devices[0], doc.users[0].devices[1]];
    expect(custom.name).toBe('custom');
    expect(custom).toEqual({
      name: 'custom',
      description: 'build box',
      public_key: KEY_A,
      ipv4: '10.3.2.2',
      ipv6: 'fd00::3:2:2',
      allowed_ips: ['10.0.0.0/8', 'fd00::/8'],
      dns: ['10.0.0.53', 'dns.internal'],
      endpoint: '[2001:db8::1]:51820',
      mtu: 1380,
      persistent_keepalive: 0,
    });
    expect(empty).toEqual({
      name: 'empty',
      public_key: KEY_A,
      ipv4: '10.3.2.2',
      ipv6: 'fd00::3:2:2',
      use_default_allowed_ips: false,
      use_default_dns: false,
      use_default_mtu: false,
    });
  });

  it('never writes a preshared key or a password, and says how to manage them', () => {
    const live: LiveState = {
      users: [user('u1', 'a@example.com')],
      devices: [device('d1', 'u1', 'laptop')],
      rules: [],
    };
    const { text } = single(live);
    expect(text).not.toContain(PSK);
    expect(text).not.toMatch(/^\s*preshared_key:/m);
    expect(text).not.toMatch(/^\s*password:/m);
    expect(text).toMatch(/^# .*preshared_key: \{ env: NAME \}.*preshared_key: \{ file: /m);
    expect(text).toMatch(/^# .*password: \{ env: NAME \}/m);
  });

  it('pins tunnel addresses by default and leaves them out with addresses: false', () => {
    const live: LiveState = {
      users: [user('u1', 'a@example.com')],
      devices: [device('d1', 'u1', 'laptop', { ipv6: null })],
      rules: [],
    };
    expect(single(live).doc.users[0].devices[0]).toEqual({ name: 'laptop', public_key: KEY_A, ipv4: '10.3.2.2' });
    const unpinned = single(live, { addresses: false });
    expect(unpinned.doc.users[0].devices[0]).toEqual({ name: 'laptop', public_key: KEY_A });
    expect(unpinned.text).toMatch(/^# .*ipv4, ipv6\) are left out/m);
  });

  it('writes rules under their user or globally, ordered, with ports shortened', () => {
    const live: LiveState = {
      users: [user('u1', 'a@example.com'), user('u2', 'b@example.com')],
      devices: [],
      rules: [
        rule('r1', 'drop', '10.10.0.0/16'),
        rule('r2', 'drop', '10.9.0.0/16'),
        rule('r3', 'accept', 'fd00::/64'),
        rule('r4', 'accept', '10.1.0.0/16', 'u1', ['tcp', '443 - 443']),
        rule('r5', 'accept', '10.1.0.0/16', 'u1', ['tcp', '80 - 88']),
        rule('r6', 'accept', '10.0.0.1', 'u1', ['udp', '53']),
        rule('r7', 'drop', '192.168.0.0/24', 'u1'),
      ],
    };
    const { doc, text } = single(live);
    expect(doc.rules).toEqual([
      { action: 'accept', destination: 'fd00::/64' },
      { action: 'drop', destination: '10.9.0.0/16' },
      { action: 'drop', destination: '10.10.0.0/16' },
    ]);
    expect(doc.users[0].rules).toEqual([
      { action: 'accept', destination: '10.0.0.1', port_type: 'udp', port_range: '53' },
      { action: 'accept', destination: '10.1.0.0/16', port_type: 'tcp', port_range: '80-88' },
      { action: 'accept', destination: '10.1.0.0/16', port_type: 'tcp', port_range: '443' },
      { action: 'drop', destination: '192.168.0.0/24' },
    ]);
    // Users without devices or rules are exported too, with nothing but their email.
    expect(doc.users[1]).toEqual({ email: 'b@example.com' });
    // One rule per line, as docs/netform.md's example writes them; port ranges stay strings.
    expect(text).toContain('- { action: accept, destination: 10.1.0.0/16, port_type: tcp, port_range: "443" }');
  });

  it('gives the same text for the same state whatever the listing order', () => {
    const users = [user('u1', 'a@example.com'), user('u2', 'b@example.com', 'admin')];
    const devices = [device('d1', 'u1', 'x'), device('d2', 'u1', 'y', { public_key: KEY_B }), device('d3', 'u2', 'z')];
    const rules = [
      rule('r1', 'drop', '10.0.0.0/8'),
      rule('r2', 'accept', '10.0.0.0/8', 'u2'),
      rule('r3', 'accept', '10.0.0.0/8', null, ['tcp', '22']),
    ];
    const a = exportDesiredState({ users, devices, rules }, { schemaRef: 's' }).files[0]!.content;
    const b = exportDesiredState(
      { users: [...users].reverse(), devices: [...devices].reverse(), rules: [...rules].reverse() },
      { schemaRef: 's' },
    ).files[0]!.content;
    expect(b).toBe(a);
  });

  it('splits into one file per user plus one for global rules', () => {
    const live: LiveState = {
      users: [user('u1', 'Alice@Example.com', 'admin'), user('u2', 'bob@example.com')],
      devices: [device('d1', 'u1', 'laptop')],
      rules: [rule('r1', 'drop', '10.9.0.0/16'), rule('r2', 'accept', '10.1.0.0/16', 'u2')],
    };
    const result = exportDesiredState(live, { schemaRef: 's', split: true });
    expect(result.files.map((f) => f.name)).toEqual([
      'alice@example.com.yaml',
      'bob@example.com.yaml',
      GLOBAL_RULES_FILE_NAME,
    ]);
    const docs = result.files.map((f) => parse(f.content));
    for (const f of result.files) expect(f.content.startsWith('# yaml-language-server: $schema=s\n')).toBe(true);
    expect(docs[0]).toEqual({
      version: 1,
      users: [
        {
          email: 'Alice@Example.com',
          role: 'admin',
          devices: [{ name: 'laptop', public_key: KEY_A, ipv4: '10.3.2.2', ipv6: 'fd00::3:2:2' }],
        },
      ],
    });
    expect(docs[1]).toEqual({
      version: 1,
      users: [{ email: 'bob@example.com', rules: [{ action: 'accept', destination: '10.1.0.0/16' }] }],
    });
    expect(docs[2]).toEqual({
      version: 1,
      settings: { prune: true },
      rules: [{ action: 'drop', destination: '10.9.0.0/16' }],
    });
  });

  it('refuses to guess when the server lists an owner it does not have or two objects with one key', () => {
    const orphanDevice: LiveState = {
      users: [user('u1', 'a@example.com')],
      devices: [device('d1', 'u9', 'laptop')],
      rules: [],
    };
    expect(() => exportDesiredState(orphanDevice, { schemaRef: 's' })).toThrow(ExportError);
    expect(() => exportDesiredState(orphanDevice, { schemaRef: 's' })).toThrow(
      /device d1 \("laptop"\) belongs to user u9/,
    );
    const sameRule: LiveState = {
      users: [],
      devices: [],
      rules: [rule('r1', 'drop', '10.0.0.0/8'), rule('r2', 'drop', '10.0.0.0/8')],
    };
    expect(() => exportDesiredState(sameRule, { schemaRef: 's' })).toThrow(/rules r1 and r2 are the same rule/);
  });

  it('leaves out users whose emails are one key, and what belongs to them, naming them by id', () => {
    const twins: LiveState = {
      users: [user('u1', 'a@example.com'), user('u2', 'A@example.com'), user('u3', 'b@example.com')],
      devices: [device('d1', 'u1', 'laptop'), device('d3', 'u3', 'phone', { public_key: KEY_B })],
      rules: [rule('r2', 'accept', '10.0.0.0/8', 'u2'), rule('r3', 'drop', '10.1.0.0/16', 'u3')],
    };
    const result = exportDesiredState(twins, { schemaRef: 's' });
    expect(result.leftOut).toEqual([
      'user u1: its email is the same as that of user u2 (emails compare by lower case); with its device d1',
      'user u2: its email is the same as that of user u1 (emails compare by lower case); with its rule r2',
    ]);
    expect(result.counts).toEqual({ users: 1, devices: 1, rules: 1 });
    const [text] = result.files.map((f) => f.content);
    const doc = parse(text!);
    expect(doc.users.map((u: { email: string }) => u.email)).toEqual(['b@example.com']);
    expect(text).toContain('# - user u1: its email is the same as that of user u2');
    expect(text).toContain('# Exported by `netform export`: 1 user, 1 device, 1 rule.');
  });

  it('leaves out a user whose email validate refuses and a device whose name or description it refuses, never quoting them', () => {
    const live: LiveState = {
      users: [
        user('u1', '\u212Aaren@example.com'),
        user('u2', '\u202Emoc.elpmaxe@nimda'),
        user('u3', 'ok@example.com'),
        user('u4', 'no at sign'),
      ],
      devices: [
        device('d1', 'u1', 'laptop'),
        device('d3', 'u3', 'lap\u0000top'),
        device('d4', 'u3', 'desk', { description: 'x\u0000' }),
        device('d5', 'u3', 'phone', { public_key: KEY_B }),
        device('d6', 'u3', '\ufffd\ufffd\ufffd'),
        device('d7', 'u3', '\ufffd\ufffd\ufffd '),
      ],
      rules: [rule('r1', 'accept', '10.0.0.0/8', 'u1'), rule('r3', 'accept', '10.0.0.0/8', 'u3')],
    };
    const result = exportDesiredState(live, { schemaRef: 's' });
    expect(result.leftOut).toEqual([
      expect.stringMatching(
        /^user u1: its email is refused by validate: it holds U\+212A, whose lower case "k" .*; with its device d1 and rule r1$/,
      ),
      'user u2: its email is refused by validate: it holds the control or invisible character U+202E',
      'user u4: its email is refused by validate: it is not local@domain without white space, at most 255 characters',
      'device d3 of user u3: its name is refused by validate: it holds a NUL or a lone UTF-16 surrogate',
      'device d4 of user u3: its description is refused by validate: it holds a NUL or a lone UTF-16 surrogate',
      'device d6 of user u3: its name is the same as that of device d7',
      'device d7 of user u3: its name is the same as that of device d6',
    ]);
    for (const line of result.leftOut) expect(line).not.toMatch(/[\u0000\u202e\u212a]|karen|nimda/i);
    const doc = parse(result.files[0]!.content);
    expect(doc.users).toEqual([
      {
        email: 'ok@example.com',
        devices: [{ name: 'phone', public_key: KEY_B, ipv4: '10.3.2.2', ipv6: 'fd00::3:2:2' }],
        rules: [{ action: 'accept', destination: '10.0.0.0/8' }],
      },
    ]);
  });

  it('strips credentials from the server shown in the header', () => {
    const { text } = single(
      { users: [], devices: [], rules: [] },
      { server: 'https://admin:hunter2@vpn.example.com:8443/?token=abc' },
    );
    expect(text).toContain('from https://vpn.example.com:8443:');
    expect(text).not.toContain('hunter2');
    expect(text).not.toContain('abc');
  });
});

describe('file names of --split', () => {
  it('keeps ordinary emails readable, lower case', () => {
    expect(userFileName('Alice.Smith+vpn@Example.com')).toBe('alice.smith+vpn@example.com.yaml');
  });

  it('percent-encodes anything a file system could take badly', () => {
    const name = userFileName('a/b\\c:"d*?<>|%é@x.com');
    expect(name).toBe('a%2Fb%5Cc%3A%22d%2A%3F%3C%3E%7C%25%C3%A9@x.com.yaml');
    expect(name).toMatch(/^[a-z0-9@._+%~-]+$/i);
    expect(userFileName('..@x')).toBe('%2E.@x.yaml');
  });

  it('bounds the length and keeps long emails apart', () => {
    const a = userFileName(`${'a'.repeat(240)}1@example.com`);
    const b = userFileName(`${'a'.repeat(240)}2@example.com`);
    expect(Buffer.byteLength(a)).toBeLessThanOrEqual(255);
    expect(a).not.toBe(b);
  });
});

describe('export owns the server: settings.prune', () => {
  const live: LiveState = { users: [user('u1', 'a@example.com')], devices: [], rules: [] };

  it('writes settings: { prune: true } and says so in the header', () => {
    const text = exportDesiredState(live, { schemaRef: 's' }).files[0]!.content;
    expect(parse(text)).toMatchObject({ version: 1, settings: { prune: true } });
    expect(text).toContain(
      '# `settings: { prune: true }`: this repository owns the server, so apply deletes what no file declares',
    );
  });

  it('with prune: false (--no-prune) writes no settings, and the header says prune is off', () => {
    const text = exportDesiredState(live, { schemaRef: 's', prune: false }).files[0]!.content;
    expect(parse(text).settings).toBeUndefined();
    expect(text).toContain('# Prune is off (exported with --no-prune)');
  });

  it('split: the settings are written once, in the global rules file', () => {
    const files = exportDesiredState(live, { schemaRef: 's', split: true }).files;
    expect(files.filter((f) => parse(f.content).settings !== undefined).map((f) => f.name)).toEqual([
      GLOBAL_RULES_FILE_NAME,
    ]);
  });
});
