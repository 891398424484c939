/**
 * W3.5: fields left out are managed at their default, ignore_changes opts out, now-managed changes,
 * and the plan's outcome (pending / kept / matches) as every format and drift read it.
 */
import { describe, expect, it } from 'vitest';
import { reportFromPlan, driftStatusOf } from '../../../src/drift/report.js';
import { nowManagedChanges } from '../../../src/plan/defaults.js';
import { planChanges } from '../../../src/plan/index.js';
import { planOutcome } from '../../../src/plan/outcome.js';
import { targetPlan } from '../../../src/plan/target.js';
import { nowManagedLine } from '../../../src/views/apply.js';
import { driftText } from '../../../src/views/drift.js';
import { renderPlan, summaryLine } from '../../../src/views/plan.js';
import {
  desired,
  device,
  liveDevice,
  liveRule,
  liveState,
  liveUser,
  OPTIONS,
  user,
} from '../../helpers/plan-fixtures.js';
import { noteText, wordedPlan } from '../../../src/views/notes.js';
import { outcomeText, wordedOutcome } from '../../../src/views/plan-outcome.js';

const admin = liveUser('admin@example.com', { role: 'admin' });
const TIMING = { startedAt: 0, finishedAt: 1, skippedTicks: 0 };
/** The token's owner, an admin no file declares, would keep every plan pending: these files manage other users. */
const OTHERS = { users: ['*@other.test'], rules: [] as string[] };

describe('fields left out are managed at their default', () => {
  it('demotes a live admin whose role the file leaves out, as a now-managed change listed first', () => {
    const carol = liveUser('carol@example.com', { role: 'admin' });
    const dave = liveUser('dave@example.com');
    const plan = planChanges(
      desired({ users: [user('carol@example.com'), user('dave@example.com', { role: 'admin' })] }),
      liveState({ users: [admin, carol, dave] }),
      OPTIONS,
    );
    expect(plan.changes.map((c) => [c.id, c.now_managed ?? null])).toEqual([
      ['user:carol@example.com', ['role']],
      ['user:dave@example.com', null],
    ]);
    expect(noteText(plan.changes[0]!.note)).toBe('now managed: the file leaves role out, which means unprivileged');
    expect(plan.changes[0]!.body).toEqual({ role: 'unprivileged' });
    expect(nowManagedChanges(plan.changes)).toHaveLength(1);
    // apply -f refuses it as a safety limit (src/ops/apply.ts), in these words.
    expect(nowManagedLine(1)).toMatch(/^1 change exists only because/);
    // Counted against the update limit like any update.
    expect(plan.limits.find((l) => l.kind === 'update')!.planned).toBe(2);
  });

  it('turns a device flag left out back on, and leaves description, ipv4 and ipv6 alone', () => {
    const alice = liveUser('alice@example.com');
    const laptop = liveDevice(alice, 'laptop', {
      use_default_endpoint: false,
      endpoint: 'evil.example.net:51820',
      description: 'by hand',
      ipv4: '10.3.2.99',
    });
    const plan = planChanges(
      desired({ users: [user('alice@example.com', { devices: [device('laptop')] })] }),
      liveState({ users: [admin, alice], devices: [laptop] }),
      OPTIONS,
    );
    expect(plan.changes).toHaveLength(1);
    expect(plan.changes[0]!.fields).toEqual([{ field: 'use_default_endpoint', before: false, after: true }]);
    expect(plan.changes[0]!.body).toEqual({ use_default_endpoint: true });
    expect(plan.changes[0]!.now_managed).toEqual(['endpoint']);
  });

  it('a field written at its default is an ordinary change, not now managed', () => {
    const carol = liveUser('carol@example.com', { role: 'admin' });
    const plan = planChanges(
      desired({ users: [user('carol@example.com', { role: 'unprivileged' })] }),
      liveState({ users: [admin, carol] }),
      OPTIONS,
    );
    expect(plan.changes[0]!.now_managed).toBeUndefined();
    expect(plan.changes[0]!.note).toBeUndefined();
  });

  it("ignore_changes (the object's or the settings') leaves the field alone, and the outcome says so", () => {
    const carol = liveUser('carol@example.com', { role: 'admin' });
    const laptop = liveDevice(carol, 'laptop', { use_default_mtu: false, mtu: 1280 });
    for (const files of [
      desired({
        settings: { manage: { users: ['carol@*'], rules: [] } },
        users: [
          {
            ...user('carol@example.com', { devices: [{ ...device('laptop'), ignore_changes: ['mtu'] }] }),
            ignore_changes: ['role'],
          },
        ],
      }),
      desired({
        settings: { manage: { users: ['carol@*'], rules: [] }, ignore_changes: { users: ['role'], devices: ['mtu'] } },
        users: [user('carol@example.com', { devices: [device('laptop')] })],
      }),
    ]) {
      const plan = planChanges(files, liveState({ users: [admin, carol], devices: [laptop] }), OPTIONS);
      expect(plan.changes).toEqual([]);
      expect(plan.outcome).toMatchObject({ status: 'kept', pending: [] });
      expect(plan.outcome!.kept.map((k) => [k.reason, k.id])).toEqual([
        ['ignored', 'user:carol@example.com'],
        ['ignored', 'device:carol@example.com/laptop'],
      ]);
      expect(summaryLine(plan)).toBe(
        'No changes, but not everything matches: 2 fields differ under ignore_changes, not managed (user:carol@example.com role, device:carol@example.com/laptop use_default_mtu).',
      );
    }
  });
});

