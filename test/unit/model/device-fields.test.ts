/**
 * The device-field table (src/model/device-fields.ts) and the use_default_<x> rule it owns, and
 * overlapGroup (src/model/rule.ts). What a real server does with each field is checked in
 * test/integration/server/device-fields.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { ruleDerivedColumns } from '../../../server/store/rows.js';
import { readDevice } from '../../../src/client/resources.js';
import {
  checkFlagsInBody,
  checkMergedDevice,
  DEFAULTABLE_DEVICE_FIELDS,
  DEVICE_FIELD_TABLE,
  DEVICE_RESPONSE_KEYS,
  fieldOfFlag,
  flagsOnCreate,
  isDefaultableField,
  isLegacyUpdatable,
  isWritableDeviceField,
  LEGACY_UPDATABLE_DEVICE_FIELDS,
  LIST_DEVICE_FIELDS,
  settleNewDevice,
  STORED_DEVICE_FIELDS,
  USE_DEFAULT_FLAGS,
  useDefaultFlag,
  withImpliedFlags,
  WRITABLE_DEVICE_FIELDS,
} from '../../../src/model/device-fields.js';
import type { FieldErrors } from '../../../src/model/errors.js';
import { overlapGroup, parseRule, rulesOverlap, type RuleShape } from '../../../src/model/rule.js';
import { DEVICE_RESPONSE_KEYS as KEYS_FROM_TYPES } from '../../../src/model/types.js';
import { seeded } from '../../helpers/seeded.js';
import { DEVICE_CONTRACT_KEYS } from '../../helpers/device-contract.js';

const CONTRACT_KEYS = DEVICE_CONTRACT_KEYS;

describe('the device-field table', () => {
  it('has the 25 keys of the contract, in its order', () => {
    expect([...DEVICE_RESPONSE_KEYS]).toEqual(CONTRACT_KEYS);
    expect(KEYS_FROM_TYPES).toBe(DEVICE_RESPONSE_KEYS);
  });

  it('classifies the fields as the contract does', () => {
    expect([...DEFAULTABLE_DEVICE_FIELDS]).toEqual(['allowed_ips', 'dns', 'endpoint', 'mtu', 'persistent_keepalive']);
    expect([...LIST_DEVICE_FIELDS]).toEqual(['allowed_ips', 'dns']);
    expect([...LEGACY_UPDATABLE_DEVICE_FIELDS]).toEqual(['name', 'description']);
    expect([...STORED_DEVICE_FIELDS]).toEqual(CONTRACT_KEYS.filter((k) => k !== 'server_public_key'));
    // A flag before its field: the order of create bodies and of plan lines.
    expect([...WRITABLE_DEVICE_FIELDS]).toEqual([
      'description',
      'public_key',
      'ipv4',
      'ipv6',
      'use_default_allowed_ips',
      'allowed_ips',
      'use_default_dns',
      'dns',
      'use_default_endpoint',
      'endpoint',
      'use_default_mtu',
      'mtu',
      'use_default_persistent_keepalive',
      'persistent_keepalive',
    ]);
    const body = (kind: string) => CONTRACT_KEYS.filter((k) => DEVICE_FIELD_TABLE[k as 'id'].body === kind);
    expect(body('create')).toEqual(['user_id']);
    expect(body('answer')).toEqual([
      'id',
      'server_public_key',
      'remote_ip',
      'latest_handshake',
      'rx_bytes',
      'tx_bytes',
      'inserted_at',
      'updated_at',
    ]);
    // Everything a body may carry is writable but the owner, the name and the preshared key.
    expect(CONTRACT_KEYS.filter((k) => DEVICE_FIELD_TABLE[k as 'id'].body !== 'answer')).toEqual(
      ['user_id', 'name', 'preshared_key', ...WRITABLE_DEVICE_FIELDS].sort((a, b) =>
        CONTRACT_KEYS.indexOf(a) < CONTRACT_KEYS.indexOf(b) ? -1 : 1,
      ),
    );
  });

  it('pairs each defaultable field with its flag use_default_<field>, on by default on create', () => {
    expect(USE_DEFAULT_FLAGS.map(([field, flag]) => [field, flag])).toEqual(
      DEFAULTABLE_DEVICE_FIELDS.map((field) => [field, `use_default_${field}`]),
    );
    for (const [field, flag] of USE_DEFAULT_FLAGS) {
      expect(useDefaultFlag(field)).toBe(flag);
      expect(fieldOfFlag(flag)).toBe(field);
      expect(DEVICE_FIELD_TABLE[flag].createDefault).toBe(true);
    }
    expect(fieldOfFlag('mtu')).toBeUndefined();
    expect(fieldOfFlag('use_default_name')).toBeUndefined();
    expect(isDefaultableField('mtu')).toBe(true);
    expect(isDefaultableField('use_default_mtu')).toBe(false);
    expect(isDefaultableField('ipv4')).toBe(false);
    expect(isWritableDeviceField('use_default_dns')).toBe(true);
    expect(isWritableDeviceField('name')).toBe(false);
    expect(isLegacyUpdatable('description')).toBe(true);
    expect(isLegacyUpdatable('mtu')).toBe(false);
  });

  it("the client's device reader (written out field by field) answers exactly the table's keys", () => {
    const device = readDevice({ id: 'd', user_id: 'u', name: 'n', unknown_key: 1 });
    expect(Object.keys(device)).toEqual(CONTRACT_KEYS);
    // A flag the server left out is its create default.
    for (const [, flag] of USE_DEFAULT_FLAGS) expect(device[flag]).toBe(true);
  });
});

describe('the use_default_<x> rule', () => {
  it('a declared value implies its flag false unless stated; a stated flag is kept', () => {
    expect(withImpliedFlags({ mtu: 1400, dns: ['9.9.9.9'] })).toEqual({
      mtu: 1400,
      dns: ['9.9.9.9'],
      use_default_mtu: false,
      use_default_dns: false,
    });
    expect(withImpliedFlags({ mtu: 1400, use_default_mtu: true })).toEqual({ mtu: 1400, use_default_mtu: true });
    expect(withImpliedFlags({ description: 'x' } as never)).toEqual({ description: 'x' });
  });

  it('one body: a value beside its flag on (an omitted flag on create) is refused; an endpoint is needed with the default off', () => {
    const check = (body: Record<string, unknown>, mode: 'create' | 'update') => {
      const errors: FieldErrors = {};
      checkFlagsInBody(body, mode, errors);
      return errors;
    };
    expect(check({ mtu: 1400 }, 'create')).toEqual({ mtu: ['must not be present'] });
    expect(check({ mtu: 1400 }, 'update')).toEqual({});
    expect(check({ mtu: 1400, use_default_mtu: true }, 'update')).toEqual({ mtu: ['must not be present'] });
    expect(check({ mtu: 1400, use_default_mtu: false }, 'create')).toEqual({});
    expect(check({ dns: [], use_default_dns: true }, 'create')).toEqual({});
    expect(check({ use_default_endpoint: false }, 'create')).toEqual({ endpoint: ["can't be blank"] });
    expect(check({ use_default_endpoint: false }, 'update')).toEqual({});
    expect(check({ use_default_endpoint: false, endpoint: '' }, 'update')).toEqual({ endpoint: ["can't be blank"] });
  });

  it('a create stores each flag as given, else on; a field on its default keeps no value, a list off it is []', () => {
    expect(flagsOnCreate({ use_default_mtu: false })).toEqual({
      use_default_allowed_ips: true,
      use_default_dns: true,
      use_default_endpoint: true,
      use_default_mtu: false,
      use_default_persistent_keepalive: true,
    });
    const row = {
      allowed_ips: [],
      dns: null,
      endpoint: null,
      mtu: 1400,
      persistent_keepalive: null,
      ...flagsOnCreate({ use_default_mtu: false, use_default_dns: false }),
    };
    expect({ ...row, ...settleNewDevice(row) }).toEqual({ ...row, allowed_ips: null, dns: [] });
  });

  it('a merged device: a value sent under a flag on is refused, turning a flag on drops the own value', () => {
    const stored = {
      allowed_ips: ['10.0.0.0/8'],
      dns: ['9.9.9.9'],
      endpoint: 'vpn.example.com',
      mtu: 1400,
      persistent_keepalive: 30,
      ...flagsOnCreate({
        use_default_allowed_ips: false,
        use_default_dns: false,
        use_default_endpoint: false,
        use_default_mtu: false,
        use_default_persistent_keepalive: false,
      }),
    };
    let errors: FieldErrors = {};
    const merged = { ...stored, use_default_mtu: true, use_default_dns: true, use_default_allowed_ips: false };
    expect(checkMergedDevice(merged, { use_default_mtu: true, use_default_dns: true }, errors)).toEqual({
      mtu: null,
      dns: null,
    });
    expect(errors).toEqual({});
    expect(merged).toMatchObject({ mtu: null, dns: null });

    errors = {};
    checkMergedDevice({ ...stored, mtu: 1300, use_default_mtu: true }, { mtu: 1300, use_default_mtu: true }, errors);
    expect(errors).toEqual({ mtu: ['must not be present'] });

    errors = {};
    expect(checkMergedDevice({ ...stored, allowed_ips: null }, { allowed_ips: null }, errors)).toEqual({
      allowed_ips: [],
    });
    errors = {};
    checkMergedDevice({ ...stored, endpoint: null }, { endpoint: null }, errors);
    expect(errors).toEqual({ endpoint: ["can't be blank"] });
  });
});

describe('overlapGroup', () => {
  const OWNERS = [null, 'a@example.com', 'b@example.com'];
  const DESTINATIONS = ['10.0.0.0/8', '10.1.0.0/16', '10.1.2.3', '192.168.0.0/24', 'fd00::/8', 'fd00::1', '::/0'];
  const PORTS: [RuleShape['port_type'], string | null][] = [
    [null, null],
    ['tcp', '80 - 443'],
    ['tcp', '443'],
    ['udp', '53'],
    ['udp', '1 - 65535'],
  ];

  it('rules that overlap share a group; rules of different groups never overlap', () => {
    const random = seeded(21);
    const rules = Array.from({ length: 400 }, () => {
      const [port_type, port_range] = random.pick(PORTS);
      const shape: RuleShape = {
        action: random.pick(['accept', 'drop'] as const),
        destination: random.pick(DESTINATIONS),
        port_type,
        port_range,
        owner: random.pick(OWNERS),
      };
      return { shape, parsed: parseRule(shape)! };
    });
    let overlapping = 0;
    let separated = 0;
    for (const a of rules) {
      for (const b of rules) {
        const same = overlapGroup(a.parsed).key === overlapGroup(b.parsed).key;
        if (rulesOverlap(a.parsed, b.parsed)) {
          overlapping++;
          expect(same, `${JSON.stringify(a.shape)} ${JSON.stringify(b.shape)}`).toBe(true);
        } else if (!same) separated++;
      }
    }
    expect(overlapping).toBeGreaterThan(1000);
    expect(separated).toBeGreaterThan(1000);
  });

  it('is made of the binding, action, family and port type (none without ports)', () => {
    const group = (shape: Partial<RuleShape>) =>
      overlapGroup(
        parseRule({
          action: 'accept',
          destination: '10.0.0.0/8',
          port_type: null,
          port_range: null,
          owner: null,
          ...shape,
        })!,
      );
    expect(group({})).toEqual({ owner: '', action: 'accept', family: 4, ports: '', key: '|accept|4|' });
    expect(group({ owner: 'u', action: 'drop', destination: 'fd00::/8', port_type: 'udp', port_range: '53' })).toEqual({
      owner: 'u',
      action: 'drop',
      family: 6,
      ports: 'udp',
      key: 'u|drop|6|udp',
    });
  });

  it("is the stores' overlap columns", () => {
    const rule = {
      action: 'accept' as const,
      destination: '10.1.0.0/16',
      port_type: 'tcp' as const,
      port_range: '80 - 443',
      user_id: 'c0ffee00-0000-4000-8000-000000000001',
    };
    const group = overlapGroup(parseRule({ ...rule, owner: rule.user_id })!);
    expect(ruleDerivedColumns(rule)).toMatchObject({ owner_key: group.owner, family: group.family, port_group: 'tcp' });
    expect(ruleDerivedColumns({ ...rule, port_type: null, port_range: null, user_id: null })).toMatchObject({
      owner_key: '',
      port_group: '',
      has_ports: false,
    });
  });
});
