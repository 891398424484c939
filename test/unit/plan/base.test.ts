/** compareWithBase: each change of a pull request's plan is its own or already on the base; what it undoes is listed; the renderers show them apart. */
import { describe, expect, it } from 'vitest';
import { accessChangesAfter } from '../../../src/access/plan.js';
import { compareWithBase } from '../../../src/plan/base.js';
import { planChanges, type Plan } from '../../../src/plan/index.js';
import { renderPlan } from '../../../src/views/plan.js';
import {
  desired,
  device,
  KEY_B,
  liveDevice,
  liveState,
  liveUser,
  OPTIONS,
  rule,
  user,
} from '../../helpers/plan-fixtures.js';

const admin = liveUser('admin@example.com', { role: 'admin' });
const alice = liveUser('alice@example.com');
const bob = liveUser('bob@example.com');
const carol = liveUser('carol@example.com'); // made by hand: drift
const laptop = liveDevice(alice, 'laptop', { mtu: 1280, use_default_mtu: false });
const phone = liveDevice(bob, 'phone', { public_key: KEY_B, ipv4: '10.3.2.3', ipv6: 'fd00::3:2:3' });
const live = liveState({ users: [admin, alice, bob, carol], devices: [laptop, phone] });

const bobsPhone = device('phone', { public_key: KEY_B });
/** main, merged and not applied: dave added, bob made an admin who may not reach 10.9/16, the laptop's mtu 1300. */
const mainFiles = desired({
  settings: { prune: true },
  users: [
    user('admin@example.com'),
    user('alice@example.com', { devices: [device('laptop', { mtu: 1300, use_default_mtu: false })] }),
    user('bob@example.com', { role: 'admin', devices: [bobsPhone], rules: [rule('10.9.0.0/16', { action: 'drop' })] }),
    user('dave@example.com'),
  ],
});
/** The pull request, on top of main: kim added, alice may not reach 10.7/16, bob stays unprivileged, the laptop's mtu 1400. */
const prFiles = desired({
  settings: { prune: true },
  users: [
    user('admin@example.com'),
    user('alice@example.com', {
      devices: [device('laptop', { mtu: 1400, use_default_mtu: false })],
      rules: [rule('10.7.0.0/16', { action: 'drop' })],
    }),
    user('bob@example.com', { devices: [bobsPhone], rules: [rule('10.9.0.0/16', { action: 'drop' })] }),
    user('dave@example.com'),
    user('kim@example.com'),
  ],
});

function compared(): Plan {
  const pr = planChanges(prFiles, live, OPTIONS);
  const base = planChanges(mainFiles, live, OPTIONS);
  const plan = compareWithBase(pr, base, { ref: 'origin/main', commit: '0123456789abcdef0123456789abcdef01234567' });
  const already = plan.changes.filter((c) => c.origin === 'base');
  const own = plan.changes.filter((c) => c.origin === 'pr');
  plan.base!.access_pr = accessChangesAfter(live, prFiles, already, own);
  plan.base!.access_base = accessChangesAfter(live, prFiles, [], already);
  return plan;
}

