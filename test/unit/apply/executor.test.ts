/**
 * applyPlan against the real server running in-process: dependents of a failed change are not
 * attempted, objects changed since the plan are not overwritten, phases and the concurrency
 * bound hold.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { applyPlan } from '../../../src/apply/index.js';
import { ApiClient, fetchLiveState, type ResourceName } from '../../../src/client/index.js';
import { planChanges, type Change, type Plan } from '../../../src/plan/index.js';
import { startInProcessServer } from '../../helpers/in-process-server.js';
import type { TestServer } from '../../helpers/server-api.js';
import { desired, device, KEY_A, KEY_B, OPTIONS, rule, user } from '../../helpers/plan-fixtures.js';

let server: TestServer;
beforeEach(async () => {
  server = await startInProcessServer({ logger: false });
});
afterEach(async () => {
  await server.stop();
});

/** Records the order of writes and the largest number of calls in flight at once. */
class RecordingClient extends ApiClient {
  inFlight = 0;
  maxInFlight = 0;
  writes: string[] = [];
  async #track<T>(what: string | null, call: () => Promise<T>): Promise<T> {
    this.inFlight++;
    this.maxInFlight = Math.max(this.maxInFlight, this.inFlight);
    try {
      return await call();
    } finally {
      this.inFlight--;
      if (what) this.writes.push(what);
    }
  }
  override create<N extends ResourceName>(name: N, body: Record<string, unknown>) {
    return this.#track(`POST ${name}`, () => super.create(name, body));
  }
  override update<N extends ResourceName>(name: N, id: string, body: Record<string, unknown>) {
    return this.#track(`PATCH ${name}`, () => super.update(name, id, body));
  }
  override remove(name: ResourceName, id: string) {
    return this.#track(`DELETE ${name}`, () => super.remove(name, id));
  }
}

const client = () => new RecordingClient({ url: server.url, token: server.token, retryBaseMs: 5 });
const noSecrets = () => {
  throw new Error('no secret expected');
};

function basePlan(changes: Change[]): Plan {
  return {
    format: 'netform.plan',
    format_version: 2,
    created_at: OPTIONS.createdAt,
    server: server.url,
    sources: [],
    changes,
    summary: { create: 0, update: 0, delete: 0, replace: 0, cascade: 0 },
    limits: [],
    warnings: [],
  };
}

