/**
 * The YAML front end end to end on fixtures: every class of mistake is reported at the exact
 * file, line and column of the value at fault, with the path and message people read.
 */
import { describe, expect, it } from 'vitest';
import { loadDesiredState } from '../../../src/desired/index.js';
import { lazySecret } from '../../../src/desired/secrets.js';
import { formatDiagnostic } from '../../../src/views/diagnostics.js';
import type { LoadOptions } from '../../../src/desired/types.js';

const F = 'test/fixtures/desired';

async function errorsOf(path: string, options: LoadOptions = { env: {} }): Promise<string[]> {
  const result = await loadDesiredState(path, options);
  if (result.ok) throw new Error(`${path} unexpectedly loaded`);
  return result.diagnostics.map(formatDiagnostic);
}

const OVERLAP_NOTE = '(rules with the same action and the same user, or both global, must not overlap)';
const EMAIL_SHAPE =
  '(expected local@domain with no white space, control or invisible characters, at most 255 characters)';

describe('files that are not a desired state', () => {
  it('refuses an empty file and a file of comments only', async () => {
    expect(await errorsOf(`${F}/empty.yaml`)).toEqual([
      `${F}/empty.yaml:1:1: the file is empty; a desired-state file starts with \`version: 2\``,
    ]);
    expect(await errorsOf(`${F}/comment-only.yaml`)).toEqual([
      `${F}/comment-only.yaml:1:1: the file is empty; a desired-state file starts with \`version: 2\``,
    ]);
  });

  it('refuses a document that is not a mapping', async () => {
    expect(await errorsOf(`${F}/not-mapping.yaml`)).toEqual([
      `${F}/not-mapping.yaml:1:1: the file must hold a mapping (key: value pairs) that starts with \`version: 2\``,
    ]);
  });

  it('refuses an unknown version without reading further', async () => {
    expect(await errorsOf(`${F}/version-3.yaml`)).toEqual([
      `${F}/version-3.yaml:1:10: version: unsupported version 3; this netform reads version 1 or 2`,
    ]);
  });

  it('requires the version', async () => {
    expect(await errorsOf(`${F}/no-version.yaml`)).toEqual([
      `${F}/no-version.yaml:1:1: \`version\` is required (this netform reads version 1 or 2; \`export\` writes \`version: 2\`)`,
    ]);
  });

  it('reports YAML syntax errors of every file of a folder together, without the source excerpt', async () => {
    expect(await errorsOf(`${F}/syntax`)).toEqual([
      `${F}/syntax/bad-indent.yaml:4:1: YAML syntax: Sequence item without - indicator`,
      `${F}/syntax/duplicate-key.yaml:5:5: YAML syntax: Map keys must be unique`,
      `${F}/syntax/unclosed.yaml:4:1: YAML syntax: Flow map in block collection must be sufficiently indented and end with a }`,
    ]);
  });

  it('names a missing path, and a folder with no YAML file', async () => {
    expect(await errorsOf(`${F}/no-such-thing`)).toEqual([`${F}/no-such-thing: no such file or folder`]);
    expect(await errorsOf(`${F}/secrets/files`)).toEqual([
      `${F}/secrets/files: no *.yaml or *.yml file in this folder (subfolders are not read)`,
    ]);
  });
});

describe('schema', () => {
  it('catches unknown keys at the key, suggesting the closest known one', async () => {
    expect(await errorsOf(`${F}/unknown-keys.yaml`)).toEqual([
      `${F}/unknown-keys.yaml:2:1: user: unknown key; did you mean \`users\`?`,
      `${F}/unknown-keys.yaml:6:5: users[0].rol: unknown key; did you mean \`role\`?`,
      `${F}/unknown-keys.yaml:10:9: users[0].devices[0].mut: unknown key; did you mean \`mtu\`?`,
      `${F}/unknown-keys.yaml:11:9: users[0].devices[0].colour: unknown key; expected one of: name, renamed_from, expires, description, public_key, preshared_key, allowed_ips, dns, endpoint, mtu, persistent_keepalive, ipv4, ipv6, use_default_allowed_ips, use_default_dns, use_default_endpoint, use_default_mtu, use_default_persistent_keepalive, ignore_changes`,
      `${F}/unknown-keys.yaml:13:13: settings.manage.user: unknown key; did you mean \`users\`?`,
    ]);
  });

  it('catches wrong types, enumerations and missing keys, and reports each once', async () => {
    expect(await errorsOf(`${F}/types.yaml`)).toEqual([
      `${F}/types.yaml:3:10: settings.prune: must be true or false`,
      `${F}/types.yaml:6:11: users[0].role: must be one of: admin, unprivileged`,
      `${F}/types.yaml:8:15: users[0].devices[0].name: must be a string`,
      `${F}/types.yaml:12:14: users[0].devices[1].mtu: must be a whole number`,
      `${F}/types.yaml:13:22: users[0].devices[1].allowed_ips: must be a list`,
      `${F}/types.yaml:14:26: users[0].devices[1].use_default_dns: must be true or false`,
      `${F}/types.yaml:15:5: users[1]: must be a mapping (key: value pairs)`,
      `${F}/types.yaml:16:5: users[2]: \`email\` is required`,
      `${F}/types.yaml:18:15: rules[0].action: must be one of: accept, drop`,
      `${F}/types.yaml:19:34: rules[1].destination: must be a string`,
      `${F}/types.yaml:20:5: rules[2]: \`destination\` is required`,
    ]);
  });

  it('keeps file, line, column, path and message apart in the diagnostic', async () => {
    const result = await loadDesiredState(`${F}/device-fields.yaml`, { env: {} });
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.diagnostics[0]).toEqual({
      file: `${F}/device-fields.yaml`,
      line: 7,
      column: 14,
      path: 'users[0].devices[0].mtu',
      message: 'must be greater than or equal to 576',
    });
  });
});

