/**
 * Saved plans expire (`apply --plan-max-age`, default 7 days): a sealed plan older than that by its
 * sealed `created_at` is refused (exit 1, nothing written); `0` turns the check off; `--reviewed`
 * only warns. The old plans here are real plans, sealed again under the run's own key with an
 * earlier `created_at`, as only someone holding the key could.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { canonicalJson } from '../../../src/plan/canonical.js';
import { PlanKey } from '../../../src/plan/seal.js';
import type { TestServer } from '../../helpers/server.js';
import {
  describeResult,
  netform,
  serverState,
  useServerAndWorkspace,
  type Workspace,
} from '../../helpers/workspace.js';

let server: TestServer;
let ws: Workspace;
useServerAndWorkspace((started) => ({ server, ws } = started));

const HOUR = 3_600_000;

function files(domain: string, users: string[]): string {
  return `version: 1
settings: { prune: false, manage: { users: ["*@${domain}"], rules: [] } }
users:
${users.map((u) => `  - email: ${u}@${domain}\n`).join('')}`;
}

/** A plan of `users` saved to NAME.json, then made `ageMs` older and sealed again under the run's key. */
async function agedPlan(name: string, domain: string, users: string[], ageMs: number): Promise<string> {
  const file = ws.write(`${name}/netform.yaml`, files(domain, users));
  const path = ws.path(`${name}.json`);
  const planned = await netform(server, ['plan', '-f', file, '-o', path]);
  expect(planned.code, describeResult(planned)).toBe(2);
  const doc = JSON.parse(readFileSync(path, 'utf8'));
  doc.created_at = new Date(Date.parse(doc.created_at) - ageMs).toISOString();
  delete doc.seal;
  doc.seal = PlanKey.from({}, () => server.token).sealOf(canonicalJson(doc));
  writeFileSync(path, JSON.stringify(doc, null, 2));
  return path;
}

const emails = async (domain: string) =>
  (await serverState(server)).users.map((u) => u.email as string).filter((e) => e.endsWith(`@${domain}`));

describe('saved plans expire', () => {
  it('a plan sealed 8 days ago is refused by default (exit 1, nothing written); --plan-max-age 0 applies it', async () => {
    const path = await agedPlan('eight-days', 'old.test', ['kim'], 8 * 24 * HOUR);
    const refused = await netform(server, ['apply', path]);
    expect(refused.code, describeResult(refused)).toBe(1);
    expect(refused.stderr).toContain(
      `error: ${path}: the saved plan was made 8 days ago, more than --plan-max-age (7 days); nothing was changed.`,
    );
    expect(refused.stdout).toBe('');
    expect(await emails('old.test')).toEqual([]);

    const applied = await netform(server, ['apply', path, '--plan-max-age', '0']);
    expect(applied.code, describeResult(applied)).toBe(0);
    expect(await emails('old.test')).toEqual(['kim@old.test']);
  });

  it('--plan-max-age takes a duration: a 13-hour-old plan is refused under 12h and applied under 1d', async () => {
    const path = await agedPlan('thirteen-hours', 'hours.test', ['lee'], 13 * HOUR);
    const refused = await netform(server, ['apply', path, '--plan-max-age', '12h']);
    expect(refused.code, describeResult(refused)).toBe(1);
    expect(refused.stderr).toContain('the saved plan was made 13 hours ago, more than --plan-max-age (12 hours)');
    expect(await emails('hours.test')).toEqual([]);
    const applied = await netform(server, ['apply', path, '--plan-max-age', '1d']);
    expect(applied.code, describeResult(applied)).toBe(0);
    expect(await emails('hours.test')).toEqual(['lee@hours.test']);
  });

  it('refuses a --plan-max-age that is not a duration, naming the flag', async () => {
    const path = await agedPlan('fresh', 'fresh.test', ['max'], 0);
    for (const bad of ['7', '-1d', '1.5d', 'week']) {
      const refused = await netform(server, ['apply', path, '--plan-max-age', bad]);
      expect(refused.code, describeResult(refused)).toBe(1);
      expect(refused.stderr).toContain('--plan-max-age: expected a duration such as 7d, 12h, 30m, 90s or 2w');
    }
    expect(await emails('fresh.test')).toEqual([]);
  });

  it('apply --reviewed with an old reviewed plan only warns, and writes what it shows', async () => {
    const reviewed = await agedPlan('reviewed', 'reviewed.test', ['ann'], 10 * 24 * HOUR);
    const applied = await netform(server, ['apply', '-f', ws.path('reviewed/netform.yaml'), '--reviewed', reviewed]);
    expect(applied.code, describeResult(applied)).toBe(0);
    expect(applied.stderr).toContain(
      `warning: the reviewed plan ${reviewed} was made 10 days ago, more than --plan-max-age (7 days)`,
    );
    expect(await emails('reviewed.test')).toEqual(['ann@reviewed.test']);
  });
});
