/**
 * The 14 everyday pull-request edits of an adopted repository, re-run end to end (W3.5): a server
 * filled by hand over HTTP is adopted with `export`; then each edit changes the YAML, is planned
 * (`plan --format json -o`, the saved plan a reviewer approves), applied (`apply PLAN`), and the
 * server is read back over HTTP. What changed must be exactly what the plan said: the objects
 * created, updated and deleted, and each field's new value; nothing else may change. Then the
 * hand changes drift must see (a hand promotion, an endpoint changed after export: exit 2).
 *
 * Effects a plan names as effective values count as named: a configuration change's devices whose
 * effective mtu/dns it changes, and the tunnel a `use_default_allowed_ips` flip gives a device.
 *
 * One server for the file; the edits run in order, each on the repository the previous one left.
 */
import { readFileSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import { deviceKey, normalizeAllowedIps, normalizeDns, ruleKey, userKey } from '../../../src/model/keys.js';
import type { TestServer } from '../../helpers/server.js';
import {
  create,
  describeResult,
  netform,
  useServerAndWorkspace,
  wgKey,
  type Workspace,
} from '../../helpers/workspace.js';

type Obj = Record<string, any>;
interface Live {
  users: Map<string, Obj>;
  devices: Map<string, Obj>;
  rules: Map<string, Obj>;
  configuration: Obj;
}
interface JsonChange {
  id: string;
  kind: 'user' | 'device' | 'rule' | 'configuration';
  action: 'create' | 'update' | 'delete' | 'replace';
  key: string;
  label: string;
  liveId?: string;
  fields: { field: string; before: unknown; after: unknown; sensitive?: boolean }[];
  cascade?: { kind: string; liveId: string }[];
  /** Effective values the change moves (a use_default flip; a default_client change's devices). */
  effective?: { device: string; field: string; before: unknown; after: unknown }[];
}
interface JsonPlan {
  changes: JsonChange[];
  summary: { create: number; update: number; delete: number; replace: number; cascade: number };
  outcome: { status: string };
  warnings: string[];
}

/** Fields the server sets by itself: never part of a plan. */
const SERVER_SET = new Set([
  'id',
  'inserted_at',
  'updated_at',
  'last_signed_in_at',
  'last_signed_in_method',
  'disabled_at',
  'remote_ip',
  'latest_handshake',
  'rx_bytes',
  'tx_bytes',
  'server_public_key',
  'logo',
  'openid_connect_providers',
  'saml_identity_providers',
]);

const KEYS = {
  aliceLaptop: wgKey(),
  alicePhone: wgKey(),
  bobLaptop: wgKey(),
  carolLaptop: wgKey(),
  daveDesktop: wgKey(),
  judyOldLaptop: wgKey(),
  heidiLaptop: wgKey(),
  newhireLaptop: wgKey(),
};
const NEWHIRE_PASSWORD = 'a long enough password 42';
const NEWHIRE_PSK = wgKey();

async function readLive(server: TestServer): Promise<Live> {
  const get = async (path: string) => {
    const res = await server.api('GET', path);
    expect(res.status, `GET ${path}`).toBe(200);
    return res.body.data;
  };
  const [users, devices, rules, configuration] = await Promise.all(
    ['/v0/users', '/v0/devices', '/v0/rules', '/v0/configuration'].map(get),
  );
  const byId = (list: Obj[]) => new Map(list.map((o) => [o.id as string, o]));
  return { users: byId(users), devices: byId(devices), rules: byId(rules), configuration };
}

/** The natural key of a live object, as the plan's change keys are written (src/model/keys.ts). */
function keyOf(kind: 'user' | 'device' | 'rule', object: Obj, live: Live): string {
  const owner = (id: string | null) => (id === null ? null : live.users.get(id)!.email);
  if (kind === 'user') return userKey(object.email);
  if (kind === 'device') return deviceKey(owner(object.user_id)!, object.name);
  return ruleKey({
    ownerEmail: owner(object.user_id ?? null),
    action: object.action,
    destination: object.destination,
    port_type: object.port_type ?? null,
    port_range: object.port_range ?? null,
  });
}

function sameValue(field: string, a: unknown, b: unknown): boolean {
  const lists = Array.isArray(a) && Array.isArray(b);
  if (lists && (field === 'allowed_ips' || field === 'default_client_allowed_ips'))
    return JSON.stringify(normalizeAllowedIps(a as string[])) === JSON.stringify(normalizeAllowedIps(b as string[]));
  if (lists && (field === 'dns' || field === 'default_client_dns'))
    return JSON.stringify(normalizeDns(a as string[])) === JSON.stringify(normalizeDns(b as string[]));
  return JSON.stringify(a ?? null) === JSON.stringify(b ?? null);
}

/** The fields of a live object that differ between two reads, server-set ones left out. */
function changedFields(before: Obj, after: Obj): string[] {
  return Object.keys({ ...before, ...after }).filter((f) => !SERVER_SET.has(f) && !sameValue(f, before[f], after[f]));
}

const KINDS = [
  ['user', 'users'],
  ['device', 'devices'],
  ['rule', 'rules'],
] as const;

/**
 * Every difference between what the plan said and what the two reads show, in words; [] when the
 * plan is exactly what happened. A field changed that no change names (say, a device's effective
 * mtu after a configuration change) is a difference too.
 */
function planVersusServer(plan: JsonPlan, before: Live, after: Live): string[] {
  const problems: string[] = [];
  const said = (kind: string, actions: string[]) =>
    plan.changes.filter((c) => c.kind === kind && actions.includes(c.action));
  for (const [kind, collection] of KINDS) {
    const gone = [...before[collection].keys()].filter((id) => !after[collection].has(id));
    const added = [...after[collection].keys()].filter((id) => !before[collection].has(id));
    // Deleted: by a delete or a replace of the object, or with its user (the cascade).
    const toDelete = new Set([
      ...said(kind, ['delete', 'replace']).map((c) => c.liveId!),
      ...plan.changes.flatMap((c) => (c.cascade ?? []).filter((i) => i.kind === kind).map((i) => i.liveId)),
    ]);
    for (const id of gone)
      if (!toDelete.has(id))
        problems.push(
          `${kind} ${keyOf(kind, before[collection].get(id)!, before)} was deleted; the plan did not say so`,
        );
    for (const id of toDelete)
      if (!gone.includes(id)) problems.push(`${kind} ${id}: the plan deletes it, but it is still there`);
    // Created: one new object per create or replace, with the change's key.
    const createdKeys = added.map((id) => keyOf(kind, after[collection].get(id)!, after)).sort();
    const plannedKeys = said(kind, ['create', 'replace'])
      .map((c) => c.key)
      .sort();
    if (JSON.stringify(createdKeys) !== JSON.stringify(plannedKeys))
      problems.push(`${kind}s created: ${JSON.stringify(createdKeys)}; the plan said ${JSON.stringify(plannedKeys)}`);
    // The new objects hold the values the plan showed.
    for (const change of said(kind, ['create', 'replace'])) {
      const id = added.find((a) => keyOf(kind, after[collection].get(a)!, after) === change.key);
      if (!id) continue;
      const object = after[collection].get(id)!;
      for (const f of change.fields) {
        if (f.sensitive || f.field === 'user' || f.field === 'password' || f.field === 'preshared_key') continue;
        if (!sameValue(f.field, f.after, object[f.field]))
          problems.push(
            `${change.id}: ${f.field} is ${JSON.stringify(object[f.field])}; the plan said ${JSON.stringify(f.after)}`,
          );
      }
    }
    // Updated: each field that changed is named by an update of that object, with its new value.
    for (const [id, old] of before[collection]) {
      const now = after[collection].get(id);
      if (!now) continue;
      const update = plan.changes.find((c) => c.kind === kind && c.action === 'update' && c.liveId === id);
      const changed = changedFields(old, now);
      for (const field of changed) {
        const named = update?.fields.find((f) => f.field === field);
        // An effective value the plan names (a default it changes, a use_default flip), with its new value.
        const effective = plan.changes
          .flatMap((c) => c.effective ?? [])
          .find((e) => kind === 'device' && e.device === keyOf(kind, now, after) && e.field === field);
        if (!named && effective) {
          if (!sameValue(field, effective.after, now[field]))
            problems.push(
              `device ${effective.device}: ${field} is ${JSON.stringify(now[field])}; the plan said its effective value becomes ${JSON.stringify(effective.after)}`,
            );
        } else if (!named)
          problems.push(
            `${kind} ${keyOf(kind, now, after)}: ${field} ${JSON.stringify(old[field])} -> ${JSON.stringify(now[field])}, which the plan does not name`,
          );
        else if (!sameValue(field, named.after, now[field]))
          problems.push(
            `${update!.id}: ${field} is ${JSON.stringify(now[field])}; the plan said ${JSON.stringify(named.after)}`,
          );
      }
      for (const f of update?.fields ?? []) {
        if (f.sensitive) continue;
        if (!changed.includes(f.field) && !sameValue(f.field, f.after, now[f.field]))
          problems.push(
            `${update!.id}: the plan changes ${f.field} to ${JSON.stringify(f.after)}; it is ${JSON.stringify(now[f.field])}`,
          );
        if (!changed.includes(f.field) && sameValue(f.field, f.before, now[f.field]))
          problems.push(`${update!.id}: the plan changes ${f.field}, which did not change`);
      }
    }
    for (const change of said(kind, ['update']))
      if (!before[collection].has(change.liveId!) || !after[collection].has(change.liveId!))
        problems.push(`${change.id}: the plan updates it, but it was not there before and after`);
  }
  // The configuration: the fields that changed are those the plan names, with those values.
  const configuration = plan.changes.find((c) => c.kind === 'configuration');
  const changed = changedFields(before.configuration, after.configuration);
  for (const field of changed) {
    const named = configuration?.fields.find((f) => f.field === field);
    if (!named) problems.push(`configuration: ${field} changed, which the plan does not name`);
    else if (!sameValue(field, named.after, after.configuration[field]))
      problems.push(
        `configuration: ${field} is ${JSON.stringify(after.configuration[field])}; the plan said ${JSON.stringify(named.after)}`,
      );
  }
  for (const f of configuration?.fields ?? [])
    if (!changed.includes(f.field)) problems.push(`configuration: the plan changes ${f.field}, which did not change`);
  return problems;
}

let server: TestServer;
let ws: Workspace;
let doc: Obj;
/** The repository's one file, as export wrote it and the edits left it. */
const FILE = 'repo/netform.yaml';
const ENV = { NEWHIRE_PASSWORD };

useServerAndWorkspace(
  (started) => ({ server, ws } = started),
  async (s) => {
    // Filled by hand, as a person would, before netform ever saw it: 7 users, 7 devices, 9 rules.
    const user = (email: string, role = 'unprivileged') => create(s, 'users', { email, role });
    await user('ops-admin@corp.example', 'admin');
    const alice = await user('alice@corp.example', 'admin');
    const bob = await user('bob@corp.example');
    const carol = await user('carol@corp.example');
    const dave = await user('dave@corp.example');
    const heidi = await user('heidi@corp.example');
    const judy = await user('judy@corp.example');
    const device = (owner: Obj, name: string, public_key: string, extra: Obj = {}) =>
      create(s, 'devices', { user_id: owner.id, name, public_key, ...extra });
    await device(alice, 'laptop', KEYS.aliceLaptop, { description: "Alice's laptop" });
    await device(alice, 'phone', KEYS.alicePhone);
    await device(bob, 'laptop', KEYS.bobLaptop, { use_default_mtu: false, mtu: 1380 });
    await device(carol, 'laptop', KEYS.carolLaptop, { use_default_allowed_ips: false, allowed_ips: ['10.0.0.0/8'] });
    await device(dave, 'desktop', KEYS.daveDesktop);
    await device(heidi, 'laptop', KEYS.heidiLaptop);
    await device(judy, 'old-laptop', KEYS.judyOldLaptop);
    const rule = (body: Obj) => create(s, 'rules', body);
    await rule({ action: 'accept', destination: '10.7.0.0/16', port_type: 'tcp', port_range: '22' });
    await rule({ action: 'accept', destination: '10.1.0.0/16' });
    await rule({ action: 'drop', destination: '10.9.0.0/16' });
    await rule({ action: 'drop', destination: '10.7.0.0/16' });
    await rule({ action: 'accept', destination: '10.60.0.0/16' });
    await rule({ user_id: alice.id, action: 'accept', destination: '10.20.0.0/16' });
    await rule({ user_id: bob.id, action: 'accept', destination: '10.30.0.0/16', port_type: 'tcp', port_range: '443' });
    await rule({ user_id: dave.id, action: 'accept', destination: '10.40.0.0/16' });
    await rule({
      user_id: carol.id,
      action: 'accept',
      destination: '2001:db8:aa::/48',
      port_type: 'tcp',
      port_range: '8000-8100',
    });
  },
);

function users(): Obj[] {
  return doc.users as Obj[];
}
function userOf(email: string): Obj {
  const found = users().find((u) => u.email === email);
  if (!found) throw new Error(`the repository declares no user ${email}`);
  return found;
}
function deviceOf(email: string, name: string): Obj {
  const found = (userOf(email).devices as Obj[] | undefined)?.find((d) => d.name === name);
  if (!found) throw new Error(`the repository declares no device ${email}/${name}`);
  return found;
}

/** netform run as a person runs it in the repository (a saved plan's secret files are found from there). */
function inRepo(args: string[]) {
  return netform(server, args, ENV, ws.path('repo'));
}

function save(): void {
  ws.write(FILE, stringify(doc));
}

/** Plans the repository as it stands (JSON, saved), applies that saved plan, and reads the server before and after. */
async function planAndApply(step: string): Promise<{ plan: JsonPlan; before: Live; after: Live }> {
  save();
  const before = await readLive(server);
  const saved = ws.path(`plan-${step}.json`);
  const planned = await inRepo(['plan', '-f', ws.path(FILE), '--format', 'json', '-o', saved]);
  expect(planned.code, describeResult(planned)).toBe(2);
  const plan = JSON.parse(planned.stdout) as JsonPlan;
  const applied = await inRepo(['apply', saved]);
  expect(applied.code, describeResult(applied)).toBe(0);
  expect(applied.stdout + applied.stderr).not.toContain(NEWHIRE_PASSWORD);
  expect(applied.stdout + applied.stderr).not.toContain(NEWHIRE_PSK);
  const after = await readLive(server);
  // Then the repository and the server agree.
  const again = await inRepo(['plan', '-f', ws.path(FILE), '--format', 'json']);
  expect(again.code, `${step}: after apply\n${describeResult(again)}`).toBe(0);
  return { plan, before, after };
}

function actions(plan: JsonPlan): string[] {
  return plan.changes.map((c) => `${c.action} ${c.id}`).sort();
}

beforeAll(async () => {
  const exported = await netform(server, ['export', '-o', ws.path('repo')]);
  expect(exported.code, describeResult(exported)).toBe(0);
});

describe('an adopted repository: 14 everyday edits, each planned exactly as it happened', () => {
  it('adopts the server with export: the files plan clean', async () => {
    doc = parse(readFileSync(ws.path(FILE), 'utf8'));
    expect(users().map((u) => u.email)).toContain('judy@corp.example');
    const clean = await netform(server, ['plan', '-f', ws.path(FILE)]);
    expect(clean.code, describeResult(clean)).toBe(0);
    expect(clean.stdout).toContain('No changes: the server matches the desired state.');
  });

  it('1. removing a port restriction: the rule is replaced, and the access change says so', async () => {
    const rule = (doc.rules as Obj[]).find((r) => r.destination === '10.7.0.0/16')!;
    delete rule.port_type;
    delete rule.port_range;
    const { plan, before, after } = await planAndApply('1');
    expect(actions(plan)).toEqual(['replace rule:*|accept|10.7.0.0/16|any']);
    expect(planVersusServer(plan, before, after)).toEqual([]);
    // accept 10.7.0.0/16 over the drop of it, now for every port and protocol, not only tcp 22.
    const access = (plan as JsonPlan & { access: { everyone: { reachable: Obj[]; blocked: Obj[] } } }).access;
    expect(access.everyone.blocked).toEqual([]);
    expect(access.everyone.reachable.map((b) => b.addresses)).toEqual(
      access.everyone.reachable.map(() => ['10.7.0.0/16']),
    );
    expect(access.everyone.reachable.length).toBeGreaterThan(0);
  });

  it('2. narrowing two destinations: both rules are replaced', async () => {
    (doc.rules as Obj[]).find((r) => r.destination === '10.1.0.0/16')!.destination = '10.1.2.0/24';
    (userOf('alice@corp.example').rules as Obj[]).find((r) => r.destination === '10.20.0.0/16')!.destination =
      '10.20.5.0/24';
    const { plan, before, after } = await planAndApply('2');
    expect(actions(plan)).toEqual([
      'replace rule:*|accept|10.1.2.0/24|any',
      'replace rule:alice@corp.example|accept|10.20.5.0/24|any',
    ]);
    expect(planVersusServer(plan, before, after)).toEqual([]);
  });

  it('3. deleting a device: one delete (prune), nothing else', async () => {
    const alice = userOf('alice@corp.example');
    alice.devices = (alice.devices as Obj[]).filter((d) => d.name !== 'phone');
    const { plan, before, after } = await planAndApply('3');
    expect(actions(plan)).toEqual(['delete device:alice@corp.example/phone']);
    expect(planVersusServer(plan, before, after)).toEqual([]);
  });

  it('4. renaming a device, recognised by its public key: one update of its name', async () => {
    deviceOf('dave@corp.example', 'desktop').name = 'workstation';
    const { plan, before, after } = await planAndApply('4');
    expect(actions(plan)).toEqual(['update device:dave@corp.example/workstation']);
    expect(plan.changes[0]!.fields.map((f) => f.field)).toEqual(['name']);
    expect(planVersusServer(plan, before, after)).toEqual([]);
  });

  it("5. changing an email with renamed_from: one update of the email; the user's device and rule stay", async () => {
    const bob = userOf('bob@corp.example');
    bob.email = 'robert@corp.example';
    bob.renamed_from = 'bob@corp.example';
    const { plan, before, after } = await planAndApply('5');
    expect(actions(plan)).toEqual(['update user:robert@corp.example']);
    expect(plan.changes[0]!.fields).toEqual([
      { field: 'email', before: 'bob@corp.example', after: 'robert@corp.example' },
    ]);
    expect(planVersusServer(plan, before, after)).toEqual([]);
  });

  it('6. promoting one user and demoting another', async () => {
    userOf('carol@corp.example').role = 'admin';
    delete userOf('alice@corp.example').role; // left out: unprivileged
    const { plan, before, after } = await planAndApply('6');
    expect(actions(plan)).toEqual(['update user:alice@corp.example', 'update user:carol@corp.example']);
    expect(planVersusServer(plan, before, after)).toEqual([]);
    const roles = [...after.users.values()].map((u) => `${u.email} ${u.role}`);
    expect(roles).toContain('alice@corp.example unprivileged');
    expect(roles).toContain('carol@corp.example admin');
  });

  it('7. moving a rule from global to a user', async () => {
    doc.rules = (doc.rules as Obj[]).filter((r) => r.destination !== '10.60.0.0/16');
    const dave = userOf('dave@corp.example');
    dave.rules = [...((dave.rules as Obj[] | undefined) ?? []), { action: 'accept', destination: '10.60.0.0/16' }];
    const { plan, before, after } = await planAndApply('7');
    expect(actions(plan)).toEqual([
      'create rule:dave@corp.example|accept|10.60.0.0/16|any',
      'delete rule:*|accept|10.60.0.0/16|any',
    ]);
    expect(planVersusServer(plan, before, after)).toEqual([]);
  });

  it('8. adding a user with a password from the environment, a preshared key from a file, a device and two rules', async () => {
    ws.write('repo/secrets/newhire.psk', `${NEWHIRE_PSK}\n`);
    users().push({
      email: 'newhire@corp.example',
      password: { env: 'NEWHIRE_PASSWORD' },
      devices: [{ name: 'laptop', public_key: KEYS.newhireLaptop, preshared_key: { file: 'secrets/newhire.psk' } }],
      rules: [
        { action: 'accept', destination: '10.1.2.0/24', port_type: 'tcp', port_range: '443' },
        { action: 'drop', destination: '10.1.2.99' },
      ],
    });
    const { plan, before, after } = await planAndApply('8');
    expect(actions(plan)).toEqual([
      'create device:newhire@corp.example/laptop',
      'create rule:newhire@corp.example|accept|10.1.2.0/24|tcp:443 - 443',
      'create rule:newhire@corp.example|drop|10.1.2.99/32|any',
      'create user:newhire@corp.example',
    ]);
    expect(planVersusServer(plan, before, after)).toEqual([]);
    const laptop = [...after.devices.values()].find((d) => d.public_key === KEYS.newhireLaptop)!;
    expect(laptop.preshared_key).toBe(NEWHIRE_PSK);
  });

  it('9. offboarding a user with a device and rules: one delete, its device and rules in the cascade', async () => {
    doc.users = users().filter((u) => u.email !== 'dave@corp.example');
    const { plan, before, after } = await planAndApply('9');
    expect(actions(plan)).toEqual(['delete user:dave@corp.example']);
    expect(plan.changes[0]!.cascade?.map((c) => c.kind).sort()).toEqual(['device', 'rule', 'rule']);
    expect(plan.summary).toMatchObject({ delete: 1, cascade: 3 });
    expect(planVersusServer(plan, before, after)).toEqual([]);
  });

  it("10. changing a device's mtu and dns", async () => {
    const laptop = deviceOf('robert@corp.example', 'laptop');
    laptop.mtu = 1420;
    laptop.dns = ['10.0.0.53', '1.1.1.1'];
    const { plan, before, after } = await planAndApply('10');
    expect(actions(plan)).toEqual(['update device:robert@corp.example/laptop']);
    expect(planVersusServer(plan, before, after)).toEqual([]);
  });

  it('11. a configuration: change', async () => {
    expect(doc.configuration).toBeDefined();
    doc.configuration.default_client_mtu = 1300;
    doc.configuration.default_client_dns = ['10.0.0.54'];
    const { plan, before, after } = await planAndApply('11');
    expect(actions(plan)).toEqual(['update configuration']);
    expect(plan.changes[0]!.fields.map((f) => [f.field, f.after])).toEqual([
      ['default_client_dns', ['10.0.0.54']],
      ['default_client_mtu', 1300],
    ]);
    // Every device that follows the defaults changed its effective mtu and dns: the plan names each
    // (its configuration change's `effective`), with the value it now has.
    const following = [...before.devices.values()].filter((d) => d.use_default_mtu && d.use_default_dns);
    expect(following.length).toBeGreaterThan(0);
    const named = plan.changes.flatMap((c) => c.effective ?? []);
    for (const d of following)
      expect(named.map((e) => `${e.device} ${e.field}`)).toEqual(
        expect.arrayContaining([`${keyOf('device', d, before)} mtu`, `${keyOf('device', d, before)} dns`]),
      );
    expect(planVersusServer(plan, before, after)).toEqual([]);
  });

  it('12. renaming a device with renamed_from and a new key: one update of name and key', async () => {
    const laptop = deviceOf('alice@corp.example', 'laptop');
    laptop.name = 'laptop-2026';
    laptop.renamed_from = 'laptop';
    laptop.public_key = wgKey();
    const { plan, before, after } = await planAndApply('12');
    expect(actions(plan)).toEqual(['update device:alice@corp.example/laptop-2026']);
    expect(plan.changes[0]!.fields.map((f) => f.field).sort()).toEqual(['name', 'public_key']);
    expect(planVersusServer(plan, before, after)).toEqual([]);
  });

  it('13. moving a device to another user: deleted and created under the new owner, keeping its preshared key and addresses', async () => {
    const heidi = userOf('heidi@corp.example');
    const laptop = deviceOf('heidi@corp.example', 'laptop');
    heidi.devices = (heidi.devices as Obj[]).filter((d) => d !== laptop);
    const judy = userOf('judy@corp.example');
    judy.devices = [...(judy.devices as Obj[]), laptop];
    const { plan, before, after } = await planAndApply('13');
    expect(actions(plan)).toEqual(['replace device:judy@corp.example/laptop']);
    expect(planVersusServer(plan, before, after)).toEqual([]);
    const old = [...before.devices.values()].find((d) => d.public_key === KEYS.heidiLaptop)!;
    const moved = [...after.devices.values()].find((d) => d.public_key === KEYS.heidiLaptop)!;
    expect(after.users.get(moved.user_id)!.email).toBe('judy@corp.example');
    expect(moved).toMatchObject({ preshared_key: old.preshared_key, ipv4: old.ipv4, ipv6: old.ipv6 });
  });

  it('14. an IPv6 destination in upper case and a port range with spaces: no false differences', async () => {
    const rule = (userOf('carol@corp.example').rules as Obj[]).find((r) => r.port_range === '8000-8100')!;
    rule.destination = '2001:DB8:AA::/48';
    rule.port_range = '8000 - 8100';
    save();
    const planned = await inRepo(['plan', '-f', ws.path(FILE), '--format', 'json']);
    expect(planned.code, describeResult(planned)).toBe(0);
    expect(JSON.parse(planned.stdout).changes).toEqual([]);
  });

  it("(2.2) removing a device's allowed_ips: back to the default, one update of its flag", async () => {
    delete deviceOf('carol@corp.example', 'laptop').allowed_ips;
    const { plan, before, after } = await planAndApply('2.2-default');
    expect(actions(plan)).toEqual(['update device:carol@corp.example/laptop']);
    expect(plan.changes[0]!.fields).toEqual([
      expect.objectContaining({ field: 'use_default_allowed_ips', before: false, after: true }),
    ]);
    // The flip shows the tunnel the device then gets: from 10.0.0.0/8 to the server's default.
    const laptop = [...after.devices.values()].find((d) => d.public_key === KEYS.carolLaptop)!;
    expect(laptop.allowed_ips).toEqual(after.configuration.default_client_allowed_ips);
    expect(plan.changes.flatMap((c) => c.effective ?? [])).toEqual([
      { device: 'carol@corp.example/laptop', field: 'allowed_ips', before: ['10.0.0.0/8'], after: laptop.allowed_ips },
    ]);
    expect(planVersusServer(plan, before, after)).toEqual([]);
  });
});

describe('hand changes after adoption are drift (exit 2), in the words of drift', () => {
  it('a hand promotion to admin', async () => {
    const judy = [...(await readLive(server)).users.values()].find((u) => u.email === 'judy@corp.example')!;
    expect((await server.api('PATCH', `/v0/users/${judy.id}`, { user: { role: 'admin' } })).status).toBe(200);
    const drift = await inRepo(['drift', '-f', ws.path(FILE), '--format', 'json']);
    expect(drift.code, describeResult(drift)).toBe(2);
    const plan = JSON.parse(drift.stdout) as JsonPlan;
    expect(plan.changes.map((c) => [c.id, c.fields])).toEqual([
      ['user:judy@corp.example', [expect.objectContaining({ field: 'role', before: 'admin', after: 'unprivileged' })]],
    ]);
  });

  it('an endpoint changed by hand after export', async () => {
    const live = await readLive(server);
    const laptop = [...live.devices.values()].find((d) => d.public_key === KEYS.heidiLaptop)!;
    const patched = await server.api('PATCH', `/v0/devices/${laptop.id}`, {
      device: { use_default_endpoint: false, endpoint: 'evil.example.net:51820' },
    });
    expect(patched.status).toBe(200);
    const drift = await inRepo(['drift', '-f', ws.path(FILE), '--format', 'json']);
    expect(drift.code, describeResult(drift)).toBe(2);
    const plan = JSON.parse(drift.stdout) as JsonPlan;
    const device = plan.changes.find((c) => c.id === 'device:judy@corp.example/laptop')!;
    expect(device.fields).toEqual([
      expect.objectContaining({ field: 'use_default_endpoint', before: false, after: true }),
    ]);
    const text = await inRepo(['drift', '-f', ws.path(FILE)]);
    expect(text.code).toBe(2);
    expect(text.stdout).not.toContain('the server matches');
  });
});
