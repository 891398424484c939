/**
 * `apply -f PATH --reviewed PLANFILE`: the merged files are planned again, and only the changes
 * the reviewed plan shows identically are written; every other one is withheld and listed, and the
 * run exits 5. A stale or forged plan file can hold back changes, never add one.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { canonicalJson } from '../../../src/plan/canonical.js';
import { PlanKey } from '../../../src/plan/seal.js';
import type { TestServer } from '../../helpers/server.js';
import {
  create,
  describeResult,
  netform,
  serverState,
  useServerAndWorkspace,
  wgKey,
  type Workspace,
} from '../../helpers/workspace.js';

let server: TestServer;
let ws: Workspace;
useServerAndWorkspace((started) => ({ server, ws } = started));

/** Files managing `*@DOMAIN` with prune on: alice with a laptop, and more users. */
function files(domain: string, laptopKey: string, extra = '', mtu = 1400): string {
  return `version: 1
settings:
  prune: true
  manage: { users: ["*@${domain}"], rules: [] }
users:
  - email: alice@${domain}
    devices:
      - { name: laptop, public_key: "${laptopKey}", mtu: ${mtu} }
${extra}`;
}

async function seedAlice(domain: string, laptopKey: string): Promise<{ alice: any; laptop: any }> {
  const alice = await create(server, 'users', { email: `alice@${domain}` });
  const laptop = await create(server, 'devices', {
    user_id: alice.id,
    name: 'laptop',
    public_key: laptopKey,
    use_default_mtu: false,
    mtu: 1280,
  });
  return { alice, laptop };
}

const emails = async (domain: string) =>
  (await serverState(server)).users.map((u) => u.email as string).filter((e) => e.endsWith(`@${domain}`));