describe('compareWithBase', () => {
  it("marks each change as the pull request's (absent from the base's plan, or different there) or the base's (identical)", () => {
    const plan = compared();
    expect(plan.changes.map((c) => `${c.origin} ${c.action} ${c.id}`)).toEqual([
      'base create user:dave@example.com',
      'pr create user:kim@example.com',
      'pr update device:alice@example.com/laptop',
      'pr create rule:alice@example.com|drop|10.7.0.0/16|any',
      'base create rule:bob@example.com|drop|10.9.0.0/16|any',
      'base delete user:carol@example.com',
    ]);
    expect(plan.resolved_by_pr!.map((c) => `${c.action} ${c.id}`)).toEqual(['update user:bob@example.com']);
    expect(plan.resolved_by_pr![0]).not.toHaveProperty('body');
    expect(plan.summary).toMatchObject({ create: 4, update: 1, delete: 1 });
  });

  it('splits the access changes: the base part, then this pull request’s own on top of it', () => {
    const plan = compared();
    const users = (a: typeof plan.access) => (a?.users ?? []).map((u) => u.user);
    expect(users(plan.base!.access_pr)).toEqual(['alice@example.com']);
    expect(users(plan.base!.access_base)).toEqual(['bob@example.com']);
  });

  it('without a base plan, every change is the pull request’s, with the note', () => {
    const pr = planChanges(prFiles, live, OPTIONS);
    const plan = compareWithBase(pr, null, { ref: 'origin/main', note: 'desired does not exist at origin/main' });
    expect(new Set(plan.changes.map((c) => c.origin))).toEqual(new Set(['pr']));
    expect(plan.resolved_by_pr).toEqual([]);
    expect(renderPlan(plan, 'markdown', { color: false })).toContain('> desired does not exist at origin/main');
  });
});

describe('rendering a plan compared with its base', () => {
  it("text: this pull request's changes first, then those also applied on merge, then what it undoes; the summary stays last", () => {
    const text = renderPlan(compared(), 'text', { color: false });
    expect(text).toContain(
      'Compared with origin/main (0123456789ab): 3 changes by this pull request, 3 changes also applied on merge (already in its plan), 1 change undone.',
    );
    const at = (s: string) => {
      expect(text).toContain(s);
      return text.indexOf(s);
    };
    const order = [
      at("This pull request's changes:"),
      at('  + user kim@example.com\n'),
      at('      mtu: 1280 -> 1400\n'),
      at('Access changes of this pull request (after apply):'),
      at("Also applied on merge: already in origin/main's plan (drift, or merged and not yet applied):"),
      at('  + user dave@example.com\n'),
      at('  - user carol@example.com'),
      at("Access changes already in origin/main's plan (after apply):"),
      at("Undone by this pull request: in origin/main's plan, not made on merge:"),
      at('  ~ user bob@example.com\n      role: "unprivileged" -> "admin"\n'),
    ];
    expect(order).toEqual([...order].sort((a, b) => a - b));
    expect(text.trimEnd().split('\n').at(-1)).toBe('Plan: 4 to create, 1 to update, 0 to replace, 1 to delete.');
  });

  it('markdown: the same sections, in the same order, each in its own fenced block', () => {
    const md = renderPlan(compared(), 'markdown', { color: false });
    const order = [
      md.indexOf('Compared with `origin/main` (`0123456789ab`)'),
      md.indexOf("<details open><summary>This pull request's changes</summary>"),
      md.indexOf('+ user kim@example.com'),
      md.indexOf('<details open><summary>Access changes of this pull request (after apply)</summary>'),
      md.indexOf("<details open><summary>Also applied on merge: already in origin/main's plan"),
      md.indexOf('+ user dave@example.com'),
      md.indexOf(
        "<details open><summary>Undone by this pull request: in origin/main's plan, not made on merge</summary>",
      ),
      md.indexOf('~ user bob@example.com'),
    ];
    expect(
      order.every((i) => i >= 0),
      md,
    ).toBe(true);
    expect(order).toEqual([...order].sort((a, b) => a - b));
    expect(md.split('\n').filter((l) => /^`{3,}/.test(l)).length).toBe(8); // three sections and the undeclared objects
  });

  it('says so when the pull request changes nothing the base would not', () => {
    const base = planChanges(prFiles, live, OPTIONS);
    const plan = compareWithBase(planChanges(prFiles, live, OPTIONS), base, { ref: 'main' });
    expect(renderPlan(plan, 'text', { color: false })).toContain(
      "This pull request's changes:\n  (none: merging it changes nothing that main's files would not)\n",
    );
    expect(renderPlan(plan, 'markdown', { color: false })).toContain(
      "**This pull request's changes**: none: merging it changes nothing that main's files would not.",
    );
  });
});
