/** routeOwners: which reviewers of settings.owners each change needs, and why; narrowedOwnership. */
import { describe, expect, it } from 'vitest';
import { routeOwners } from '../../../src/access/owners.js';
import { narrowedOwnership, type OwnerEntry } from '../../../src/model/owners.js';
import type { Change } from '../../../src/plan/types.js';

function ruleChange(owner: string, destination: string, over: Partial<Change> = {}): Change {
  return {
    id: `rule:${owner}|accept|${destination}|any`,
    kind: 'rule',
    action: 'create',
    key: `${owner}|accept|${destination}|any`,
    label: `rule accept ${destination}${owner === '*' ? ' (global)' : ` (${owner})`}`,
    phase: 3,
    fingerprint: null,
    fields: [],
    ...over,
  };
}

const db: OwnerEntry = { blocks: ['10.20.0.0/16'], users: [], reviewers: ['@org/db-team'] };
const dbUsers: OwnerEntry = { blocks: [], users: ['*@db.example.com'], reviewers: ['@Org/DB-Team'] };

describe('routeOwners', () => {
  it('names the block owners of a rule inside or across their block, with the access gained there', () => {
    const inside = ruleChange('alice@example.com', '10.20.1.0/24');
    const across = ruleChange('*', '10.0.0.0/8');
    const apart = ruleChange('bob@example.com', '10.99.0.0/16');
    const routed = routeOwners({
      changes: [inside, across, apart],
      owners: [db],
      users: ['alice@example.com', 'bob@example.com'],
      access: {
        users: [
          {
            user: 'alice@example.com',
            reachable: [{ family: 4, addresses: ['10.20.1.0/24'], protocol: 'tcp', ports: '5432' }],
            blocked: [],
          },
        ],
        everyone: { except: [], reachable: [], blocked: [{ family: 4, addresses: ['10.0.0.0/8'], protocol: 'all' }] },
      },
    });
    expect(routed.byChange.get(inside.id)).toEqual(['@org/db-team']);
    expect(routed.byChange.get(across.id)).toEqual(['@org/db-team']);
    expect(routed.byChange.has(apart.id)).toBe(false);
    expect(routed.required).toEqual([
      {
        owner: '@org/db-team',
        because: [
          'loses all protocols to 10.20.0.0/16 for everyone',
          'gains tcp/5432 to 10.20.1.0/24 for alice@example.com',
        ],
      },
    ]);
  });

  it('names user owners for their users, and for a global rule that changes access for them; one reviewer whatever its case', () => {
    const dana = ruleChange('dana@db.example.com', '10.99.0.0/16');
    const global = ruleChange('*', '10.98.0.0/16');
    const routed = routeOwners({
      changes: [dana, global],
      owners: [db, dbUsers],
      users: ['dana@db.example.com', 'bob@example.com'],
      access: {
        users: [],
        everyone: {
          except: [],
          reachable: [{ family: 4, addresses: ['10.98.0.0/16'], protocol: 'udp', ports: '53' }],
          blocked: [],
        },
      },
    });
    expect(routed.byChange.get(dana.id)).toEqual(['@Org/DB-Team']);
    expect(routed.byChange.get(global.id)).toEqual(['@Org/DB-Team']);
    expect(routed.required).toHaveLength(1);
    expect(routed.required[0]!.because).toEqual(['gains udp/53 to 10.98.0.0/16 for everyone']);
  });

  it('says what a change does when the access changes do not (a user created with its rules)', () => {
    const kim = ruleChange('kim@example.com', '10.20.0.0/16');
    const routed = routeOwners({ changes: [kim], owners: [db], users: [], access: { users: [] } });
    expect(routed.required).toEqual([
      { owner: '@org/db-team', because: ['create rule accept 10.20.0.0/16 (kim@example.com)'] },
    ]);
  });

  it("needs the reviewers an owners change narrows for every change of the pull request, not the base's", () => {
    const narrowed = narrowedOwnership([db, dbUsers], [{ ...db, blocks: ['10.20.0.0/24'] }]);
    expect([...narrowed]).toEqual([['@org/db-team', ['10.20.0.0/16', 'users *@db.example.com']]]);
    const mine = ruleChange('bob@example.com', '10.99.0.0/16', { origin: 'pr' });
    const theirs = ruleChange('bob@example.com', '10.98.0.0/16', { origin: 'base' });
    const routed = routeOwners({ changes: [mine, theirs], owners: [], narrowed, users: [] });
    expect(routed.byChange.get(mine.id)).toEqual(['@org/db-team']);
    expect(routed.byChange.has(theirs.id)).toBe(false);
    expect(routed.required[0]!.because).toEqual([
      'settings.owners no longer gives it 10.20.0.0/16, users *@db.example.com',
    ]);
  });

  it('keeps an owner whose block another entry of the same reviewer still covers', () => {
    expect(narrowedOwnership([db], [{ ...db, blocks: ['10.0.0.0/8'] }]).size).toBe(0);
  });
});
