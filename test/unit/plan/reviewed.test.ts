/** intersectReviewed: of a fresh plan, only what the reviewed plan shows, identically; the rest withheld with its reason. */
import { describe, expect, it } from 'vitest';
import { planChanges, type Plan } from '../../../src/plan/index.js';
import {
  intersectReviewed,
  ReviewedPlanError,
  WITHHELD_REASONS,
  type WithheldChange,
} from '../../../src/plan/reviewed.js';
import { withheldDetailText } from '../../../src/views/withheld.js';
import { savedPlanJson } from '../../../src/plan/planfile.js';
import { wordedPlan } from '../../../src/views/notes.js';
import { PlanKey, withSecretHmacs } from '../../../src/plan/seal.js';
import type { LiveState } from '../../../src/model/state.js';
import {
  desired,
  device,
  KEY_B,
  liveDevice,
  liveState,
  liveUser,
  OPTIONS,
  secret,
  user,
} from '../../helpers/plan-fixtures.js';

const admin = liveUser('admin@example.com', { role: 'admin' });
const alice = liveUser('alice@example.com');
const laptop = liveDevice(alice, 'laptop', { mtu: 1280, use_default_mtu: false });
const before = liveState({ users: [admin, alice], devices: [laptop] });

/** The files of the pull request: kim (with a phone) added, alice's laptop at mtu 1400. */
function files(over: { kimRole?: 'admin'; mtu?: number } = {}) {
  return desired({
    settings: { prune: true },
    users: [
      user('admin@example.com'),
      user('alice@example.com', { devices: [device('laptop', { mtu: over.mtu ?? 1400, use_default_mtu: false })] }),
      user('kim@example.com', {
        ...(over.kimRole ? { role: over.kimRole } : {}),
        devices: [device('phone', { public_key: KEY_B })],
      }),
    ],
  });
}

const plan = (state: ReturnType<typeof files>, live: LiveState): Plan => planChanges(state, live, OPTIONS);
const ids = (changes: { id: string }[]) => changes.map((c) => c.id);
/** A withheld change's detail as apply prints it. */
const detailOf = (w: WithheldChange) => (w.detail ? withheldDetailText(w.detail) : undefined);
const reasons = (r: ReturnType<typeof intersectReviewed>) =>
  r.withheld.map((w) => `${w.change.action} ${w.change.id}: ${w.reason}`);

