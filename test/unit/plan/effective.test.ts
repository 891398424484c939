/**
 * W3.5 "plans say what happens to access": a change of `default_client_<x>` names every device
 * whose effective value changes, before -> after (bounded in text, all in json), and a
 * `use_default_<x>` flip shows the effective value; the default comes from `/v0/configuration`,
 * else from devices already using it, else it is "the server default".
 */
import { describe, expect, it } from 'vitest';
import type { ApiConfiguration } from '../../../src/model/configuration.js';
import type { DesiredState } from '../../../src/model/state.js';
import { currentDefaults, effectiveValues } from '../../../src/plan/effective.js';
import { planChanges, type Plan } from '../../../src/plan/index.js';
import { EFFECTIVE_LINES_SHOWN, effectiveLine } from '../../../src/views/effective.js';
import { renderPlan } from '../../../src/views/plan.js';
import {
  desired,
  device,
  KEY_A,
  KEY_B,
  liveDevice,
  liveState,
  liveUser,
  OPTIONS,
  user,
} from '../../helpers/plan-fixtures.js';

const T = '2024-01-01T00:00:00.000000Z';
const admin = () => liveUser('admin@example.com', { role: 'admin' });
const text = (plan: Plan) => renderPlan(plan, 'text', { color: false });

function configuration(over: Partial<ApiConfiguration> = {}): ApiConfiguration {
  return {
    id: '00000000-0000-4000-8000-00000000c0f1',
    local_auth_enabled: true,
    allow_unprivileged_device_management: true,
    allow_unprivileged_device_configuration: true,
    disable_vpn_on_oidc_error: false,
    vpn_session_duration: 0,
    default_client_persistent_keepalive: 25,
    default_client_mtu: 1280,
    default_client_endpoint: 'vpn.example.com:51820',
    default_client_dns: ['1.1.1.1'],
    default_client_allowed_ips: ['0.0.0.0/0', '::/0'],
    openid_connect_providers: [],
    saml_identity_providers: [],
    logo: {},
    inserted_at: T,
    updated_at: T,
    ...over,
  };
}

function withConfiguration(state: DesiredState, values: Record<string, unknown>): DesiredState {
  return { ...state, configuration: { values } } as DesiredState;
}

describe('a configuration change names the devices that follow the default', () => {
  const carol = liveUser('carol@corp.test');
  const dave = liveUser('dave@corp.test');
  const carolLaptop = liveDevice(carol, 'laptop', { public_key: KEY_A });
  const carolPhone = liveDevice(carol, 'phone', { public_key: KEY_B, use_default_mtu: false, mtu: 1420 });
  const daveLaptop = liveDevice(dave, 'laptop', { public_key: 'ZGF2ZS1sYXB0b3Ata2V5LTMyLWJ5dGVzLWxvbmcuLi4=' });
  const live = {
    ...liveState({ users: [admin(), carol, dave], devices: [carolLaptop, carolPhone, daveLaptop] }),
    configuration: configuration(),
  };
  const files = desired({
    users: [
      user('carol@corp.test', {
        devices: [device('laptop', { public_key: KEY_A }), device('phone', { public_key: KEY_B, mtu: 1420 })],
      }),
      user('dave@corp.test', { devices: [device('laptop', { public_key: daveLaptop.public_key })] }),
    ],
  });

  it('lists each device with use_default_mtu on, before -> after, and not the one with its own mtu', () => {
    const plan = planChanges(
      withConfiguration(files, { default_client_mtu: 1380, default_client_dns: ['9.9.9.9'] }),
      live,
      OPTIONS,
    );
    const change = plan.changes.find((c) => c.kind === 'configuration')!;
    expect(change.effective).toEqual([
      { device: 'carol@corp.test/laptop', field: 'dns', before: ['1.1.1.1', '1.0.0.1'], after: ['9.9.9.9'] },
      { device: 'carol@corp.test/laptop', field: 'mtu', before: 1280, after: 1380 },
      { device: 'carol@corp.test/phone', field: 'dns', before: ['1.1.1.1', '1.0.0.1'], after: ['9.9.9.9'] },
      { device: 'dave@corp.test/laptop', field: 'dns', before: ['1.1.1.1', '1.0.0.1'], after: ['9.9.9.9'] },
      { device: 'dave@corp.test/laptop', field: 'mtu', before: 1280, after: 1380 },
    ]);
    const shown = text(plan);
    expect(shown).toContain(
      '      default_client_mtu: 1280 -> 1380\n' +
        '      effective values that change (3 devices use the default):\n' +
        '        dns of carol@corp.test/laptop: 1.1.1.1, 1.0.0.1 -> 9.9.9.9\n' +
        '        mtu of carol@corp.test/laptop: 1280 -> 1380\n',
    );
    expect(shown).not.toContain('mtu of carol@corp.test/phone');
    const json = JSON.parse(renderPlan(plan, 'json', { color: false }));
    expect(json.changes[0].effective).toHaveLength(5);
    expect(renderPlan(plan, 'markdown', { color: false })).toContain('mtu of dave@corp.test/laptop: 1280 -> 1380');
  });

  it('a device the plan deletes is not listed; one whose flag the plan turns off is not either', () => {
    const plan = planChanges(
      withConfiguration(
        desired({
          settings: { prune: true, manage: { users: ['*@corp.test'], rules: null } },
          users: [
            user('carol@corp.test', {
              devices: [
                device('laptop', { public_key: KEY_A, mtu: 1300 }),
                device('phone', { public_key: KEY_B, mtu: 1420 }),
              ],
            }),
          ],
        }),
        { default_client_mtu: 1380 },
      ),
      live,
      OPTIONS,
    );
    expect(plan.changes.find((c) => c.kind === 'configuration')!.effective).toBeUndefined();
    // The laptop's own mtu: its field line says it (the flag goes off with the value given).
    const laptop = plan.changes.find((c) => c.id === 'device:carol@corp.test/laptop')!;
    expect(laptop.fields).toEqual([{ field: 'mtu', before: 1280, after: 1300 }]);
    expect(laptop.effective).toBeUndefined();
    expect(plan.changes.find((c) => c.id === 'user:dave@corp.test')?.action).toBe('delete');
  });

  it('bounds the text at 100 lines and says how many more; json lists all', () => {
    const many = Array.from({ length: 130 }, (_, i) => liveUser(`u${i}@corp.test`));
    const devices = many.map((u, i) =>
      liveDevice(u, 'laptop', { public_key: Buffer.alloc(32, i + 1).toString('base64') }),
    );
    const plan = planChanges(
      withConfiguration(
        desired({
          users: many.map((u, i) =>
            user(u.email, { devices: [device('laptop', { public_key: devices[i]!.public_key })] }),
          ),
        }),
        { default_client_mtu: 1380 },
      ),
      { ...liveState({ users: [admin(), ...many], devices }), configuration: configuration() },
      OPTIONS,
    );
    const shown = text(plan);
    expect(shown.match(/^ {8}mtu of /gm)).toHaveLength(EFFECTIVE_LINES_SHOWN);
    expect(shown).toContain('        … and 30 more (the json plan lists all)\n');
    expect(JSON.parse(renderPlan(plan, 'json', { color: false })).changes[0].effective).toHaveLength(130);
  });
});