describe('apply --reviewed', () => {
  it('a merge writes only the reviewed plan: a user made by hand meanwhile stays, exit 5', async () => {
    const domain = 'merge.test';
    const key = wgKey();
    await seedAlice(domain, key);
    // The pull request adds kim; its plan is reviewed and saved.
    const file = ws.write('merge/netform.yaml', files(domain, key, `  - email: kim@${domain}\n`));
    const reviewed = ws.path('merge-reviewed.json');
    const planned = await netform(server, ['plan', '-f', file, '-o', reviewed]);
    expect(planned.code, describeResult(planned)).toBe(2);
    expect(planned.stdout).toContain('Plan: 1 to create, 1 to update, 0 to replace, 0 to delete.');

    // Meanwhile a colleague adds a user and a device through the API.
    const newhire = await create(server, 'users', { email: `newhire@${domain}` });
    await create(server, 'devices', { user_id: newhire.id, name: 'pc', public_key: wgKey() });

    // The merge: no terminal, no --yes; the reviewed plan is the approval.
    const merged = await netform(server, ['apply', '-f', file, '--reviewed', reviewed]);
    expect(merged.code, describeResult(merged)).toBe(5);
    expect(merged.stdout).toContain(`created user kim@${domain} (`);
    expect(merged.stdout).toContain(`updated device alice@${domain}/laptop (`);
    expect(merged.stdout).toContain(`  - user newhire@${domain}  (declared in no file (prune))\n`);
    expect(merged.stdout).toContain('      withheld: not in the reviewed plan\n');
    expect(merged.stdout).toContain(`      - device newhire@${domain}/pc (goes with the user)\n`);
    expect(merged.stdout).not.toMatch(/deleted user newhire/);
    expect(merged.stdout).toContain('Apply: 2 done, 0 failed, 0 not attempted.');
    expect(merged.stderr).toContain(
      'Withheld 1 change that the reviewed plan does not show as it is now (listed above): none of it was written.',
    );
    expect(await emails(domain)).toEqual(expect.arrayContaining([`newhire@${domain}`, `kim@${domain}`]));
    expect((await serverState(server)).devices.filter((d) => d.user_id === newhire.id)).toHaveLength(1);

    // Run again: the reviewed changes are done, the unreviewed one is still withheld, nothing is written.
    const again = await netform(server, ['apply', '-f', file, '--reviewed', reviewed]);
    expect(again.code, describeResult(again)).toBe(5);
    expect(again.stdout).toContain('Nothing to apply: no change of the plan is in the reviewed plan as it is now.');
    expect(again.stdout).not.toContain('No changes');
    expect(again.stdout).toContain(
      `Reviewed but not needed now (the server already matches, or the merged files no longer ask for it): user kim@${domain}, device alice@${domain}/laptop`,
    );
    expect(await emails(domain)).toContain(`newhire@${domain}`);

    // Once the unreviewed change is reviewed (planned and saved again), the same command applies it.
    const second = ws.path('merge-reviewed-2.json');
    expect((await netform(server, ['plan', '-f', file, '-o', second])).code).toBe(2);
    const done = await netform(server, ['apply', '-f', file, '--reviewed', second]);
    expect(done.code, describeResult(done)).toBe(0);
    expect(done.stdout).toContain(`deleted user newhire@${domain} (`);
    expect(await emails(domain)).not.toContain(`newhire@${domain}`);
  });

  it('withholds a reviewed change that went stale: the live value moved, or the object was edited by hand', async () => {
    const domain = 'stale.test';
    const key = wgKey();
    const { alice } = await seedAlice(domain, key);
    const phone = await create(server, 'devices', { user_id: alice.id, name: 'phone', public_key: wgKey() });
    // Reviewed: the laptop's mtu 1280 -> 1400, and the phone deleted (no file declares it).
    const file = ws.write('stale/netform.yaml', files(domain, key));
    const reviewed = ws.path('stale-reviewed.json');
    expect((await netform(server, ['plan', '-f', file, '-o', reviewed])).code).toBe(2);

    // Meanwhile, by hand: the laptop's mtu set to 1300, the phone given a description.
    const { devices } = await serverState(server);
    const laptop = devices.find((d) => d.user_id === alice.id && d.name === 'laptop');
    expect((await server.api('PATCH', `/v0/devices/${laptop.id}`, { device: { mtu: 1300 } })).status).toBe(200);
    expect(
      (await server.api('PATCH', `/v0/devices/${phone.id}`, { device: { description: 'the CEO uses it' } })).status,
    ).toBe(200);

    const merged = await netform(server, ['apply', '-f', file, '--reviewed', reviewed]);
    expect(merged.code, describeResult(merged)).toBe(5);
    expect(merged.stdout).toContain(
      `  ~ device alice@${domain}/laptop\n      withheld: changed since review (differs in mtu)\n`,
    );
    expect(merged.stdout).toContain(
      `  - device alice@${domain}/phone  (declared in no file (prune))\n      withheld: the reviewed change no longer holds (device alice@${domain}/phone changed on the server since review)\n`,
    );
    expect(merged.stdout).toContain('Nothing to apply: no change of the plan is in the reviewed plan as it is now.');
    const after = (await serverState(server)).devices.filter((d) => d.user_id === alice.id);
    expect(after.map((d) => [d.name, d.mtu, d.description]).sort()).toEqual([
      ['laptop', 1300, null],
      ['phone', phone.mtu, 'the CEO uses it'],
    ]);
  });

  it('a forged plan file adds nothing the merged files do not ask for; an edited one is refused', async () => {
    const domain = 'forged.test';
    const key = wgKey();
    await seedAlice(domain, key);
    const outsider = await create(server, 'users', { email: 'outsider@elsewhere.test' });
    const file = ws.write('forged/netform.yaml', files(domain, key, `  - email: kim@${domain}\n`, 1280));
    const planPath = ws.path('forged.json');
    expect((await netform(server, ['plan', '-f', file, '-o', planPath])).code).toBe(2);
    const doc = JSON.parse(readFileSync(planPath, 'utf8'));
    expect(doc.changes.map((c: any) => c.id)).toEqual([`user:kim@${domain}`]);

    // Forged by someone holding the key (sealed again): kim made an admin, a user outside the files
    // deleted. The seal holds, and still nothing the files do not ask for is written.
    const kim = doc.changes[0];
    kim.body.role = 'admin';
    kim.fields = kim.fields.map((f: any) => (f.field === 'role' ? { ...f, after: 'admin' } : f));
    doc.changes.push({
      id: 'user:outsider@elsewhere.test',
      kind: 'user',
      action: 'delete',
      key: 'outsider@elsewhere.test',
      label: 'user outsider@elsewhere.test',
      liveId: outsider.id,
      phase: 5,
      fingerprint: null,
      fields: [],
    });
    delete doc.seal;
    doc.seal = PlanKey.from({}, () => server.token).sealOf(canonicalJson(doc));
    writeFileSync(planPath, JSON.stringify(doc));

    const merged = await netform(server, ['apply', '-f', file, '--reviewed', planPath]);
    expect(merged.code, describeResult(merged)).toBe(5);
    expect(merged.stdout).toContain(`  + user kim@${domain}\n      withheld: changed since review (differs in role)\n`);
    expect(merged.stdout).toContain('Reviewed but not needed now');
    expect(merged.stdout).not.toMatch(/^(created|deleted|updated) /m);
    const state = await serverState(server);
    expect(state.users.map((u) => u.email)).toContain('outsider@elsewhere.test');
    expect(state.users.map((u) => u.email)).not.toContain(`kim@${domain}`);

    // Edited without sealing it again: refused before anything is read or written.
    doc.changes.pop();
    writeFileSync(planPath, JSON.stringify(doc));
    const edited = await netform(server, ['apply', '-f', file, '--reviewed', planPath]);
    expect(edited.code, describeResult(edited)).toBe(1);
    expect(edited.stderr).toContain(`error: ${planPath}: the saved plan was modified after netform plan wrote it`);
    expect(await emails(domain)).not.toContain(`kim@${domain}`);
  });

  it('refuses --reviewed without -f, and a reviewed plan made against another server', async () => {
    const file = ws.write('other/netform.yaml', files('other.test', wgKey()));
    const planPath = ws.path('other.json');
    expect((await netform(server, ['plan', '-f', file, '-o', planPath])).code).toBe(2);
    const alone = await netform(server, ['apply', '--reviewed', planPath]);
    expect(alone.code).toBe(1);
    expect(alone.stderr).toContain('error: nothing to apply');
    const noFile = await netform(server, ['apply', planPath, '--reviewed', planPath]);
    expect(noFile.code).toBe(1);
    expect(noFile.stderr).toContain('error: --reviewed goes with -f PATH');
    const elsewhere = await netform(server, ['apply', '-f', file, '--reviewed', planPath], {
      NETFORM_URL: server.url.replace('127.0.0.1', 'localhost'),
    });
    expect(elsewhere.code, describeResult(elsewhere)).toBe(1);
    expect(elsewhere.stderr).toContain(`error: the reviewed plan was made against ${server.url}, not`);
    expect(await emails('other.test')).toEqual([]);
  });
});