describe('field rules of the model, at the value at fault', () => {
  it('devices: bounds, keys, lists entry by entry, endpoint, use_default contradictions, names, address families', async () => {
    expect(await errorsOf(`${F}/device-fields.yaml`)).toEqual([
      `${F}/device-fields.yaml:7:14: users[0].devices[0].mtu: must be greater than or equal to 576`,
      `${F}/device-fields.yaml:8:31: users[0].devices[0].persistent_keepalive: must be greater than or equal to 0`,
      `${F}/device-fields.yaml:11:14: users[0].devices[1].mtu: must be less than or equal to 1500`,
      `${F}/device-fields.yaml:12:31: users[0].devices[1].persistent_keepalive: must be less than or equal to 120`,
      `${F}/device-fields.yaml:14:21: users[0].devices[2].public_key: must be a base64-encoded string`,
      `${F}/device-fields.yaml:14:21: users[0].devices[2].public_key: should be 44 character(s)`,
      `${F}/device-fields.yaml:20:13: users[0].devices[3].allowed_ips[1]: is invalid (expected an IP address or CIDR block such as 10.0.0.0/8)`,
      `${F}/device-fields.yaml:21:13: users[0].devices[3].allowed_ips[2]: should not contain duplicates`,
      `${F}/device-fields.yaml:22:24: users[0].devices[3].dns[1]: is invalid (expected an IP address or a host name, without a port)`,
      `${F}/device-fields.yaml:22:38: users[0].devices[3].dns[2]: should not contain duplicates`,
      `${F}/device-fields.yaml:23:19: users[0].devices[3].endpoint: is invalid (expected host, host:port, IPv4:port, IPv6 or [IPv6]:port, with a port from 1 to 65535)`,
      `${F}/device-fields.yaml:27:14: users[0].devices[4].mtu: must not be present`,
      `${F}/device-fields.yaml:28:31: users[0].devices[4].endpoint: can't be blank`,
      `${F}/device-fields.yaml:29:15: users[0].devices[5].name: can't be blank`,
      `${F}/device-fields.yaml:31:15: users[0].devices[5].ipv4: is invalid (expected an IPv4 address such as 10.3.2.20)`,
      `${F}/device-fields.yaml:32:15: users[0].devices[5].ipv6: is invalid (expected an IPv6 address such as fd00::3:2:20)`,
    ]);
  });

  it('users: email shapes; passwords are not read at load (W3.6), their lengths are checked when read', async () => {
    expect(await errorsOf(`${F}/user-fields.yaml`)).toEqual([
      `${F}/user-fields.yaml:3:12: users[0].email: is invalid ${EMAIL_SHAPE}`,
      `${F}/user-fields.yaml:4:12: users[1].email: is invalid ${EMAIL_SHAPE}`,
    ]);
    const read = (file: string, field: 'password' | 'preshared_key') =>
      lazySecret({ file, baseDir: F }, field, {}).read();
    expect(read('secrets/files/short.password', 'password')).toEqual({ invalid: 'should be at least 12 character(s)' });
    expect(read('secrets/files/long.password', 'password')).toEqual({ invalid: 'should be at most 64 character(s)' });
    expect(read('secrets/files/short.psk', 'preshared_key')).toEqual({ invalid: 'should be 44 character(s)' });
  });

  it('rules: destinations, port ranges and the pairing of port_type with port_range', async () => {
    expect(await errorsOf(`${F}/rule-fields.yaml`)).toEqual([
      `${F}/rule-fields.yaml:3:34: rules[0].destination: is invalid (expected an IP address or CIDR block such as 10.1.0.0/16)`,
      `${F}/rule-fields.yaml:4:34: rules[1].destination: is invalid (expected an IP address or CIDR block such as 10.1.0.0/16)`,
      `${F}/rule-fields.yaml:5:34: rules[2].destination: has white space before or after its value: write the value alone`,
      `${F}/rule-fields.yaml:6:77: rules[3].port_range: bad format (expected "443", "80-443" or "80 - 443")`,
      `${F}/rule-fields.yaml:7:77: rules[4].port_range: lower value cannot be higher than upper value`,
      `${F}/rule-fields.yaml:8:77: rules[5].port_range: port is not within valid range`,
      `${F}/rule-fields.yaml:9:77: rules[6].port_range: port is not within valid range`,
      `${F}/rule-fields.yaml:10:5: rules[7].port_range: can't be blank`,
      `${F}/rule-fields.yaml:11:5: rules[8].port_type: can't be blank`,
    ]);
  });
});