describe('applyPlan', () => {
  it('does not attempt what depends on a failed change, and still does unrelated changes', async () => {
    const plan = basePlan([
      {
        id: 'user:bad',
        kind: 'user',
        action: 'create',
        key: 'bad',
        label: 'user bad',
        phase: 1,
        fingerprint: null,
        fields: [],
        body: { email: 'not an email' },
      },
      {
        id: 'device:bad/laptop',
        kind: 'device',
        action: 'create',
        key: 'bad/laptop',
        label: 'device bad/laptop',
        phase: 3,
        fingerprint: null,
        fields: [],
        dependsOn: ['user:bad'],
        body: {
          user_id: { $ref: 'user:bad' },
          name: 'laptop',
          public_key: 'x8mEqUv3cGt1Xq6h3mJx0o8nOqCq2cW1oZt3JYfJfGs=',
        },
      },
      {
        id: 'rule:*|drop|10.9.0.0/16|any',
        kind: 'rule',
        action: 'create',
        key: '*|drop|10.9.0.0/16|any',
        label: 'rule drop 10.9.0.0/16 (global)',
        phase: 3,
        fingerprint: null,
        fields: [],
        body: { action: 'drop', destination: '10.9.0.0/16', user_id: null },
      },
    ]);
    const summary = await applyPlan(plan, { client: client(), resolveSecret: noSecrets });
    expect(summary.results.map((r) => `${r.status} ${r.id}`)).toEqual([
      'failed user:bad',
      'not_attempted device:bad/laptop',
      'done rule:*|drop|10.9.0.0/16|any',
    ]);
    expect(summary.results[0]!.message).toBe('POST /v0/users: 422 email is invalid');
    expect(summary.results[1]!.message).toBe('depends on user bad, which did not succeed');
    expect({ done: summary.done, failed: summary.failed, notAttempted: summary.notAttempted }).toEqual({
      done: 1,
      failed: 1,
      notAttempted: 1,
    });
  });

  it('does not overwrite an object changed since the plan, and treats an object already deleted as done', async () => {
    const bob = (await server.api('POST', '/v0/users', { user: { email: 'bob@example.com' } })).body.data;
    const gone = (await server.api('POST', '/v0/users', { user: { email: 'gone@example.com' } })).body.data;
    const live = await fetchLiveState(client());
    const plan = planChanges(
      desired({
        users: [user('admin@example.com'), user('bob@example.com', { role: 'admin' })],
        settings: { prune: true },
      }),
      live,
      OPTIONS,
    );
    expect(plan.changes.map((c) => `${c.action} ${c.id}`)).toEqual([
      'update user:bob@example.com',
      'delete user:gone@example.com',
    ]);
    // Someone else edits bob and deletes gone in between.
    expect((await server.api('PATCH', `/v0/users/${bob.id}`, { user: { email: 'robert@example.com' } })).status).toBe(
      200,
    );
    expect((await server.api('DELETE', `/v0/users/${gone.id}`)).status).toBe(204);
    const summary = await applyPlan(plan, { client: client(), resolveSecret: noSecrets });
    expect(summary.results.map((r) => [r.status, r.message])).toEqual([
      ['failed', 'changed by someone else since the plan was made; not overwritten (run plan again)'],
      ['done', 'already gone'],
    ]);
    expect((await server.api('GET', `/v0/users/${bob.id}`)).body.data).toMatchObject({
      email: 'robert@example.com',
      role: 'unprivileged',
    });
  });

  it('runs phases in order and never more than `parallelism` writes at once', async () => {
    for (let i = 0; i < 6; i++)
      await server.api('POST', '/v0/rules', { rule: { action: 'drop', destination: `10.50.${i}.0/24` } });
    const rules = Array.from({ length: 12 }, (_, i) => rule(`10.${i + 1}.0.0/16`));
    const recording = client();
    const plan = planChanges(
      desired({
        rules,
        settings: {
          prune: true,
          manage: { users: [], rules: ['10.0.0.0/8'] },
          limits: { delete: { kind: 'count', value: 6 } },
        },
      }),
      await fetchLiveState(recording),
      OPTIONS,
    );
    expect(plan.summary).toMatchObject({ create: 12, delete: 6 });
    const summary = await applyPlan(plan, { client: recording, parallelism: 3, resolveSecret: noSecrets });
    expect(summary.done).toBe(18);
    expect(recording.maxInFlight).toBeLessThanOrEqual(3);
    expect(recording.maxInFlight).toBeGreaterThan(1);
    const firstDelete = recording.writes.indexOf('DELETE rules');
    expect(recording.writes.slice(0, firstDelete).every((w) => w === 'POST rules')).toBe(true);
    expect(recording.writes.slice(firstDelete).every((w) => w === 'DELETE rules')).toBe(true);
  });

  it('a user, device or rule someone else created since the plan gets the plain message, not the raw 422', async () => {
    const alice = (await server.api('POST', '/v0/users', { user: { email: 'alice@example.com' } })).body.data;
    const plan = planChanges(
      desired({
        users: [
          user('admin@example.com'),
          user('alice@example.com', { devices: [device('laptop', { public_key: KEY_A })] }),
          user('bob@example.com', { role: 'admin' }),
        ],
        rules: [rule('10.9.0.0/16')],
      }),
      await fetchLiveState(client()),
      OPTIONS,
    );
    expect(plan.changes.map((c) => `${c.action} ${c.id}`)).toEqual([
      'create user:bob@example.com',
      'create device:alice@example.com/laptop',
      'create rule:*|accept|10.9.0.0/16|any',
    ]);
    // Bob is created by hand, unprivileged: the apply must neither overwrite nor promote him.
    expect((await server.api('POST', '/v0/users', { user: { email: 'Bob@example.com' } })).status).toBe(201);
    // A concurrent writer gets there first, with other values.
    expect(
      (await server.api('POST', '/v0/devices', { device: { user_id: alice.id, name: 'laptop', public_key: KEY_B } }))
        .status,
    ).toBe(201);
    expect(
      (await server.api('POST', '/v0/rules', { rule: { action: 'accept', destination: '10.9.0.0/16' } })).status,
    ).toBe(201);
    const summary = await applyPlan(plan, { client: client(), resolveSecret: noSecrets });
    expect(summary.results.map((r) => [r.status, r.message])).toEqual([
      ['failed', 'a user with this email was created by someone else since the plan was made; not overwritten'],
      ['failed', 'a device with this key was created by someone else since the plan was made; not overwritten'],
      ['failed', 'a rule with this key was created by someone else since the plan was made; not overwritten'],
    ]);
    const users = (await server.api('GET', '/v0/users')).body.data as { email: string; role: string }[];
    expect(users.filter((u) => u.email.toLowerCase() === 'bob@example.com')).toEqual([
      expect.objectContaining({ email: 'Bob@example.com', role: 'unprivileged' }),
    ]);
  });

  it('hooks: shouldStart stops new writes with its reason; onStart/onSettled see each write', async () => {
    const rules = Array.from({ length: 6 }, (_, i) => rule(`10.${i + 1}.0.0/16`));
    const plan = planChanges(desired({ rules }), await fetchLiveState(client()), OPTIONS);
    const started: string[] = [];
    const settled: string[] = [];
    const summary = await applyPlan(plan, {
      client: client(),
      parallelism: 1,
      resolveSecret: noSecrets,
      onStart: (c) => started.push(c.id),
      onSettled: (r, d) => settled.push(`${r.status} ${d.ms >= 0}`),
      shouldStart: () => (started.length >= 2 ? 'not started: interrupted' : null),
    });
    expect(started).toHaveLength(2);
    expect(summary).toMatchObject({ done: 2, failed: 0, notAttempted: 4 });
    expect(
      summary.results
        .filter((r) => r.status === 'not_attempted')
        .every((r) => r.message === 'not started: interrupted'),
    ).toBe(true);
    expect(settled).toHaveLength(6);
  });
});

