/**
 * `main.tf.json`: the compiled objects as Terraform JSON for the official provider
 * (`firezone/firezone`, docs/firezone-1x.md §7). The Site is a resource every Resource refers to;
 * the Everyone group (--everyone-group) is referred to by its id and never emitted. Same migration,
 * byte-identical text. Pure.
 */
import { MAX_PORT, type Filter1x, type Ranges } from './access.js';
import type { Migration } from './types.js';

export const PROVIDER_SOURCE = 'firezone/firezone';
export const SITE_ADDRESS = 'site';

/** Port ranges as the provider writes them: `"80"`, `"8000 - 9000"`. */
function portStrings(ranges: Ranges): string[] {
  return ranges.map(([lo, hi]) => (lo === hi ? `${lo}` : `${lo} - ${hi}`));
}

function isAllPorts(ranges: Ranges): boolean {
  return ranges.length === 1 && ranges[0]![0] === 0 && ranges[0]![1] === MAX_PORT;
}

/** The `filters` blocks of a filter list; none for every protocol. */
export function filterBlocks(filter: Filter1x): { protocol: string; ports?: string[] }[] {
  if (filter.kind === 'all') return [];
  const blocks: { protocol: string; ports?: string[] }[] = [];
  for (const protocol of ['tcp', 'udp'] as const) {
    const ranges = filter[protocol];
    if (!ranges) continue;
    blocks.push(isAllPorts(ranges) ? { protocol } : { protocol, ports: portStrings(ranges) });
  }
  if (filter.icmp) blocks.push({ protocol: 'icmp' });
  return blocks;
}

/** The Terraform JSON document (an object; documentText writes its bytes). */
export function terraformDocument(migration: Migration, siteName: string): Record<string, unknown> {
  const resource: Record<string, Record<string, unknown>> = {};
  resource.firezone_site = { [SITE_ADDRESS]: { name: siteName } };
  const actors: Record<string, unknown> = {};
  for (const a of migration.actors)
    actors[a.address] = { name: a.email, type: 'account_user', email: a.email, enabled: a.enabled };
  if (migration.actors.length > 0) resource.firezone_actor = actors;
  const groups: Record<string, unknown> = {};
  for (const g of migration.groups) if (g.everyone === undefined) groups[g.address] = { name: g.name };
  if (Object.keys(groups).length > 0) resource.firezone_group = groups;
  const memberships: Record<string, unknown> = {};
  for (const m of migration.memberships)
    memberships[m.address] = {
      group_id: `\${firezone_group.${m.group}.id}`,
      actor_id: `\${firezone_actor.${m.actor}.id}`,
    };
  if (migration.memberships.length > 0) resource.firezone_group_membership = memberships;
  const resources: Record<string, unknown> = {};
  for (const r of migration.resources) {
    const body: Record<string, unknown> = {
      name: r.name,
      type: r.type,
      address: r.address_text,
      site_id: `\${firezone_site.${SITE_ADDRESS}.id}`,
    };
    const filters = filterBlocks(r.filter);
    if (filters.length > 0) body.filters = filters;
    resources[r.address] = body;
  }
  if (migration.resources.length > 0) resource.firezone_resource = resources;
  const policies: Record<string, unknown> = {};
  const groupsByAddress = new Map(migration.groups.map((g) => [g.address, g]));
  for (const p of migration.policies) {
    const group = groupsByAddress.get(p.group);
    policies[p.address] = {
      group_id: group?.everyone !== undefined ? group.everyone : `\${firezone_group.${p.group}.id}`,
      resource_id: `\${firezone_resource.${p.resource}.id}`,
      description: `netform migrate: 0.7 reach of ${group?.name ?? p.group}`,
    };
  }
  if (migration.policies.length > 0) resource.firezone_policy = policies;
  return {
    '//': 'Written by netform migrate firezone-1x from a Firezone 0.7 state; apply with terraform apply -parallelism=1.',
    terraform: { required_providers: { firezone: { source: PROVIDER_SOURCE } } },
    provider: { firezone: {} },
    resource,
  };
}

/** main.tf.json's bytes, of a migration's document (terraformDocument). */
export function documentText(document: Record<string, unknown>): string {
  return `${JSON.stringify(document, null, 2)}\n`;
}