describe('the outcome', () => {
  it('matches only with no change and nothing kept', () => {
    const plan = planChanges(desired({ settings: { manage: OTHERS } }), liveState({ users: [admin] }), OPTIONS);
    expect(planOutcome(plan).status).toBe('matches');
    expect(summaryLine(plan)).toBe('No changes: the server matches the desired state.');
    expect(driftStatusOf(plan)).toBe('clean');
  });

  it('an undeclared rule inside manage with prune off is pending, in every format and drift', () => {
    const plan = planChanges(
      desired({ settings: { manage: { users: ['nobody@*'], rules: ['10.0.0.0/8'] } } }),
      liveState({ users: [admin], rules: [liveRule({ destination: '10.9.0.0/16' })] }),
      OPTIONS,
    );
    expect(plan.outcome!.status).toBe('pending');
    expect(driftStatusOf(plan)).toBe('drift');
    const text = renderPlan(plan, 'text', { color: false });
    const markdown = renderPlan(plan, 'markdown', { color: false });
    for (const out of [text, markdown]) {
      expect(out).not.toContain('matches the desired state');
      expect(out).toContain('No changes planned, but the server does not match the desired state');
    }
    const report = reportFromPlan(wordedPlan(plan), TIMING);
    expect(report.status).toBe('drift');
    expect(driftText(report)).toContain('No changes planned, but the server does not match');
  });

  it('drift.undeclared none keeps it (exit 0), never "matches"; the webhook does not say "matches" either', () => {
    const plan = planChanges(
      desired({ settings: { manage: { users: ['nobody@*'], rules: ['10.0.0.0/8'] }, drift: { undeclared: 'none' } } }),
      liveState({ users: [admin], rules: [liveRule({ destination: '10.9.0.0/16' })] }),
      OPTIONS,
    );
    expect(plan.outcome!.status).toBe('kept');
    const report = reportFromPlan(wordedPlan(plan), TIMING);
    expect(report.status).toBe('clean');
    expect(driftText(report, 'drift')).toBe(
      'netform drift on http://127.0.0.1:4000: back to clean: No changes, but not everything matches: 1 undeclared object kept.',
    );
  });

  it('a demotion the last-admin guard cancels is pending; one settings.protect cancels is kept', () => {
    const only = liveUser('only@example.com', { role: 'admin' });
    const scoped = { users: ['only@*'], rules: [] as string[] };
    const lastAdmin = planChanges(
      desired({ settings: { manage: scoped }, users: [user('only@example.com')] }),
      liveState({ users: [only] }),
      { ...OPTIONS, tokenUser: null },
    );
    expect(lastAdmin.changes).toEqual([]);
    expect(lastAdmin.outcome!.pending.map((p) => [p.reason, p.id])).toEqual([['guard', 'user:only@example.com']]);
    const protectedUser = planChanges(
      desired({ settings: { manage: scoped, protect: { users: ['only@*'] } }, users: [user('only@example.com')] }),
      liveState({ users: [admin, only] }),
      OPTIONS,
    );
    expect(protectedUser.outcome).toMatchObject({ status: 'kept', pending: [] });
    expect(protectedUser.outcome!.kept.map((k) => [k.reason, outcomeText(k.text)])).toEqual([
      ['protected', 'user only@example.com: kept (protected)'],
    ]);
  });

  it('--target: what it leaves out keeps the plan pending', () => {
    const a = liveUser('a@example.com');
    const b = liveUser('b@example.com');
    const plan = planChanges(
      desired({
        settings: { manage: { users: ['a@*', 'b@*'], rules: [] } },
        users: [user('a@example.com', { role: 'admin' }), user('b@example.com', { role: 'admin' })],
      }),
      liveState({ users: [admin, a, b] }),
      OPTIONS,
    );
    const targeted = targetPlan(plan, ['user:a@example.com']);
    expect(targeted.changes.map((c) => c.id)).toEqual(['user:a@example.com']);
    expect(wordedOutcome(targeted.outcome!).pending).toEqual([
      { reason: 'target', text: '1 change left out by --target' },
    ]);
    const none = targetPlan(targetPlan(plan, ['user:a@example.com']), ['user:nobody@example.com']);
    expect(none.outcome!.status).toBe('pending');
    expect(summaryLine(none)).toMatch(/^No changes planned, but the server does not match/);
  });
});