describe('intersectReviewed', () => {
  const reviewed = plan(files(), before);

  it('keeps the whole plan when nothing changed since review', () => {
    const result = intersectReviewed(plan(files(), before), reviewed);
    expect(ids(result.plan.changes)).toEqual(ids(reviewed.changes));
    expect(ids(result.plan.changes)).toEqual([
      'user:kim@example.com',
      'device:alice@example.com/laptop',
      'device:kim@example.com/phone',
    ]);
    expect(result.withheld).toEqual([]);
    expect(result.notNeeded).toEqual([]);
  });

  it('withholds a deletion nobody reviewed (a user made by hand since), and keeps the rest', () => {
    const newhire = liveUser('newhire@example.com');
    const later = liveState({ users: [admin, alice, newhire], devices: [laptop, liveDevice(newhire, 'pc')] });
    const result = intersectReviewed(plan(files(), later), reviewed);
    expect(reasons(result)).toEqual([`delete user:newhire@example.com: ${WITHHELD_REASONS.notReviewed}`]);
    expect(ids(result.plan.changes)).toEqual(ids(reviewed.changes));
    expect(result.plan.summary).toMatchObject({ create: 2, update: 1, delete: 0, cascade: 0 });
    expect(result.plan.limits.find((l) => l.kind === 'delete')!.planned).toBe(0);
  });

  it('withholds a change whose values differ from the reviewed ones, and what depends on it', () => {
    // The merged files differ from the reviewed ones: kim is an admin, the laptop's mtu is 1300.
    const result = intersectReviewed(plan(files({ kimRole: 'admin', mtu: 1300 }), before), reviewed);
    expect(reasons(result)).toEqual([
      `create user:kim@example.com: ${WITHHELD_REASONS.changed}`,
      `update device:alice@example.com/laptop: ${WITHHELD_REASONS.changed}`,
      `create device:kim@example.com/phone: ${WITHHELD_REASONS.dependsOnWithheld}`,
    ]);
    expect(result.withheld.map(detailOf)).toEqual(['differs in role', 'differs in mtu', 'needs user kim@example.com']);
    expect(result.plan.changes).toEqual([]);
  });

  it('withholds an update whose live value moved since review (the reviewer saw another "before")', () => {
    const edited = { ...laptop, mtu: 1300 };
    const result = intersectReviewed(plan(files(), { ...before, devices: [edited] }), reviewed);
    expect(reasons(result)).toEqual([`update device:alice@example.com/laptop: ${WITHHELD_REASONS.changed}`]);
  });

  it('withholds the same change when the object it acts on changed by hand since review', () => {
    // The files drop alice's laptop: reviewed as a deletion of the laptop as it was.
    const dropLaptop = desired({
      settings: { prune: true },
      users: [user('admin@example.com'), user('alice@example.com')],
    });
    const reviewedDelete = plan(dropLaptop, before);
    expect(reviewedDelete.changes.map((c) => `${c.action} ${c.id}`)).toEqual([
      'delete device:alice@example.com/laptop',
    ]);
    const described = { ...laptop, description: 'now the CEO uses it' };
    const result = intersectReviewed(plan(dropLaptop, { ...before, devices: [described] }), reviewedDelete);
    expect(reasons(result)).toEqual([`delete device:alice@example.com/laptop: ${WITHHELD_REASONS.noLongerHolds}`]);
    expect(detailOf(result.withheld[0]!)).toBe('device alice@example.com/laptop changed on the server since review');
  });

  it('withholds a user deletion when more now goes with it than was reviewed', () => {
    const bob = liveUser('bob@example.com');
    const live = liveState({ users: [admin, bob], devices: [liveDevice(bob, 'pc')] });
    const noBob = desired({ settings: { prune: true }, users: [user('admin@example.com')] });
    const reviewedDelete = plan(noBob, live);
    const more = { ...live, devices: [...live.devices, liveDevice(bob, 'phone', { public_key: KEY_B })] };
    const result = intersectReviewed(plan(noBob, more), reviewedDelete);
    expect(reasons(result)).toEqual([`delete user:bob@example.com: ${WITHHELD_REASONS.changed}`]);
    expect(detailOf(result.withheld[0]!)).toBe('what goes with it is not what was reviewed');
  });

  it('keeps a change whose body differs only in server-assigned ids (its user was made by hand since)', () => {
    const kim = liveUser('kim@example.com');
    const result = intersectReviewed(plan(files(), { ...before, users: [admin, alice, kim] }), reviewed);
    expect(result.withheld).toEqual([]);
    const phone = result.plan.changes.find((c) => c.id === 'device:kim@example.com/phone')!;
    expect(phone.body!.user_id).toBe(kim.id);
    expect(ids(result.notNeeded)).toEqual(['user:kim@example.com']);
  });

  it('never keeps more than the fresh plan: a forged reviewed plan adds nothing', () => {
    const forged: Plan = {
      ...reviewed,
      changes: [
        ...reviewed.changes.map((c) =>
          c.id === 'user:kim@example.com' ? { ...c, body: { ...c.body, role: 'admin' } } : c,
        ),
        {
          id: 'user:admin@example.com',
          kind: 'user',
          action: 'delete',
          label: 'user admin@example.com',
          phase: 0,
          key: 'admin@example.com',
          liveId: admin.id,
          fingerprint: null,
          fields: [],
        },
      ],
    };
    const fresh = plan(files(), before);
    const result = intersectReviewed(fresh, forged);
    expect(reasons(result)).toEqual([
      `create user:kim@example.com: ${WITHHELD_REASONS.changed}`,
      `create device:kim@example.com/phone: ${WITHHELD_REASONS.dependsOnWithheld}`,
    ]);
    expect(ids(result.plan.changes)).toEqual(['device:alice@example.com/laptop']);
    for (const kept of result.plan.changes) expect(fresh.changes).toContain(kept);
    expect(ids(result.notNeeded)).toEqual(['user:admin@example.com']);
  });

  it('refuses a reviewed plan made against another server', () => {
    expect(() => intersectReviewed(plan(files(), before), { ...reviewed, server: 'https://other.example' })).toThrow(
      ReviewedPlanError,
    );
  });

  describe("secrets, by reference and HMAC under the run's key", () => {
    const key = PlanKey.from({}, () => 'nf_the-token-of-this-run');
    const withPassword = (password: ReturnType<typeof secret>) =>
      desired({ users: [user('admin@example.com'), user('kim@example.com', { password })] });
    /** The reviewed plan as apply reads it: sealed (secrets as reference and HMAC), then parsed. */
    const sealed = (p: Plan) => JSON.parse(savedPlanJson(wordedPlan(p), key)) as Plan;
    const reviewedPlan = sealed(plan(withPassword(secret('kim-password-1', 'KIM_PASSWORD')), before));

    it('keeps a change whose secret has the reviewed value', () => {
      const fresh = withSecretHmacs(plan(withPassword(secret('kim-password-1', 'KIM_PASSWORD')), before), key);
      const result = intersectReviewed(fresh, reviewedPlan);
      expect(result.withheld).toEqual([]);
      expect(ids(result.plan.changes)).toEqual(['user:kim@example.com']);
    });

    it('withholds it when the value changed, naming the reference and never the value', () => {
      const fresh = withSecretHmacs(plan(withPassword(secret('kim-password-2', 'KIM_PASSWORD')), before), key);
      const result = intersectReviewed(fresh, reviewedPlan);
      expect(reasons(result)).toEqual([`create user:kim@example.com: ${WITHHELD_REASONS.changed}`]);
      expect(detailOf(result.withheld[0]!)).toBe('the value of KIM_PASSWORD is not the reviewed one');
      expect(JSON.stringify(result)).not.toContain('kim-password');
    });

    it('withholds it when the value is read elsewhere, or was not compared under the key (no HMAC, another key)', () => {
      const details = [
        withSecretHmacs(plan(withPassword(secret('kim-password-1', 'KIM_PW')), before), key),
        plan(withPassword(secret('kim-password-1', 'KIM_PASSWORD')), before),
        withSecretHmacs(
          plan(withPassword(secret('kim-password-1', 'KIM_PASSWORD')), before),
          PlanKey.from({}, () => 'nf_another-token'),
        ),
      ].map((fresh) => intersectReviewed(fresh, reviewedPlan).withheld.map(detailOf));
      expect(details).toEqual([
        ['its password is read from KIM_PW, not KIM_PASSWORD as reviewed'],
        ['the value of KIM_PASSWORD could not be compared with the reviewed one'],
        ['the value of KIM_PASSWORD is not the reviewed one'],
      ]);
    });
  });
});
