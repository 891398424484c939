/** The configuration stage of the planner: field by field, normalised, only the fields declared. */
import { describe, expect, it } from 'vitest';
import type { ApiConfiguration } from '../../../src/model/configuration.js';
import { defaultSettings, type DesiredState, type LiveState } from '../../../src/model/state.js';
import { planConfiguration } from '../../../src/plan/configuration.js';
import { fingerprintOf } from '../../../src/plan/fingerprint.js';
import { planChanges } from '../../../src/plan/index.js';

const T = '2024-01-01T00:00:00.000000Z';

function liveConfiguration(over: Partial<ApiConfiguration> = {}): ApiConfiguration {
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
    default_client_dns: ['1.1.1.1', '1.0.0.1'],
    default_client_allowed_ips: ['0.0.0.0/0', '::/0'],
    openid_connect_providers: [],
    saml_identity_providers: [],
    logo: {},
    inserted_at: T,
    updated_at: T,
    ...over,
  };
}

describe('planConfiguration', () => {
  it('nothing declared: no change, and the live configuration is not needed', () => {
    expect(planConfiguration(undefined, undefined, 1)).toBeNull();
  });

  it('one update with a line per differing declared field; undeclared fields are never compared', () => {
    const live = liveConfiguration({ local_auth_enabled: false });
    const change = planConfiguration(
      {
        values: {
          default_client_mtu: 1380,
          allow_unprivileged_device_management: false,
          default_client_persistent_keepalive: 25,
        },
      },
      live,
      1,
    );
    expect(change).toMatchObject({
      id: 'configuration',
      kind: 'configuration',
      action: 'update',
      label: 'configuration',
      phase: 1,
      liveId: live.id,
      fingerprint: fingerprintOf('configuration', live),
      body: { default_client_mtu: 1380, allow_unprivileged_device_management: false },
    });
    expect(change!.fields).toEqual([
      { field: 'default_client_mtu', before: 1280, after: 1380 },
      { field: 'allow_unprivileged_device_management', before: true, after: false },
    ]);
  });

  it('spellings the server treats as the same are no change: allowed_ips as a set, endpoint host case, IPv6 forms', () => {
    const live = liveConfiguration({
      default_client_allowed_ips: ['::/0', '0.0.0.0/0'],
      default_client_endpoint: 'VPN.example.com:51820',
      default_client_dns: ['2001:DB8::1'],
    });
    const desired = {
      values: {
        default_client_allowed_ips: ['0.0.0.0/0', '::/0'],
        default_client_endpoint: 'vpn.example.com:51820',
        default_client_dns: ['2001:db8::1'],
      },
    };
    expect(planConfiguration(desired, live, 1)).toBeNull();
  });

  it('an empty DNS list is a value: [] against a live list is a change', () => {
    const change = planConfiguration({ values: { default_client_dns: [] } }, liveConfiguration(), 1);
    expect(change!.fields).toEqual([{ field: 'default_client_dns', before: ['1.1.1.1', '1.0.0.1'], after: [] }]);
  });

  it('through planChanges: first in the plan, counted as an update', () => {
    const desired: DesiredState = {
      settings: defaultSettings(),
      configuration: { values: { default_client_mtu: 1400 } },
      users: [{ email: 'a@example.com', devices: [], rules: [] }],
      rules: [],
      absent: { users: [], devices: [] },
      sources: [],
    };
    const live: LiveState = { users: [], devices: [], rules: [], configuration: liveConfiguration() };
    const plan = planChanges(desired, live, { server: 'test', createdAt: T });
    expect(plan.changes.map((c) => c.id)).toEqual(['configuration', 'user:a@example.com']);
    expect(plan.summary).toMatchObject({ create: 1, update: 1 });
  });
});
