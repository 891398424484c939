/** findStaleChanges: whether a saved plan still holds for a live state, object by object. */
import { describe, expect, it } from 'vitest';
import { findStaleChanges } from '../../../src/apply/index.js';
import { planChanges } from '../../../src/plan/index.js';
import {
  desired,
  device,
  KEY_B,
  liveDevice,
  liveRule,
  liveState,
  liveUser,
  OPTIONS,
  rule,
  user,
} from '../../helpers/plan-fixtures.js';

describe('findStaleChanges', () => {
  const admin = liveUser('admin@example.com', { role: 'admin' });
  const alice = liveUser('alice@example.com');
  const bob = liveUser('bob@example.com');
  const laptop = liveDevice(alice, 'laptop', { mtu: 1280 });
  const bobsPhone = liveDevice(bob, 'phone');
  const bobsRule = liveRule({ destination: '10.5.0.0/16', user_id: bob.id });
  const live = liveState({ users: [admin, alice, bob], devices: [laptop, bobsPhone], rules: [bobsRule] });
  const plan = planChanges(
    desired({
      settings: { prune: true },
      users: [
        user('admin@example.com'),
        user('alice@example.com', { devices: [device('laptop', { mtu: 1400, use_default_mtu: false })] }),
        user('carol@example.com'),
      ],
    }),
    live,
    OPTIONS,
  );

  it('holds for the live state it was made from, and for changes to objects it does not touch', () => {
    expect(plan.changes.map((c) => `${c.action} ${c.id}`)).toEqual([
      'create user:carol@example.com',
      'update device:alice@example.com/laptop',
      'delete user:bob@example.com',
    ]);
    expect(findStaleChanges(plan, live)).toEqual([]);
    expect(findStaleChanges(plan, { ...live, users: [{ ...admin, role: 'unprivileged' }, alice, bob] })).toEqual([]);
    // Tunnel statistics are not edits.
    expect(
      findStaleChanges(plan, {
        ...live,
        devices: [
          { ...laptop, rx_bytes: 100, latest_handshake: '2024-06-01T00:00:00Z', updated_at: '2024-06-01T00:00:00Z' },
          bobsPhone,
        ],
      }),
    ).toEqual([]);
  });

  it('names every object that changed, went away, or appeared since', () => {
    const later = liveState({
      users: [admin, alice, { ...bob }, liveUser('Carol@example.com')],
      devices: [{ ...laptop, public_key: KEY_B }, { ...bobsPhone, description: 'edited' }, liveDevice(bob, 'tablet')],
      rules: [],
    });
    expect(findStaleChanges(plan, later)).toEqual([
      'user carol@example.com: created on the server since the plan was made',
      'device alice@example.com/laptop: changed since the plan was made',
      'device bob@example.com/phone (goes with user bob@example.com): changed since the plan was made',
      'rule accept 10.5.0.0/16 (bob@example.com) (goes with user bob@example.com): deleted since the plan was made',
      'user bob@example.com: 1 device(s) or rule(s) were added to it since the plan was made, and would be deleted with it',
    ]);
    expect(findStaleChanges(plan, { ...live, devices: [bobsPhone] })).toEqual([
      'device alice@example.com/laptop: deleted since the plan was made',
    ]);
  });
});

describe('findStaleChanges: a rule replacement', () => {
  it('is stale when the replaced rule changed, or a rule with the new key appeared', () => {
    const admin = liveUser('admin@example.com', { role: 'admin' });
    const old = liveRule({ destination: '10.1.0.0/16', port_type: 'tcp', port_range: '22' });
    const files = desired({
      settings: { prune: true },
      users: [user('admin@example.com')],
      rules: [rule('10.1.0.0/16', { port_type: 'tcp', port_range: '2222' })],
    });
    const plan = planChanges(files, liveState({ users: [admin], rules: [old] }), OPTIONS);
    expect(plan.changes.map((c) => c.action)).toEqual(['replace']);
    expect(findStaleChanges(plan, liveState({ users: [admin], rules: [old] }))).toEqual([]);
    const taken = liveRule({ destination: '10.1.0.0/16', port_type: 'tcp', port_range: '2222' });
    expect(findStaleChanges(plan, liveState({ users: [admin], rules: [old, taken] }))[0]).toContain(
      'a rule with this key was created since the plan was made',
    );
    expect(findStaleChanges(plan, liveState({ users: [admin], rules: [{ ...old, port_range: '23' }] }))[0]).toContain(
      'changed since the plan was made',
    );
  });
});
