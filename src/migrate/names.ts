/**
 * Terraform addresses and 1.x names of the compiled objects. Addresses derive from what an object
 * is for, never from its filters, so a change of ports is an in-place update: an actor from its
 * email, a Group from its first member, a Resource from its block (and, when Groups need different
 * filters on one block, the first Group it serves), a Policy and a membership from their two ends.
 * A Resource's `name` (unique per account) is its block and its filter list. Pure.
 */
import { createHash } from 'node:crypto';
import type { AccessUser } from '../access/model.js';
import { filterKey } from './access.js';
import type { Piece } from './target.js';
import type { Actor1x, Group1x, Membership1x, Policy1x, ResourceOut } from './types.js';

export interface NamedObjects {
  actors: Actor1x[];
  groupsByKey: Map<string, Group1x>;
  memberships: Membership1x[];
  resources: ResourceOut[];
  policies: Policy1x[];
  /** Users whose address had to be made unique (email in normal form → the colliding address). */
  collisions: Map<string, string>;
  /** Resource names shortened to 255 characters. */
  resourceCollisions: string[];
}

interface Draft {
  key: string;
  members: string[];
  everyone?: string;
  pieces: Piece[];
}

/** A Terraform identifier: letters, digits and `_`, lower case. */
export function slug(text: string): string {
  return text
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '_')
    .replace(/^_+|_+$/g, '');
}

const MAX_NAME = 255;

function resourceName(cidr: string, key: string): string {
  const name = `${cidr} ${key}`;
  if (name.length <= MAX_NAME) return name;
  const hash = createHash('sha256').update(name).digest('hex').slice(0, 12);
  return `${name.slice(0, MAX_NAME - 15)}… ${hash}`;
}

function unique(base: string, taken: Set<string>): string {
  let address = base;
  for (let n = 2; taken.has(address); n++) address = `${base}_${n}`;
  taken.add(address);
  return address;
}

export function nameObjects(users: readonly AccessUser[], drafts: readonly Draft[]): NamedObjects {
  const taken = new Set<string>();
  const actorOf = new Map<string, string>();
  const collisions = new Map<string, string>();
  const actors: Actor1x[] = [];
  for (const user of users) {
    const base = `u_${slug(user.key) || 'user'}`;
    const address = unique(base, taken);
    if (address !== base) collisions.set(user.key, base);
    actorOf.set(user.key, address);
    actors.push({ address, email: user.email, enabled: !user.noTunnel });
  }

  const ordered = [...drafts].sort((a, b) => {
    const fa = a.everyone !== undefined ? '' : (a.members[0] ?? '');
    const fb = b.everyone !== undefined ? '' : (b.members[0] ?? '');
    return fa < fb ? -1 : fa > fb ? 1 : a.key < b.key ? -1 : 1;
  });
  const groupsByKey = new Map<string, Group1x>();
  const memberships: Membership1x[] = [];
  for (const draft of ordered) {
    const members = [...draft.members].sort();
    if (draft.everyone !== undefined) {
      groupsByKey.set(draft.key, { address: 'everyone', name: 'Everyone', members, everyone: draft.everyone });
      continue;
    }
    const first = members[0]!;
    const address = unique(`g_${slug(first) || 'group'}`, taken);
    const name = members.length > 1 ? `netform: ${first} and ${members.length - 1} more` : `netform: ${first}`;
    groupsByKey.set(draft.key, { address, name, members });
    for (const m of members) {
      const actor = actorOf.get(m)!;
      memberships.push({ address: `m_${address}__${actor}`, group: address, actor });
    }
  }

  // Resources: one per block and filter list, shared by the Groups that have it.
  const byBlock = new Map<string, { piece: Piece; groups: string[] }>();
  for (const draft of ordered) {
    const group = groupsByKey.get(draft.key)!;
    for (const piece of draft.pieces) {
      const id = `${piece.cidr}|${filterKey(piece.filter)}`;
      let entry = byBlock.get(id);
      if (!entry) byBlock.set(id, (entry = { piece, groups: [] }));
      entry.groups.push(group.address);
    }
  }
  const perCidr = new Map<string, number>();
  for (const { piece } of byBlock.values()) perCidr.set(piece.cidr, (perCidr.get(piece.cidr) ?? 0) + 1);
  const resources: ResourceOut[] = [];
  const resourceCollisions: string[] = [];
  const entries = [...byBlock.values()].sort((x, y) => {
    const a = x.piece;
    const b = y.piece;
    if (a.family !== b.family) return a.family - b.family;
    if (a.start !== b.start) return a.start < b.start ? -1 : 1;
    if (a.prefix !== b.prefix) return a.prefix - b.prefix;
    return x.groups[0]! < y.groups[0]! ? -1 : 1;
  });
  for (const { piece, groups } of entries) {
    const block = slug(piece.cidr);
    const base = perCidr.get(piece.cidr)! > 1 ? `r_${block}__${groups[0]}` : `r_${block}`;
    const address = unique(base, taken);
    const host = piece.prefix === (piece.family === 4 ? 32 : 128);
    const name = resourceName(piece.cidr, filterKey(piece.filter));
    if (name.length > 0 && name.includes('…')) resourceCollisions.push(name);
    resources.push({
      address,
      name,
      type: host ? 'ip' : 'cidr',
      address_text: host ? piece.cidr.slice(0, piece.cidr.lastIndexOf('/')) : piece.cidr,
      family: piece.family,
      start: piece.start,
      end: piece.end,
      prefix: piece.prefix,
      filter: piece.filter,
      groups: [...groups].sort(),
    });
  }
  const policies: Policy1x[] = [];
  for (const r of resources)
    for (const g of r.groups)
      policies.push({ address: `p_${r.address.slice(2)}__${g}`, group: g, resource: r.address });
  policies.sort((a, b) => (a.address < b.address ? -1 : a.address > b.address ? 1 : 0));
  memberships.sort((a, b) => (a.address < b.address ? -1 : a.address > b.address ? 1 : 0));
  return { actors, groupsByKey, memberships, resources, policies, collisions, resourceCollisions };
}
