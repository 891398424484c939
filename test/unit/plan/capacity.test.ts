import { describe, expect, it } from 'vitest';
import { planChanges, PlanError } from '../../../src/plan/index.js';
import { planProblemText } from '../../../src/views/plan-problems.js';
import { warningText } from '../../../src/views/plan-warnings.js';
import { desired, device, liveDevice, liveState, liveUser, OPTIONS, user } from '../../helpers/plan-fixtures.js';

const admin = () => liveUser('admin@example.com', { role: 'admin' });
const networks = { ipv4: '10.3.2.0/29', ipv6: 'fd00::3:2:0/120' };
const newUsers = (count: number) =>
  Array.from({ length: count }, (_, i) => user(`u${i}@example.com`, { devices: [device('laptop')] }));
const problemsOf = (run: () => unknown): string[] => {
  try {
    run();
  } catch (error) {
    if (error instanceof PlanError) return error.problems.map(planProblemText);
    throw error;
  }
  return [];
};

describe('tunnel-network capacity (settings.tunnel_networks)', () => {
  it('a /29 holds 5 new devices (8 less network, broadcast and the server address); the 6th is a plan error', () => {
    const live = liveState({ users: [admin()] });
    const five = planChanges(desired({ users: newUsers(5), settings: { tunnel_networks: networks } }), live, OPTIONS);
    expect(five.summary.create).toBe(10);
    expect(
      problemsOf(() =>
        planChanges(desired({ users: newUsers(6), settings: { tunnel_networks: networks } }), live, OPTIONS),
      ),
    ).toEqual([
      "the new devices do not fit in the tunnel network: 1 ipv4 address missing: 6 new devices without a pinned ipv4, 5 free in 10.3.2.0/29 (settings.tunnel_networks.ipv4). Delete devices, pin fewer addresses, or widen the server's network (and settings.tunnel_networks)",
    ]);
  });

  it('live devices take addresses, except those of devices this apply deletes', () => {
    const owner = liveUser('old@example.com');
    const held = liveDevice(owner, 'old', { ipv4: '10.3.2.2', ipv6: 'fd00::3:2:2' });
    const live = liveState({ users: [admin(), owner], devices: [held] });
    // old@example.com is declared with its device: 4 free, 5 new do not fit.
    const keep = user('old@example.com', { devices: [device('old')] });
    const problems = problemsOf(() =>
      planChanges(desired({ users: [keep, ...newUsers(5)], settings: { tunnel_networks: networks } }), live, OPTIONS),
    );
    expect(problems.join('\n')).toContain(
      '1 ipv4 address missing: 5 new devices without a pinned ipv4, 4 free in 10.3.2.0/29',
    );
    // Its device absent (deleted first by this apply): its address is free again.
    const plan = planChanges(
      desired({
        users: [user('old@example.com'), ...newUsers(5)],
        settings: { tunnel_networks: networks },
        absent: { users: [], devices: [{ user: 'old@example.com', name: 'old' }] },
      }),
      live,
      OPTIONS,
    );
    expect(plan.summary.create).toBe(10);
    expect(plan.changes.find((c) => c.action === 'delete')!.phase).toBeLessThan(
      plan.changes.find((c) => c.kind === 'device' && c.action === 'create')!.phase,
    );
  });

  it('a pinned address outside the network, or the server address, is a plan error', () => {
    const pinned = [
      user('a@example.com', { devices: [device('x', { ipv4: '10.9.0.2' })] }),
      user('b@example.com', { devices: [device('y', { ipv4: '10.3.2.1' })] }),
    ];
    expect(
      problemsOf(() =>
        planChanges(
          desired({ users: pinned, settings: { tunnel_networks: networks } }),
          liveState({ users: [admin()] }),
          OPTIONS,
        ),
      ),
    ).toEqual([
      'device a@example.com/x pins ipv4 10.9.0.2, which is outside settings.tunnel_networks.ipv4 (10.3.2.0/29): the server would refuse it',
      'device b@example.com/y pins ipv4 10.3.2.1, which is a server address: the server would refuse it',
    ]);
  });

  it('without tunnel_networks, a warning when the new devices exceed the smallest block holding the live devices', () => {
    const owner = liveUser('old@example.com');
    const devices = Array.from({ length: 250 }, (_, i) =>
      liveDevice(owner, `d${i}`, { ipv4: `10.3.2.${i + 2}`, ipv6: `fd00::3:2:${(i + 2).toString(16)}` }),
    );
    const live = liveState({ users: [admin(), owner], devices });
    const keep = user('old@example.com', { devices: devices.map((d) => device(d.name)) });
    const plan = planChanges(desired({ users: [keep, ...newUsers(4)] }), live, OPTIONS);
    expect(plan.warnings.map(warningText)).toContain(
      '4 new devices need an ipv4 address, but the live devices sit in 10.3.2.0/24, which has 3 free: if that is the server\'s tunnel network, apply will fail with "CIDR … is exhausted". Declare settings.tunnel_networks.ipv4 so that plan can check',
    );
    const fits = planChanges(desired({ users: [keep, ...newUsers(3)] }), live, OPTIONS);
    expect(fits.warnings.map(warningText).join('\n')).not.toContain('new device');
  });
});
