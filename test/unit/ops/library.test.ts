/**
 * The operations as a library (src/ops) against a real server in-process: each takes a request,
 * events and an AbortSignal and returns data; expected failures are OpErrors of a kind; nothing
 * is printed.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  applyPlanned,
  applySaved,
  connectTo,
  OpError,
  opErrorText,
  PlanKey,
  planAgainstServer,
  showLive,
  validateDesired,
  type Connector,
  type Phase,
} from '../../../src/index.js';
import { startInProcessServer } from '../../helpers/in-process-server.js';
import { TEST_ADMIN_EMAIL, type TestServer } from '../../helpers/server-api.js';
import { KEY_A } from '../../helpers/plan-fixtures.js';
import { resultWhy } from '../../../src/views/ops-apply.js';

let server: TestServer;
let dir: string;
let connect: Connector;
const noSecrets = () => {
  throw new Error('no secrets in these files');
};

beforeEach(async () => {
  [server, dir] = await Promise.all([startInProcessServer({ logger: false }), mkdtemp(join(tmpdir(), 'netform-ops-'))]);
  connect = connectTo({ server: { url: server.url, token: server.token }, tokenUser: TEST_ADMIN_EMAIL });
});
afterEach(async () => {
  await Promise.all([server.stop(), rm(dir, { recursive: true, force: true })]);
});

async function desired(yaml: string): Promise<string> {
  const file = join(dir, 'netform.yaml');
  await writeFile(file, `version: 1\nusers:\n  - email: ${TEST_ADMIN_EMAIL}\n    role: admin\n${yaml}`);
  return file;
}

const ALICE = `  - email: alice@example.com
    devices:
      - { name: laptop, public_key: ${KEY_A} }
    rules:
      - { action: drop, destination: 10.1.0.0/16 }
`;

describe('planAgainstServer', () => {
  it('returns the finished plan (access changes attached) and reports its phases', async () => {
    const phases: Phase[] = [];
    const file = await desired(`${ALICE}rules:\n  - { action: drop, destination: 10.9.0.0/16 }\n`);
    const { plan } = await planAgainstServer({ file, connect }, { phase: (name) => phases.push(name) });
    expect(plan.changes.map((c) => `${c.action} ${c.id}`)).toEqual([
      'create user:alice@example.com',
      'create device:alice@example.com/laptop',
      'create rule:*|drop|10.9.0.0/16|any',
      'create rule:alice@example.com|drop|10.1.0.0/16|any',
    ]);
    expect(plan.access?.everyone?.blocked.map((b) => b.addresses)).toEqual([['10.9.0.0/16']]);
    expect(phases).toEqual(['load', 'fetch', 'diff', 'access']);
  });

  it('raises OpErrors of a kind: files with errors, an unknown target', async () => {
    const bad = await desired('  - email: not-an-email\n');
    const invalid = (await planAgainstServer({ file: bad, connect }).catch((e: unknown) => e)) as OpError;
    expect(invalid).toMatchObject({ name: 'OpError', kind: 'desired-state' });
    expect(opErrorText(invalid)).toContain('the desired state has errors');
    const file = await desired(ALICE);
    const targeted = planAgainstServer({ file, connect, target: ['host:x'] });
    await expect(targeted).rejects.toBeInstanceOf(OpError);
    await expect(targeted).rejects.toMatchObject({ kind: 'request' });
  });
});

describe('applyPlanned and applySaved', () => {
  it('applies a plan made now; the same plan saved is stale once applied', async () => {
    const file = await desired(ALICE);
    const shown: string[] = [];
    const outcome = await applyPlanned(
      { file, connect, resolveSecret: noSecrets },
      { planned: (plan) => shown.push(plan.summary.create.toString()) },
    );
    expect(shown).toEqual(['3']);
    expect(outcome.status).toBe('applied');
    if (outcome.status !== 'applied') return;
    expect({ done: outcome.summary.done, stoppedBy: outcome.stoppedBy }).toEqual({ done: 3, stoppedBy: null });
    const key = PlanKey.from({}, () => 'the token the plan was sealed with');
    const again = await applySaved({
      plan: outcome.plan,
      connect,
      key,
      readSecret: () => ({ problem: 'the plan sends no secret' }),
    });
    expect(again.status).toBe('stale');
  });

  it('starts no write once the signal is aborted, and says why', async () => {
    const stop = new AbortController();
    const outcome = await applyPlanned(
      { file: await desired(ALICE), connect, resolveSecret: noSecrets },
      { writing: () => stop.abort('stopped by the test') },
      stop.signal,
    );
    expect(outcome.status).toBe('applied');
    if (outcome.status !== 'applied') return;
    expect(outcome.stoppedBy).toBe('stopped by the test');
    expect(outcome.summary.results[0]!.stop).toEqual({ code: 'interrupted', by: 'stopped by the test' });
    expect(outcome.summary.results.map((r) => [r.status, resultWhy(r)])).toEqual([
      ['not_attempted', 'not started: apply was interrupted (stopped by the test)'],
      ['not_attempted', 'depends on user alice@example.com, which did not succeed'],
      ['not_attempted', 'depends on user alice@example.com, which did not succeed'],
    ]);
    const { plan } = await planAgainstServer({ file: await desired(ALICE), connect });
    expect(plan.changes).toHaveLength(3);
  });

  it('refuses a plan over a safety limit, writing nothing', async () => {
    const file = await desired(ALICE);
    await applyPlanned({ file, connect, resolveSecret: noSecrets });
    const outcome = await applyPlanned({ file: await desired(''), connect, resolveSecret: noSecrets, allowDeletes: 0 });
    expect(outcome.status).toBe('no-changes');
    await writeFile(
      file,
      `version: 1\nsettings: { prune: true }\nusers:\n  - email: ${TEST_ADMIN_EMAIL}\n    role: admin\n`,
    );
    const refused = await applyPlanned({ file, connect, resolveSecret: noSecrets, allowDeletes: 0 });
    expect(refused).toMatchObject({ status: 'refused', overLimit: [{ kind: 'delete', planned: 3, allowed: 0 }] });
  });
});

describe('showLive and validateDesired', () => {
  it('show: YAML of the objects named; an OpError for a key the server does not have', async () => {
    await applyPlanned({ file: await desired(ALICE), connect, resolveSecret: noSecrets });
    const yaml = await showLive({ connect, keys: ['user:alice@example.com'], schemaRef: 'schema.json' });
    expect(yaml).toContain('alice@example.com');
    expect(yaml).not.toContain(TEST_ADMIN_EMAIL);
    const missing = (await showLive({ connect, keys: ['user:nobody@example.com'], schemaRef: 'x' }).catch(
      (e: unknown) => e,
    )) as OpError;
    expect(missing).toMatchObject({ kind: 'request' });
    // With the nearest live key as a hint.
    expect(opErrorText(missing)).toBe(
      `the server has no user:nobody@example.com (did you mean user:${TEST_ADMIN_EMAIL}?)`,
    );
  });

  it('validate: errors and counts as data', async () => {
    expect(await validateDesired({ file: await desired(ALICE) })).toMatchObject({
      ok: true,
      counts: { users: 2, devices: 1, rules: 1 },
    });
    const invalid = await validateDesired({ file: await desired('  - email: nope\n') });
    expect(invalid.ok).toBe(false);
    expect(invalid.errors[0]!.message).toBeTruthy();
  });
});
