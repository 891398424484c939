/**
 * W3.6: which secrets the planner reads. A password only when it is sent (a create,
 * `--rotate-passwords`); a preshared key where it is sent or compared. A key that cannot be read is
 * not compared (the plan lists it under `not_checked`, never as matching); a change that would send
 * a secret that cannot be read, or that the server would refuse, stops the plan (`refuse`, plan and
 * apply) or is planned all the same without reading anything (`report`, drift).
 */
import { describe, expect, it } from 'vitest';
import { lazySecret } from '../../../src/desired/secrets.js';
import { Secret, type SecretRef } from '../../../src/model/secret.js';
import { planChanges, PlanError } from '../../../src/plan/index.js';
import { planProblemText } from '../../../src/views/plan-problems.js';
import { renderPlan } from '../../../src/views/plan.js';
import {
  desired,
  device,
  KEY_A,
  liveDevice,
  liveState,
  liveUser,
  OPTIONS,
  PSK_LIVE,
  PSK_NEW,
  user,
} from '../../helpers/plan-fixtures.js';

/** The live state, with the token's owner (an admin) in it. */
function live(parts: Parameters<typeof liveState>[0] = {}) {
  return liveState({ ...parts, users: [liveUser('admin@example.com', { role: 'admin' }), ...(parts.users ?? [])] });
}

/** A secret that fails the test if anything reads it. */
function unread(ref: SecretRef): Secret {
  return new Secret(() => {
    throw new Error(`${JSON.stringify(ref)} was read`);
  }, ref);
}

const unset = (name: string, field: 'password' | 'preshared_key') => lazySecret({ env: name }, field, {});

function problemsOf(run: () => unknown): string[] {
  try {
    run();
  } catch (error) {
    if (error instanceof PlanError) return error.problems.map(planProblemText);
    throw error;
  }
  throw new Error('the plan was made');
}

describe('passwords: read only when sent', () => {
  it('an existing user: its password is not read, whatever it is', () => {
    const alice = liveUser('alice@example.com');
    const password = unread({ env: 'ALICE_PASSWORD' });
    const plan = planChanges(
      desired({ users: [user('alice@example.com', { password })] }),
      live({ users: [alice] }),
      OPTIONS,
    );
    expect(plan.changes).toEqual([]);
    expect(plan.not_checked).toBeUndefined();
    expect(password.wasRead).toBe(false);
  });

  it('a create with an unset password variable stops the plan, naming the variable', () => {
    const problems = problemsOf(() =>
      planChanges(
        desired({ users: [user('grace@example.com', { password: unset('GRACE_PASSWORD', 'password') })] }),
        live(),
        OPTIONS,
      ),
    );
    expect(problems).toEqual([
      'user grace@example.com is created with its password, and environment variable GRACE_PASSWORD is not set',
    ]);
  });

  it('--rotate-passwords with an unset variable stops the plan; a password the server would refuse too', () => {
    const problems = problemsOf(() =>
      planChanges(
        desired({
          users: [
            user('alice@example.com', { password: unset('ALICE_PASSWORD', 'password') }),
            user('bob@example.com', { password: lazySecret({ env: 'BOB' }, 'password', { BOB: 'PLANTED' }) }),
          ],
        }),
        live({ users: [liveUser('alice@example.com'), liveUser('bob@example.com')] }),
        { ...OPTIONS, rotatePasswords: true },
      ),
    );
    expect(problems).toEqual([
      '--rotate-passwords sends the password of user alice@example.com, and environment variable ALICE_PASSWORD is not set',
      '--rotate-passwords sends the password of user bob@example.com, and it should be at least 12 character(s) (env:BOB)',
    ]);
    expect(problems.join('\n')).not.toContain('PLANTED');
  });

  it('drift (report) plans the create all the same and reads no password', () => {
    const password = unread({ env: 'GRACE_PASSWORD' });
    const plan = planChanges(desired({ users: [user('grace@example.com', { password })] }), live(), {
      ...OPTIONS,
      unreadableSecrets: 'report',
    });
    expect(plan.changes.map((c) => `${c.action} ${c.id}`)).toEqual(['create user:grace@example.com']);
    expect(password.wasRead).toBe(false);
  });
});

describe('preshared keys: read where sent or compared', () => {
  const alice = liveUser('alice@example.com');
  const laptop = liveDevice(alice, 'laptop', { public_key: KEY_A, preshared_key: PSK_LIVE });

  it('an unset key is not compared: listed as not checked in every format, never "matches"', () => {
    const plan = planChanges(
      desired({
        users: [
          user('alice@example.com', {
            devices: [
              device('laptop', { public_key: KEY_A }, { preshared_key: unset('ALICE_LAPTOP_PSK', 'preshared_key') }),
            ],
          }),
        ],
      }),
      live({ users: [alice], devices: [laptop] }),
      OPTIONS,
    );
    expect(plan.changes).toEqual([]);
    expect(plan.not_checked).toEqual([
      {
        id: 'device:alice@example.com/laptop',
        label: 'device alice@example.com/laptop',
        field: 'preshared_key',
        reason: 'environment variable ALICE_LAPTOP_PSK is not set',
      },
    ]);
    const line =
      'not checked: preshared key of alice@example.com/laptop (environment variable ALICE_LAPTOP_PSK is not set)';
    const text = renderPlan(plan, 'text', { color: false });
    expect(text).toContain(line);
    expect(text).not.toMatch(/matches/);
    expect(renderPlan(plan, 'markdown', { color: false })).toContain(line);
    expect(renderPlan(plan, 'markdown', { color: false })).not.toMatch(/matches/);
    expect(JSON.parse(renderPlan(plan, 'json', { color: false })).not_checked).toEqual(plan.not_checked);
  });

  it('a readable key is compared (and read once): a different one is an update that sends it', () => {
    const psk = lazySecret({ env: 'PSK' }, 'preshared_key', { PSK: PSK_NEW });
    const plan = planChanges(
      desired({
        users: [
          user('alice@example.com', { devices: [device('laptop', { public_key: KEY_A }, { preshared_key: psk })] }),
        ],
      }),
      live({ users: [alice], devices: [laptop] }),
      OPTIONS,
    );
    expect(plan.changes.map((c) => `${c.action} ${c.id}`)).toEqual(['update device:alice@example.com/laptop']);
    expect(plan.not_checked).toBeUndefined();
    expect(psk.wasRead).toBe(true);
  });

  it('a create with an unset key stops the plan (it would be sent); drift reports the create', () => {
    const state = desired({
      users: [
        user('alice@example.com', {
          devices: [device('phone', { public_key: KEY_A }, { preshared_key: unset('PHONE_PSK', 'preshared_key') })],
        }),
      ],
    });
    expect(problemsOf(() => planChanges(state, live({ users: [alice] }), OPTIONS))).toEqual([
      'device alice@example.com/phone is created with its preshared key, and environment variable PHONE_PSK is not set',
    ]);
    const drift = planChanges(state, live({ users: [alice] }), { ...OPTIONS, unreadableSecrets: 'report' });
    expect(drift.changes.map((c) => `${c.action} ${c.id}`)).toEqual(['create device:alice@example.com/phone']);
  });
});
