/**
 * The access delta's deciding work grows linearly with the fleet when 1% of it changes: every
 * side's whole family is decided once, and a device whose tunnel is new or gone is decided again
 * only inside its owner's own rules. Deciding each such device's whole family afresh (as the delta
 * did: 170 CPU seconds on the bench fleet) makes it quadratic: 4× the fleet, 16× the work. Counted
 * in cells decided (decideRegion's output), in one process, never timed.
 *
 * In memory each entry lists everything its devices reach (the parts shared between them are the
 * same arrays); what the document writes, each list once, is measured in delta-sets.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { computeAccessDelta } from '../../../src/access/delta.js';
import type { AccessModel, AccessRule, AccessUser } from '../../../src/access/index.js';
import { decideWork } from '../../../src/access/partition.js';
import { referenceAccessDelta } from '../../helpers/access-delta-reference.js';

const host = (i: number) => `100.${64 + Math.floor(i / 65536)}.${Math.floor(i / 256) % 256}.${i % 256}`;

/** `n` users with two devices and two own rules each, n global rules; 1% of the users get a new device, 1% lose theirs. */
function fleet(n: number): { before: AccessModel; after: AccessModel } {
  const settings = { portRules: true, serverAddresses: ['10.3.2.1'] };
  const rules: AccessRule[] = [];
  const users = new Map<string, AccessUser>();
  const changed = new Map<string, AccessUser>();
  for (let i = 0; i < n; i++) {
    const key = `u${i}@x.test`;
    for (const k of [0, 1, 2]) {
      const at = 3 * i + k;
      rules.push({
        owner: k === 2 ? null : key,
        action: at % 2 === 0 ? 'accept' : 'drop',
        destination: `${host(at)}/32`,
        port_type: at % 3 === 1 ? 'tcp' : null,
        port_range: at % 3 === 1 ? `${1 + (at % 9000)} - ${101 + (at % 9000)}` : null,
      });
    }
    const devices = [{ name: 'laptop' }, { name: 'phone' }];
    users.set(key, { key, email: key, devices });
    const now = i % 100 === 3 ? [...devices, { name: 'new' }] : i % 100 === 1 ? [] : devices;
    changed.set(key, { key, email: key, devices: now });
  }
  return { before: { users, rules, settings }, after: { users: changed, rules, settings } };
}

function cellsDecided(compute: typeof computeAccessDelta, n: number): number {
  const { before, after } = fleet(n);
  const start = decideWork.cells;
  const delta = compute({ before, after, compared: { before: 'b', after: 'a' } });
  expect(delta.entries.length).toBe(2 * (n / 100));
  return decideWork.cells - start;
}

describe('access delta at scale', () => {
  it('decides 4× the cells for 4× the fleet with 1% changed, not 16×', () => {
    const small = cellsDecided(computeAccessDelta, 400);
    const large = cellsDecided(computeAccessDelta, 1600);
    expect(large / small).toBeGreaterThan(3);
    expect(large / small).toBeLessThan(6);
  }, 60_000);

  it('the count would show the quadratic way: deciding every changed device afresh is 16×', () => {
    const small = cellsDecided(referenceAccessDelta, 200);
    const large = cellsDecided(referenceAccessDelta, 800);
    expect(large / small).toBeGreaterThan(12);
  }, 60_000);
});