describe('what Firezone 0.7.36 refuses although the server once took it', () => {
  it('a port range reaching 65535 (its ranges end at 65534), saying what to write; a blank action', async () => {
    const limit = 'port is not within valid range:';
    const why = 'reaches 65535, which Firezone 0.7.36 refuses (its ranges end at 65534)';
    expect(await errorsOf(`${F}/rule-port-limit.yaml`)).toEqual([
      `${F}/rule-port-limit.yaml:3:77: rules[0].port_range: ${limit} 1-65535 ${why}; write 1-65534, or a portless rule`,
      `${F}/rule-port-limit.yaml:4:77: rules[1].port_range: ${limit} 8000 - 65535 ${why}; write 8000-65534, or a portless rule`,
      `${F}/rule-port-limit.yaml:5:77: rules[2].port_range: ${limit} 65535 ${why}; a rule cannot name port 65535 alone: write a portless rule, which covers every port`,
      `${F}/rule-port-limit.yaml:7:15: rules[4].action: must be one of: accept, drop`,
    ]);
  });
});

describe('what only the whole state shows', () => {
  it('overlapping rules under the server rule: same owner (case-insensitive) and action, intersecting destinations and ports', async () => {
    expect(await errorsOf(`${F}/overlap.yaml`)).toEqual([
      `${F}/overlap.yaml:6:40: users[0].rules[1].destination: destination overlaps with an existing rule: accept 10.1.0.0/16 tcp 80-443 at ${F}/overlap.yaml:5:9 ${OVERLAP_NOTE}`,
      `${F}/overlap.yaml:10:40: users[0].rules[5].destination: destination overlaps with an existing rule: accept 10.2.0.0/16 at ${F}/overlap.yaml:9:9 ${OVERLAP_NOTE}`,
      `${F}/overlap.yaml:16:36: rules[1].destination: destination overlaps with an existing rule: accept 10.1.0.0/16 tcp 80-443 at ${F}/overlap.yaml:15:5 ${OVERLAP_NOTE}`,
      `${F}/overlap.yaml:18:34: rules[3].destination: destination overlaps with an existing rule: drop fd00::/16 at ${F}/overlap.yaml:17:5 ${OVERLAP_NOTE}`,
    ]);
  });

  it('with settings.port_rules false, overlaps of the rules as stored (without ports); an accept and a drop stay valid', async () => {
    const portless =
      '; settings.port_rules is false, so the server stores both without their ports, and its exclusion constraint refuses the rule created second';
    const note = `(rules with the same action and the same user, or both global, must not overlap${portless})`;
    expect(await errorsOf(`${F}/overlap-portless.yaml`)).toEqual([
      `${F}/overlap-portless.yaml:8:40: users[0].rules[1].destination: destination overlaps with an existing rule: accept 1.2.3.32/28 at ${F}/overlap-portless.yaml:7:9 ${note}`,
      `${F}/overlap-portless.yaml:16:34: rules[1].destination: destination overlaps with an existing rule: drop 192.168.0.0/16 tcp 22 at ${F}/overlap-portless.yaml:15:5 ${note}`,
    ]);
  });

  it('settings.tunnel_networks: a CIDR block of its family leaving room for devices; server_addresses inside it', async () => {
    expect(await errorsOf(`${F}/tunnel-networks.yaml`)).toEqual([
      `${F}/tunnel-networks.yaml:3:32: settings.server_addresses[1]: 10.9.9.9 is outside settings.tunnel_networks.ipv4 (10.3.2.0/29): the server's own tunnel address lies in its tunnel network`,
      `${F}/tunnel-networks.yaml:4:47: settings.tunnel_networks.ipv6: must leave room for devices (prefix at most /126)`,
    ]);
  });

  it('the same user, device, public key, pinned address, rule or absent entry twice, naming both places across files', async () => {
    expect(await errorsOf(`${F}/duplicates`)).toEqual([
      `${F}/duplicates/a.yaml:6:17: users[0].devices[1].name: has already been taken: alice@example.com already has a device named "laptop" at ${F}/duplicates/a.yaml:5:17`,
      `${F}/duplicates/b.yml:3:12: users[0].email: has already been taken: alice@example.com is also declared at ${F}/duplicates/a.yaml:3:12 (emails are compared case-insensitively)`,
      `${F}/duplicates/b.yml:6:37: users[1].devices[0].public_key: has already been taken: the same public key is declared for alice@example.com/laptop at ${F}/duplicates/a.yaml:5:37; each device needs its own key`,
      `${F}/duplicates/b.yml:6:91: users[1].devices[0].ipv4: has already been taken: alice@example.com/laptop pins the same address at ${F}/duplicates/a.yaml:5:91`,
      `${F}/duplicates/b.yml:8:34: rules[0].destination: destination overlaps with an existing rule: the same rule (drop 10.9.0.0/16) is also declared at ${F}/duplicates/a.yaml:8:5`,
      `${F}/duplicates/b.yml:10:11: absent.users[0]: gone@example.com is already listed as absent at ${F}/duplicates/a.yaml:10:11`,
    ]);
  });

  it("more devices than the server's default per-user limit", async () => {
    expect(await errorsOf(`${F}/device-limit.yaml`)).toEqual([
      `${F}/device-limit.yaml:15:9: users[0].devices[10]: Maximum device limit reached. Remove an existing device before creating a new one. (alice@example.com declares 12 devices; the server allows 10 per user unless its limit was raised)`,
    ]);
  });

  it('a manage scope that excludes declared users, absent entries and global rules (globs case-insensitive)', async () => {
    const users = 'settings.manage.users (*@Example.com, ops-*@partner.com)';
    const rules = 'settings.manage.rules (10.0.0.0/8, fd00::/8)';
    expect(await errorsOf(`${F}/scope.yaml`)).toEqual([
      `${F}/scope.yaml:9:12: users[2].email: eve@partner.com is outside ${users}: this repository does not manage it; widen the scope or remove the user`,
      `${F}/scope.yaml:14:34: rules[1].destination: 192.168.1.0/24 is outside ${rules}: this repository does not manage global rules there; widen the scope or remove the rule`,
      `${F}/scope.yaml:16:34: rules[3].destination: destination overlaps with an existing rule: drop 10.9.0.0/16 at ${F}/scope.yaml:13:5 ${OVERLAP_NOTE}`,
      `${F}/scope.yaml:16:34: rules[3].destination: 0.0.0.0/0 is outside ${rules}: this repository does not manage global rules there; widen the scope or remove the rule`,
      `${F}/scope.yaml:18:11: absent.users[0]: old@elsewhere.com is outside ${users}: this repository cannot delete it`,
      `${F}/scope.yaml:19:21: absent.devices[0].user: bob@elsewhere.com is outside ${users}: this repository cannot delete its devices`,
    ]);
  });

  it('protect together with absent, absent entries that are also declared, and bad absent entries', async () => {
    expect(await errorsOf(`${F}/protect-absent.yaml`)).toEqual([
      `${F}/protect-absent.yaml:4:31: settings.protect.users[1]: is invalid ${EMAIL_SHAPE}`,
      `${F}/protect-absent.yaml:10:11: absent.users[0]: root@example.com is protected (settings.protect.users at ${F}/protect-absent.yaml:4:13) and cannot be deleted; remove it from one of the two`,
      `${F}/protect-absent.yaml:10:29: absent.users[1]: alice@example.com is declared at ${F}/protect-absent.yaml:6:12 and listed as absent; keep one of the two`,
      `${F}/protect-absent.yaml:10:48: absent.users[2]: is invalid ${EMAIL_SHAPE}`,
      `${F}/protect-absent.yaml:12:7: absent.devices[0]: device "laptop" of alice@example.com is declared at ${F}/protect-absent.yaml:8:17 and listed as absent; keep one of the two`,
      `${F}/protect-absent.yaml:14:7: absent.devices[2]: this device is already listed as absent at ${F}/protect-absent.yaml:13:7`,
    ]);
  });

  it('settings in several files: identical ones are accepted, different ones refused naming both places', async () => {
    expect(await errorsOf(`${F}/settings-conflict`)).toEqual([
      `${F}/settings-conflict/c.yaml:3:3: settings: settings are repository-wide and already declared differently at ${F}/settings-conflict/a.yaml:3:3; declare them in one file`,
    ]);
  });

  it('configuration: repository-wide like settings (an identical copy is fine), unknown keys named', async () => {
    expect(await errorsOf(`${F}/configuration-conflict`)).toEqual([
      `${F}/configuration-conflict/c.yaml:4:3: configuration: configuration is repository-wide and already declared differently at ${F}/configuration-conflict/a.yaml:3:3; declare it in one file`,
      `${F}/configuration-conflict/c.yaml:5:3: configuration.default_client_mtu_typo: unknown key; did you mean \`default_client_mtu\`?`,
    ]);
    const loaded = await loadDesiredState(`${F}/configuration-conflict/a.yaml`, { env: {} });
    expect(loaded.ok && loaded.state.configuration?.values).toEqual({ default_client_mtu: 1380 });
  });

  it('limits: a count or a percentage, in each document of a multi-document file', async () => {
    expect(await errorsOf(`${F}/limits.yaml`)).toEqual([
      `${F}/limits.yaml:4:13: settings.limits.delete: must be a count of objects (such as 5) or a percentage of the live objects (such as "10%")`,
      `${F}/limits.yaml:5:13: settings.limits.update: must be a count of objects (such as 5) or a percentage of the live objects (such as "10%")`,
      `${F}/limits.yaml:9:3: settings: settings are repository-wide and already declared differently at ${F}/limits.yaml:3:3; declare them in one file`,
    ]);
  });
});

