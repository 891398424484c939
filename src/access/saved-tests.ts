/**
 * The access tests a saved plan carries to its apply (Plan.access_tests), and their judgement
 * there: apply of a saved plan has no files, so the plan holds the tests and the settings they are
 * judged under, and the state after apply (after-apply.ts) is built from the plan's changes over
 * the server as it is at apply time. A live rule made since the plan (outside the scope, so not a
 * stale change) that makes a test fail is then found before any write. Pure.
 */
import { userKey } from '../model/keys.js';
import { defaultSettings, type DesiredState, type DesiredUser, type LiveState } from '../model/state.js';
import type { Plan, PlanAccessTests, PlanTests } from '../plan/types.js';
import { stateAfterApply } from './after-apply.js';
import { afterApplyTestsSummary } from './tests.js';

/** What a plan made from `desired` carries of its tests; undefined without tests. */
export function planAccessTests(desired: DesiredState): PlanAccessTests | undefined {
  const tests = desired.tests ?? [];
  if (tests.length === 0) return undefined;
  const { manage, port_rules, server_addresses } = desired.settings;
  return {
    tests: tests.map((test) => ({
      name: test.name,
      from: test.from,
      to: test.to,
      expect: test.expect,
      ...(test.source ? { at: `${test.source.file}:${test.source.line}` } : {}),
    })),
    manage: { users: manage.users, rules: manage.rules },
    ...(port_rules === false ? { port_rules: false } : {}),
    ...(server_addresses !== undefined ? { server_addresses: [...server_addresses] } : {}),
  };
}

/**
 * A saved plan's tests judged on the state after apply: its changes over `live` (the server read
 * at apply time). Undefined when the plan carries no tests.
 */
export function judgeSavedPlanTests(plan: Plan, live: LiveState): PlanTests | undefined {
  const desired = desiredOfSavedPlan(plan);
  if (!desired) return undefined;
  return afterApplyTestsSummary(
    desired,
    stateAfterApply({ changes: plan.changes, undeclared: plan.undeclared, live, desired }),
  );
}

/**
 * The part of a desired state the state after apply reads, as a saved plan holds it: the tests and
 * settings it carries, the users it creates (by their email as sent) and the devices it writes
 * (their name and pinned addresses, as sent). Rules are not needed: a plan's changes name them.
 */
function desiredOfSavedPlan(plan: Plan): DesiredState | undefined {
  const saved = plan.access_tests;
  if (!saved) return undefined;
  const users = new Map<string, DesiredUser>();
  const userOf = (key: string): DesiredUser => {
    let user = users.get(key);
    if (!user) users.set(key, (user = { email: key, devices: [], rules: [] }));
    return user;
  };
  for (const change of plan.changes) {
    const body = change.body ?? {};
    if (change.kind === 'user' && change.action === 'create' && typeof body.email === 'string')
      userOf(userKey(change.key)).email = body.email;
    if (change.kind !== 'device' || change.action === 'delete') continue;
    const slash = change.key.lastIndexOf('/');
    const fields: Record<string, unknown> = {};
    for (const family of ['ipv4', 'ipv6'] as const) if (typeof body[family] === 'string') fields[family] = body[family];
    userOf(change.key.slice(0, slash)).devices.push({ name: change.key.slice(slash + 1), fields });
  }
  return {
    settings: {
      ...defaultSettings(),
      manage: { users: saved.manage.users, rules: saved.manage.rules },
      ...(saved.port_rules === false ? { port_rules: false } : {}),
      ...(saved.server_addresses ? { server_addresses: [...saved.server_addresses] } : {}),
    },
    users: [...users.values()],
    rules: [],
    absent: { users: [], devices: [] },
    tests: saved.tests.map(({ at, ...test }) => ({ ...test, ...(at ? { source: sourceOf(at) } : {}) })),
    sources: plan.sources,
  };
}

/** `desired/tests.yaml:12` back to a location (the column is not kept). */
function sourceOf(at: string): { file: string; line: number; column: number } {
  const colon = at.lastIndexOf(':');
  return { file: at.slice(0, colon), line: Number(at.slice(colon + 1)), column: 1 };
}