describe('applyPlan: rule replacement', () => {
  it('deletes then creates, never PATCHes; a refused create puts the old rule back', async () => {
    const api = client();
    const old = await api.create('rules', { action: 'accept', destination: '10.1.0.0/16' });
    const live = await fetchLiveState(api);
    const good = planChanges(desired({ settings: { prune: true }, rules: [rule('10.1.0.0/24')] }), live, {
      ...OPTIONS,
      tokenUser: null,
    });
    expect(good.changes.map((c) => c.action)).toEqual(['replace']);

    // The same replacement with a body the server refuses: the old rule must come back.
    const refused = basePlan([{ ...good.changes[0]!, body: { ...good.changes[0]!.body, destination: 'not-a-cidr' } }]);
    const failed = await applyPlan(refused, { client: api, resolveSecret: noSecrets });
    expect(failed.results[0]).toMatchObject({ status: 'failed' });
    expect(failed.results[0]!.message).toContain('the old rule was put back');
    const afterFailure = await fetchLiveState(api);
    expect(afterFailure.rules.map((r) => r.destination)).toEqual(['10.1.0.0/16']);

    const fresh = planChanges(desired({ settings: { prune: true }, rules: [rule('10.1.0.0/24')] }), afterFailure, {
      ...OPTIONS,
      tokenUser: null,
    });
    api.writes.length = 0;
    const done = await applyPlan(fresh, { client: api, resolveSecret: noSecrets });
    expect(done.failed).toBe(0);
    expect(api.writes).toEqual(['DELETE rules', 'POST rules']);
    const after = await fetchLiveState(api);
    expect(after.rules.map((r) => r.destination)).toEqual(['10.1.0.0/24']);
    expect(after.rules[0]!.id).not.toBe((old as unknown as { id: string }).id);
  });
});