describe('secrets', () => {
  it('refuses literal secrets without repeating them, and references of no known kind', async () => {
    const errors = await errorsOf(`${F}/secrets/literal.yaml`);
    const literal =
      'a secret must not be written in the file; reference it instead as { env: VARIABLE_NAME } (an environment variable) or { file: path/to/file } (a file, relative to this one)';
    expect(errors).toEqual([
      `${F}/secrets/literal.yaml:4:15: users[0].password: ${literal}`,
      `${F}/secrets/literal.yaml:8:24: users[0].devices[0].preshared_key: ${literal}`,
      `${F}/secrets/literal.yaml:11:24: users[0].devices[1].preshared_key: a secret reference names exactly one source: { env: VARIABLE_NAME } or { file: path/to/file }`,
      `${F}/secrets/literal.yaml:14:26: users[0].devices[2].preshared_key.vault: unknown key; expected one of: env, file`,
    ]);
    expect(errors.join('\n')).not.toContain('correct horse');
    expect(errors.join('\n')).not.toContain('2ZMa7htbbmXCkIQhmVMyh9BxJ');
  });

  it('names the missing variable or file and where it is referenced: a warning; a file breaking a rule: an error', async () => {
    const result = await loadDesiredState(`${F}/secrets/missing.yaml`, { env: { NETFORM_TEST_EMPTY_PASSWORD: '' } });
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.diagnostics.map(formatDiagnostic)).toEqual([
      `${F}/secrets/missing.yaml:11:24: users[0].devices[1].preshared_key: secret file files is not a regular file (it is a folder)`,
    ]);
    const password = '(read only when it is sent: when plan or apply creates the user, or with --rotate-passwords)';
    const psk = '(read by plan, apply and drift of this device, which compare it with the server)';
    expect(result.warnings?.map(formatDiagnostic)).toEqual([
      `${F}/secrets/missing.yaml:4:15: users[0].password: environment variable NETFORM_TEST_UNSET_PASSWORD is not set ${password}`,
      `${F}/secrets/missing.yaml:8:24: users[0].devices[0].preshared_key: secret file files/no-such.psk cannot be read (${F}/secrets/files/no-such.psk): no such file ${psk}`,
      `${F}/secrets/missing.yaml:16:15: users[1].password: environment variable NETFORM_TEST_EMPTY_PASSWORD is empty ${password}`,
    ]);
    // A file of line breaks only is found empty where it is read (the load does not read it).
    expect(lazySecret({ file: 'files/empty.psk', baseDir: `${F}/secrets` }, 'preshared_key', {}).read()).toEqual({
      unreadable: `secret file files/empty.psk is empty (${F}/secrets/files/empty.psk)`,
    });
  });
});
