/**
 * The compiler's output does not depend on how it is computed: on seeded random fleets built to
 * stress the per-user shortcuts (own rules overlapping, adjacent to and straddling global rules,
 * ported global drops, rules across the reserved, tunnel and scope boundaries, IPv6, disabled
 * users, users without rules), main.tf.json and report.json (in version 1's layout) hash to the digests recorded in
 * test/fixtures/migrate/fleet-digests.json, written by the compiler that diffed every user against
 * the whole address space. And, independently of any recorded output, each user's lost/gained
 * is the brute-force difference of its whole 0.7 reach (every rule over the whole family) against
 * the 1.x reach of the Resources granted to it.
 */
import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { CompiledRules } from '../../../src/access/evaluate.js';
import {
  defaultAccessSettings,
  type AccessDevice,
  type AccessModel,
  type AccessRule,
  type AccessUser,
} from '../../../src/access/model.js';
import type { IpFamily } from '../../../src/model/net.js';
import { compileMigration, gainedCodeOf } from '../../../src/migrate/compile.js';
import { countCidrs, differenceOf, firstCidrs, standardCauses } from '../../../src/migrate/diff.js';
import { rangeToCidrs } from '../../../src/access/changes.js';
import { reach1x, type Resource1x } from '../../../src/migrate/evaluate-1x.js';
import { baselineReach, globalRulesOf, userReach } from '../../../src/migrate/reach-07.js';
import { DEFAULT_TUNNEL_BLOCKS, labelSpace } from '../../../src/migrate/space.js';
import type { MigrateOptions, Migration } from '../../../src/migrate/types.js';
import { migrateResult, type MigrateResult } from '../../../src/ops/migrate.js';
import { reportJson } from '../../../src/views/migrate.js';
import { reportV1Text } from '../../helpers/migrate-report.js';
import { seeded } from '../../helpers/seeded.js';

const DIGESTS = new URL('../../fixtures/migrate/fleet-digests.json', import.meta.url);

/** A fleet whose rules land on a few neighbourhoods, so that users' blocks touch and overlap. */
function fleet(seed: number): AccessModel {
  const r = seeded(seed);
  const v4 = (a: number, b: number, c: number, d: number) => `${a}.${b}.${c}.${d}`;
  const destination = (): string => {
    switch (r.int(0, 9)) {
      case 0:
        return `10.1.${r.int(0, 7)}.0/${r.pick([22, 23, 24, 25])}`
          .replace(/\.(\d+)\.0\/22$/, (_, c) => `.${Number(c) & ~3}.0/22`)
          .replace(/\.(\d+)\.0\/23$/, (_, c) => `.${Number(c) & ~1}.0/23`);
      case 1:
        return v4(10, 1, r.int(0, 7), r.int(0, 255));
      case 2:
        return v4(10, 3, 2, r.int(0, 15));
      case 3:
        return r.pick(['10.3.2.0/28', '10.3.0.0/16', '100.64.0.0/16', '100.127.255.0/24', '10.0.0.0/8']);
      case 4:
        return v4(100, 64, r.int(0, 3), r.int(0, 255));
      case 5:
        return v4(192, 168, r.int(0, 3), r.int(0, 255));
      case 6:
        return `${v4(8, 8, r.int(0, 3), 0)}/24`;
      case 7:
        return r.pick(['fd01::/64', 'fd01::1', 'fd00::3:2:0/120', `fd01::${r.int(1, 40).toString(16)}`]);
      case 8:
        return r.pick(['172.16.0.0/12', '172.16.5.0/24', '10.1.0.0/16', '192.168.0.0/16']);
      default:
        return v4(10, 1, r.int(0, 7), r.int(0, 255));
    }
  };
  const ports = ['22', '80', '443', '8000-8999', '1-1024', '53', '0', '0-100', '65535', '1-65535', '5000-5010'];
  const one = (owner: string | null): AccessRule =>
    r.chance(0.45)
      ? {
          owner,
          action: r.pick(['accept', 'drop'] as const),
          destination: destination(),
          port_type: null,
          port_range: null,
        }
      : {
          owner,
          action: r.pick(['accept', 'drop'] as const),
          destination: destination(),
          port_type: r.pick(['tcp', 'udp'] as const),
          port_range: r.pick(ports),
        };
  const users = new Map<string, AccessUser>();
  const rules: AccessRule[] = Array.from({ length: r.int(3, 14) }, () => one(null));
  const n = r.int(4, 16);
  let device = 0;
  for (let i = 0; i < n; i++) {
    const email = `user${String(i).padStart(2, '0')}@fleet.test`;
    const devices: AccessDevice[] = Array.from({ length: r.int(0, 2) }, () => {
      device++;
      return { name: `d${device}`, ipv4: `10.3.2.${1 + device}`, ipv6: `fd00::3:2:${(1 + device).toString(16)}` };
    });
    users.set(email, { key: email, email, devices, ...(r.chance(0.1) ? { noTunnel: 'disabled' as const } : {}) });
    // A third without own rules, so that they share the baseline's group.
    if (r.chance(0.33)) continue;
    for (let k = r.int(1, 4); k > 0; k--) rules.push(one(email));
  }
  return { users, rules, settings: defaultAccessSettings() };
}

const OPTIONS: Record<string, MigrateOptions> = {
  narrower: { prefer: 'narrower', assumeFilterRouting: false },
  wider: { prefer: 'wider', assumeFilterRouting: false },
  overlapping: { prefer: 'narrower', assumeFilterRouting: true },
  everyone: { prefer: 'narrower', assumeFilterRouting: false, everyoneGroup: 'everyone-id' },
  'everyone-wider-overlapping': { prefer: 'wider', assumeFilterRouting: true, everyoneGroup: 'everyone-id' },
};

