/**
 * W3.5 "plans say what happens to access": a device moved to another user is one entry saying
 * what apply does (delete, then create for the new owner keeping key, preshared key and
 * addresses), never also "kept"; a rename's note matches the fields it changes.
 */
import { describe, expect, it } from 'vitest';
import { planChanges, type Plan } from '../../../src/plan/index.js';
import { moveNote, noteText, renameNote, replaceNote } from '../../../src/views/notes.js';
import { renderPlan } from '../../../src/views/plan.js';
import {
  desired,
  device,
  KEY_A,
  KEY_B,
  liveDevice,
  liveState,
  liveUser,
  OPTIONS,
  PSK_NEW,
  secret,
  user,
} from '../../helpers/plan-fixtures.js';

const admin = () => liveUser('admin@example.com', { role: 'admin' });
const text = (plan: Plan) => renderPlan(plan, 'text', { color: false });

describe('a device moved to another user', () => {
  const heidi = liveUser('heidi@corp.test');
  const judy = liveUser('judy@corp.test');
  const laptop = liveDevice(heidi, 'heidi-laptop', { description: 'from IT' });
  const live = liveState({ users: [admin(), heidi, judy], devices: [laptop] });
  const files = (extra: Parameters<typeof device>[2] = {}, fields: Parameters<typeof device>[1] = {}) =>
    desired({
      settings: { prune: true, manage: { users: ['*@corp.test'], rules: null } },
      users: [
        user('heidi@corp.test'),
        user('judy@corp.test', { devices: [device('old-laptop', { public_key: KEY_A, ...fields }, extra)] }),
      ],
    });

  it('is one replacement whose fields are what differs from the live device, and nothing undeclared beside it', () => {
    const plan = planChanges(files(), live, OPTIONS);
    expect(plan.changes).toHaveLength(1);
    const [move] = plan.changes;
    expect(move).toMatchObject({ action: 'replace', liveId: laptop.id, keepFromLive: ['preshared_key'] });
    expect(move!.fields).toEqual([
      { field: 'user', before: 'heidi@corp.test', after: 'judy@corp.test' },
      { field: 'name', before: 'heidi-laptop', after: 'old-laptop' },
    ]);
    // The unmanaged fields the files leave out come from the live device.
    expect(move!.body).toMatchObject({
      ipv4: laptop.ipv4,
      ipv6: laptop.ipv6,
      description: 'from IT',
      user_id: judy.id,
    });
    expect(noteText(move!.note)).toBe(
      'moved from heidi@corp.test/heidi-laptop (the live device that holds its public key): deleted, then created for ' +
        'judy@corp.test with the same public key, preshared key and addresses; its tunnel is down between the two requests',
    );
    expect(plan.undeclared?.filter((u) => u.kind === 'device')).toEqual([]);
    expect(plan.warnings).toEqual([]);
    const shown = text(plan);
    expect(shown).not.toContain('see the warnings');
    expect(shown).not.toContain('= device heidi@corp.test/heidi-laptop');
    expect(shown).toContain('      user: "heidi@corp.test" -> "judy@corp.test"\n');
  });

  it('says so when the files give the moved device another preshared key or other addresses', () => {
    const plan = planChanges(files({ preshared_key: secret(PSK_NEW, 'PSK') }, { ipv4: '10.3.2.9' }), live, OPTIONS);
    const [move] = plan.changes;
    expect(move!.keepFromLive).toBeUndefined();
    expect(move!.fields.map((f) => f.field)).toEqual(['user', 'name', 'ipv4', 'preshared_key']);
    expect(noteText(move!.note)).toContain(
      'created for judy@corp.test with the same public key and the preshared key the files give and the addresses the files give',
    );
  });

  it('a move with the old owner deleted by prune takes the device out of its cascade', () => {
    const plan = planChanges(
      desired({
        settings: { prune: true, manage: { users: ['*@corp.test'], rules: null } },
        users: [user('judy@corp.test', { devices: [device('old-laptop', { public_key: KEY_A })] })],
      }),
      live,
      OPTIONS,
    );
    expect(plan.changes.find((c) => c.id === 'user:heidi@corp.test')?.cascade ?? []).toEqual([]);
    expect(noteText(plan.changes.find((c) => c.action === 'replace')?.note)).toContain(
      'moved from heidi@corp.test/heidi-laptop',
    );
    expect(plan.undeclared?.find((u) => u.kind === 'user' && u.key === 'heidi@corp.test')?.label).toBe(
      'user heidi@corp.test',
    );
  });
});

describe('a renamed device', () => {
  const carol = liveUser('carol@corp.test');
  const phone = liveDevice(carol, 'phone');
  const live = liveState({ users: [admin(), carol], devices: [phone] });
  const rename = (fields: Parameters<typeof device>[1]) =>
    planChanges(
      desired({ users: [user('carol@corp.test', { devices: [device('pixel', fields, { renamed_from: 'phone' })] })] }),
      live,
      OPTIONS,
    ).changes[0]!;

  it('with its key: one update of its name, keys stay', () => {
    expect(noteText(rename({ public_key: KEY_A }).note)).toBe(
      'renamed from phone: one update of its name; keys, addresses and preshared key stay',
    );
  });

  it('with a new public key: the note says the key changes, above the key change', () => {
    const change = rename({ public_key: KEY_B });
    expect(change.fields.map((f) => f.field)).toEqual(['name', 'public_key']);
    expect(change.body).toEqual({ name: 'pixel', public_key: KEY_B });
    expect(noteText(change.note)).toBe(
      'renamed from phone: one update of its name and public_key; its public key changes: a tunnel set up with the old ' +
        'public key stops working until its client uses the new one; addresses and preshared key stay',
    );
    expect(noteText(change.note)).not.toContain('keys, addresses and preshared key stay');
  });
});

describe('device notes', () => {
  it('name what changes and what stays', () => {
    expect(renameNote('a', ['name', 'ipv4'])).toBe(
      'renamed from a: one update of its name and ipv4; its addresses changes: its client needs the new configuration; public key and preshared key stay',
    );
    expect(replaceNote(['mtu'])).toContain('with the same keys and addresses');
    expect(replaceNote(['public_key', 'preshared_key'])).toContain(
      'its public key and its preshared key change: a tunnel set up with the old public key stops working',
    );
    expect(moveNote('a@x/l', 'b@x', { presharedKey: 'none', addresses: true })).toContain(
      'created for b@x with the same public key and addresses;',
    );
  });
});