describe('a use_default flip shows the effective value', () => {
  const carol = liveUser('carol@corp.test');
  const split = liveDevice(carol, 'laptop', {
    public_key: KEY_A,
    use_default_allowed_ips: false,
    allowed_ips: ['10.0.0.0/8'],
  });
  const files = (fields: Record<string, unknown>) =>
    desired({ users: [user('carol@corp.test', { devices: [device('laptop', { public_key: KEY_A, ...fields })] })] });

  it('false -> true: the device value -> the default read from another device', () => {
    const other = liveDevice(liveUser('x@corp.test'), 'x', { public_key: KEY_B, allowed_ips: ['0.0.0.0/0', '::/0'] });
    const plan = planChanges(files({}), liveState({ users: [admin(), carol], devices: [split, other] }), OPTIONS);
    const change = plan.changes.find((c) => c.id === 'device:carol@corp.test/laptop')!;
    expect(change.effective).toEqual([
      { device: 'carol@corp.test/laptop', field: 'allowed_ips', before: ['10.0.0.0/8'], after: ['0.0.0.0/0', '::/0'] },
    ]);
    expect(text(plan)).toContain(
      '      use_default_allowed_ips: false -> true\n      allowed_ips (effective): 10.0.0.0/8 -> 0.0.0.0/0, ::/0\n',
    );
  });

  it('false -> true with no way to read the default: "the server default"', () => {
    const plan = planChanges(files({}), liveState({ users: [admin(), carol], devices: [split] }), OPTIONS);
    expect(text(plan)).toContain('      allowed_ips (effective): 10.0.0.0/8 -> the server default\n');
  });

  it('true -> false: the default -> the device value', () => {
    const full = liveDevice(carol, 'laptop', { public_key: KEY_A });
    const plan = planChanges(
      files({ use_default_allowed_ips: false, allowed_ips: ['10.0.0.0/8'] }),
      liveState({ users: [admin(), carol], devices: [full] }),
      OPTIONS,
    );
    expect(text(plan)).toContain('      allowed_ips (effective): 0.0.0.0/0, ::/0 -> 10.0.0.0/8\n');
  });
});

describe('effective values, the pure parts', () => {
  it('currentDefaults: the configuration first, then a device using the default, else null', () => {
    const u = liveUser('a@corp.test');
    const own = liveDevice(u, 'own', { use_default_mtu: false, mtu: 1500, use_default_dns: false, dns: ['8.8.8.8'] });
    const following = liveDevice(u, 'follows', { mtu: 1280, use_default_dns: false, dns: ['8.8.4.4'] });
    expect(currentDefaults([own, following], configuration({ default_client_mtu: 1400 })).mtu).toBe(1400);
    expect(currentDefaults([own, following]).mtu).toBe(1280);
    expect(currentDefaults([own, following]).dns).toBeNull();
    expect(effectiveValues({ changes: [], devices: [own], keyOf: () => 'k' }).size).toBe(0);
  });

  it('effectiveLine', () => {
    expect(effectiveLine({ device: 'a/b', field: 'dns', before: [], after: null })).toBe(
      'dns (effective): (none) -> the server default',
    );
    expect(effectiveLine({ device: 'a/b', field: 'mtu', before: 1280, after: 1380 }, true)).toBe(
      'mtu of a/b: 1280 -> 1380',
    );
  });
});