const SEEDS = Array.from({ length: 8 }, (_, i) => i + 1);

/** The result report.json is written from; its `state` text is the one the digests were recorded with. */
function resultOf(migration: Migration): MigrateResult {
  return migrateResult('desired' as unknown as MigrateResult['state'], migration, 'netform');
}

const sha = (text: string) => createHash('sha256').update(text).digest('hex');

function digestsOf(seed: number, option: string): { main: string; report: string; migration: Migration } {
  const migration = compileMigration({ model: fleet(seed), options: OPTIONS[option]! });
  const result = resultOf(migration);
  // report.json (version 2) written back in version 1's bytes: the recorded digests are version 1's, so equal digests also show that version 2 lost nothing.
  return { main: sha(result.terraform), report: sha(reportV1Text(reportJson(result))), migration };
}

/** Each user's difference, brute force: its whole 0.7 reach against the 1.x reach of its Group's and Everyone's Resources. */
function bruteForce(model: AccessModel, migration: Migration): void {
  const rules = new CompiledRules(model);
  const scope = migration.scope;
  const tunnel: string[] = [...DEFAULT_TUNNEL_BLOCKS];
  for (const user of model.users.values())
    for (const d of user.devices)
      for (const a of [d.ipv4, d.ipv6]) if (typeof a === 'string' && a !== '') tunnel.push(a);
  const spaceInput = { scope, tunnel, server: model.settings.serverAddresses };
  const { options } = migration;
  const causes = standardCauses('NOT_EXPRESSED', gainedCodeOf(options));
  for (const f of [4, 6] as IpFamily[]) {
    const space = labelSpace(spaceInput, f);
    const global = globalRulesOf(rules, f);
    const baseline = baselineReach(rules, global, f);
    for (const result of migration.users) {
      const user = model.users.get(result.email)!;
      if (user.noTunnel) continue;
      const own = (rules.byOwner.get(user.key) ?? []).filter((x) => x.family === f);
      const mine = own.length > 0 ? userReach(rules, own, global, baseline, f) : baseline;
      const granted = new Set([result.group, options.everyoneGroup !== undefined ? 'everyone' : undefined]);
      const resources: Resource1x[] = migration.resources
        .filter((x) => x.family === f && x.groups.some((g) => granted.has(g)))
        .map((x) => ({
          id: x.address,
          family: x.family,
          start: x.start,
          end: x.end,
          prefix: x.prefix,
          filter: x.filter,
        }));
      const d = differenceOf(mine.segments, reach1x(resources, f, 'filter'), space, f, causes);
      expect(
        result.lost.filter((e) => e.family === f),
        `${result.email} lost, IPv${f}`,
      ).toEqual(d.lost);
      expect(
        result.gained.filter((e) => e.family === f),
        `${result.email} gained, IPv${f}`,
      ).toEqual(d.gained);
    }
  }
}

describe('compileMigration on seeded fleets', () => {
  const recorded = JSON.parse(readFileSync(DIGESTS, 'utf8')) as Record<string, { main: string; report: string }>;
  const written: Record<string, { main: string; report: string }> = {};
  for (const seed of SEEDS)
    it(`seed ${seed}: main.tf.json and report.json as recorded, every option; lost/gained as brute force`, () => {
      for (const option of Object.keys(OPTIONS)) {
        const got = digestsOf(seed, option);
        const name = `${seed}/${option}`;
        written[name] = { main: got.main, report: got.report };
        if (process.env.NETFORM_WRITE_DIGESTS !== '1')
          expect({ main: got.main, report: got.report }, name).toEqual(recorded[name]);
        bruteForce(fleet(seed), got.migration);
      }
      if (process.env.NETFORM_WRITE_DIGESTS === '1' && seed === SEEDS[SEEDS.length - 1])
        writeFileSync(DIGESTS, `${JSON.stringify(written, null, 2)}\n`);
    });
});

describe('CIDR blocks of a range, counted and listed without writing them all', () => {
  it('firstCidrs and countCidrs agree with rangeToCidrs on seeded IPv4 and IPv6 ranges', () => {
    const r = seeded(7);
    const big = (bits: number) => {
      let v = 0n;
      for (let i = 0; i < bits; i += 16) v = (v << 16n) | BigInt(r.int(0, 0xffff));
      return v & ((1n << BigInt(bits)) - 1n);
    };
    for (let k = 0; k < 400; k++) {
      const family: IpFamily = r.chance(0.5) ? 4 : 6;
      const bits = family === 4 ? 32 : 128;
      const a = big(bits);
      const b = r.chance(0.5) ? a + big(r.int(0, 24)) : big(bits);
      const [a0, a1] = a <= b ? [a, b] : [b, a];
      if (a1 >= 1n << BigInt(bits)) continue;
      const all = rangeToCidrs(family, a0, a1);
      expect(countCidrs(family, a0, a1)).toBe(all.length);
      expect(firstCidrs(family, a0, a1, 20)).toEqual(all.slice(0, 20));
      expect(firstCidrs(family, a0, a1, 1_000)).toEqual(all);
    }
    expect(firstCidrs(4, 0n, (1n << 32n) - 1n, 5)).toEqual(['0.0.0.0/0']);
    expect(countCidrs(6, 0n, (1n << 128n) - 1n)).toBe(1);
  });
});
