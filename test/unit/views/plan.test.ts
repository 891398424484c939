import { describe, expect, it } from 'vitest';
import { canonicalJson } from '../../../src/plan/canonical.js';
import { savedPlanJson } from '../../../src/plan/planfile.js';
import { wordedPlan } from '../../../src/views/notes.js';
import { PlanKey } from '../../../src/plan/seal.js';
import { planChanges, type Plan } from '../../../src/plan/index.js';
import { MARKDOWN_MARKER, renderPlan, summaryLine } from '../../../src/views/plan.js';
import {
  desired,
  device,
  liveDevice,
  liveRule,
  liveState,
  liveUser,
  OPTIONS,
  PSK_LIVE,
  PSK_NEW,
  rule,
  secret,
  user,
} from '../../helpers/plan-fixtures.js';

function samplePlan(): Plan {
  const admin = liveUser('admin@example.com', { role: 'admin' });
  const a = liveUser('alice@example.com');
  const b = liveUser('bob@example.com');
  return planChanges(
    desired({
      settings: { prune: true, manage: { users: ['alice@*', 'bob@*', 'new@*'], rules: [] } },
      users: [
        user('alice@example.com', {
          devices: [
            device(
              'laptop',
              { mtu: 1380, use_default_mtu: false, description: 'has ``` fences' },
              { preshared_key: secret(PSK_NEW, 'PSK') },
            ),
          ],
        }),
        user('new@example.com', {
          password: secret('new-user-password-1', 'PW'),
          rules: [rule('10.1.0.0/16', { port_type: 'tcp', port_range: '443' })],
        }),
      ],
    }),
    liveState({
      users: [admin, a, b],
      devices: [liveDevice(a, 'laptop'), liveDevice(b, 'phone')],
      rules: [liveRule({ destination: '10.5.0.0/16', user_id: b.id })],
    }),
    OPTIONS,
  );
}

describe('renderPlan', () => {
  it('text: symbols, field-level before -> after, cascades, sensitive fields, one-line summary, no colour when asked', () => {
    const text = renderPlan(samplePlan(), 'text', { color: false });
    expect(text).toContain('  + user new@example.com\n');
    expect(text).toContain('      password: (sensitive)\n');
    expect(text).toContain('  ~ device alice@example.com/laptop\n');
    expect(text).toContain('      mtu: 1280 -> 1380\n');
    expect(text).toContain('      preshared_key: (sensitive value changed)\n');
    expect(text).toContain('  + rule accept 10.1.0.0/16 tcp 443 (new@example.com)\n');
    expect(text).toContain('      user: "new@example.com"\n');
    expect(text).toContain('  - user bob@example.com  (declared in no file (prune))\n');
    expect(text).toContain('      - device bob@example.com/phone (goes with the user)\n');
    expect(text).toContain('      - rule accept 10.5.0.0/16 (bob@example.com) (goes with the user)\n');
    expect(text.trimEnd().split('\n').at(-1)).toBe(
      'Plan: 2 to create, 1 to update, 0 to replace, 1 to delete (+2 with their user).',
    );
    expect(text).not.toMatch(/\x1b\[/);
    for (const s of [PSK_NEW, PSK_LIVE, 'new-user-password-1']) expect(text).not.toContain(s);
  });

  it('text: colours only when asked', () => {
    expect(renderPlan(samplePlan(), 'text', { color: true })).toMatch(
      /\x1b\[32m {2}\+ user new@example.com|\x1b\[32m\+ user/,
    );
  });

  it('text: a replace and an exceeded limit', () => {
    const a = liveUser('alice@example.com');
    const plan = planChanges(
      desired({
        users: [user('alice@example.com', { devices: [device('laptop', { mtu: 1400, use_default_mtu: false })] })],
        settings: { limits: { update: { kind: 'count', value: 0 } } },
      }),
      liveState({ users: [liveUser('admin@example.com', { role: 'admin' }), a], devices: [liveDevice(a, 'laptop')] }),
      { ...OPTIONS, replace: true },
    );
    const text = renderPlan(plan, 'text', { color: false });
    expect(text).toContain('  -/+ device alice@example.com/laptop  (replaced');
    expect(text).toContain(
      'Over a safety limit: 1 updates (replacements included) exceed the limit of 0 (0); pass --allow-updates 1 to allow this run',
    );
  });

  it('says so when there is nothing to do', () => {
    const plan = planChanges(desired(), liveState(), { ...OPTIONS, tokenUser: null });
    expect(renderPlan(plan, 'text', { color: false })).toContain('No changes: the server matches the desired state.');
    expect(summaryLine(plan)).toBe('No changes: the server matches the desired state.');
  });

  it('never prints a value of a sensitive field, even if a plan carried one by mistake', () => {
    const plan = samplePlan();
    plan.changes[0]!.fields.push(
      { field: 'preshared_key', before: PSK_LIVE, after: PSK_NEW },
      { field: 'token', before: null, after: 'nf_secret_token', sensitive: true },
    );
    for (const format of ['text', 'markdown'] as const) {
      const out = renderPlan(plan, format, { color: false });
      for (const s of [PSK_NEW, PSK_LIVE, 'nf_secret_token']) expect(out).not.toContain(s);
    }
  });

  it('json: the versioned plan document, sealed with the key given, round-trips, no secrets', () => {
    const plan = samplePlan();
    const key = PlanKey.from({}, () => 'nf_token_for_sealing');
    const text = savedPlanJson(wordedPlan(plan), key);
    const { seal, seal_key, changes, ...rest } = JSON.parse(text);
    // The document is the plan with its notes in words.
    const { changes: plannedChanges, ...plannedRest } = JSON.parse(JSON.stringify(wordedPlan(plan)));
    expect(rest).toEqual(plannedRest);
    expect(seal_key).toEqual({ source: 'token', id: key.id });
    // Each secret is its reference and an HMAC of its value; everything else is as planned.
    expect(changes.map(({ secrets: _s, ...c }: any) => c)).toEqual(
      plannedChanges.map(({ secrets: _s, ...c }: any) => c),
    );
    const secrets = changes.flatMap((c: any) => (c.secrets ?? []).map((s: any) => ({ id: c.id, ...s })));
    expect(secrets).toEqual([
      {
        id: 'user:new@example.com',
        field: 'password',
        ref: { env: 'PW' },
        hmac: expect.stringMatching(/^hmac-sha256:[0-9a-f]{64}$/),
      },
      {
        id: 'device:alice@example.com/laptop',
        field: 'preshared_key',
        ref: { env: 'PSK' },
        hmac: expect.stringMatching(/^hmac-sha256:[0-9a-f]{64}$/),
      },
    ]);
    expect(secrets[0].hmac).toBe(key.secretHmac('user:new@example.com', 'password', 'new-user-password-1'));
    expect(secrets[1].hmac).toBe(key.secretHmac('device:alice@example.com/laptop', 'preshared_key', PSK_NEW));
    // The seal covers the document: any edit changes it.
    const { seal: _seal, ...sealed } = JSON.parse(text);
    expect(seal).toBe(key.sealOf(canonicalJson(sealed)));
    expect(key.sealOf(canonicalJson({ ...sealed, server: 'https://elsewhere.test' }))).not.toBe(seal);
    expect(JSON.parse(text)).toMatchObject({ format: 'netform.plan', format_version: 3 });
    for (const s of [PSK_NEW, PSK_LIVE, 'new-user-password-1', 'nf_token_for_sealing']) expect(text).not.toContain(s);
  });

  it('json without a key: no seal and no secret HMACs (drift), so apply would refuse it', () => {
    const plan = samplePlan();
    const doc = JSON.parse(renderPlan(plan, 'json', { color: false }));
    expect(doc).toEqual(JSON.parse(JSON.stringify(wordedPlan(plan))));
    expect(doc.changes.find((c: any) => c.id === 'user:bob@example.com').note).toBe('declared in no file (prune)');
    expect(doc).not.toHaveProperty('seal');
    expect(doc.changes.flatMap((c: any) => c.secrets ?? []).every((s: any) => !('hmac' in s))).toBe(true);
  });

  it('markdown: starts with the hidden marker, fences the diff safely', () => {
    const md = renderPlan(samplePlan(), 'markdown', { color: false });
    expect(md.split('\n')[0]).toBe(MARKDOWN_MARKER);
    expect(md).toContain('**Plan: 2 to create, 1 to update, 0 to replace, 1 to delete (+2 with their user).**');
    expect(md).toContain('````diff\n');
    expect(md).toContain('+ user new@example.com\n');
    expect(md).toContain('-     - device bob@example.com/phone (goes with the user)');
    expect(md).not.toMatch(/\x1b\[/);
  });

  it('markdown: a 3,000-change plan stays under 60,000 characters, summary first, fences closed, the rest counted', () => {
    const users = Array.from({ length: 3_000 }, (_, i) =>
      user(`person-${String(i).padStart(4, '0')}@example.com`, { role: 'admin' }),
    );
    const plan = planChanges(
      desired({ users }),
      liveState({ users: [liveUser('admin@example.com', { role: 'admin' })] }),
      { ...OPTIONS, allowDeletes: 10_000, allowUpdates: 10_000 },
    );
    expect(plan.changes).toHaveLength(3_000);
    const md = renderPlan(plan, 'markdown', {
      color: false,
      fullPlanAt: 'the plan.txt and plan.json artifacts of this run',
    });
    expect(md.length).toBeLessThan(60_000);
    expect(md.length).toBeGreaterThan(50_000);
    const lines = md.split('\n');
    expect(lines[0]).toBe(MARKDOWN_MARKER);
    expect(md.indexOf('**Plan: 3000 to create')).toBeLessThan(md.indexOf('```diff'));
    // Fences balanced: every opening has its closing.
    expect(lines.filter((l) => /^`{3,}/.test(l)).length % 2).toBe(0);
    // One block of changes, one of undeclared objects (the live admin no file declares).
    expect(lines.filter((l) => /^`{3,}diff$/.test(l))).toHaveLength(2);
    const shown = lines.filter((l) => /^\+ user person-/.test(l)).length;
    expect(shown).toBeGreaterThan(100);
    expect(md).toContain(
      `**${3_000 - shown} of 3000 changes are not shown** (a comment holds at most 60,000 characters). The full plan: the plan.txt and plan.json artifacts of this run.`,
    );
    // Whole changes only: the last shown change keeps its detail line.
    const lastShown = lines.findLastIndex((l) => /^\+ user person-/.test(l));
    expect(lines.slice(lastShown + 1, lastShown + 3)).toEqual([
      `+     email: "person-${String(shown - 1).padStart(4, '0')}@example.com"`,
      '+     role: "admin"',
    ]);
    // A small plan is not cut at all.
    expect(renderPlan(samplePlan(), 'markdown', { color: false })).not.toContain('not shown');
  });

  it('markdown: large access changes stay inside the budget too, and leave room for the changes', () => {
    const users = Array.from({ length: 3_000 }, (_, i) =>
      user(`person-${String(i).padStart(4, '0')}@example.com`, { role: 'admin' }),
    );
    const plan = planChanges(
      desired({ users }),
      liveState({ users: [liveUser('admin@example.com', { role: 'admin' })] }),
      { ...OPTIONS, allowDeletes: 10_000, allowUpdates: 10_000 },
    );
    const block = (i: number, j: number) => ({
      family: 4 as const,
      addresses: [`10.${i % 250}.${j}.0/24`],
      protocol: 'tcp' as const,
      ports: '22, 443',
    });
    plan.access = {
      users: Array.from({ length: 100 }, (_, i) => ({
        user: `person-${String(i).padStart(4, '0')}@example.com`,
        reachable: Array.from({ length: 20 }, (_, j) => block(i, j)),
        blocked: Array.from({ length: 20 }, (_, j) => block(i, j + 100)),
      })),
    };
    const md = renderPlan(plan, 'markdown', { color: false });
    expect(md.length).toBeLessThan(60_000);
    expect(md).toContain('<summary>Access changes after apply (compared with the server now)</summary>');
    expect(md).toMatch(/\*\*… \d+ more line\(s\) of access changes are not shown\*\*/);
    expect(md.split('\n').filter((l) => /^\+ user person-/.test(l)).length).toBeGreaterThan(100);
    expect(md.split('\n').filter((l) => /^`{3,}/.test(l)).length % 2).toBe(0);
  });

  it('markdown: 3,000 undeclared live objects also stay inside the budget', () => {
    const live = Array.from({ length: 3_000 }, (_, i) => liveUser(`kept-${String(i).padStart(4, '0')}@example.com`));
    const plan = planChanges(
      desired({ users: [user('admin@example.com')] }),
      liveState({ users: [liveUser('admin@example.com', { role: 'admin' }), ...live] }),
      OPTIONS,
    );
    expect(plan.undeclared?.length).toBe(3_000);
    const md = renderPlan(plan, 'markdown', { color: false });
    expect(md.length).toBeLessThan(60_000);
    const lines = md.split('\n');
    expect(lines.filter((l) => /^`{3,}/.test(l)).length % 2).toBe(0);
    expect(md).toMatch(/\*\*\d+ more undeclared object\(s\) are not shown\.\*\*/);
  });
});
