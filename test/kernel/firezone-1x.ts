/**
 * The Firezone 1.x objects `netform migrate firezone-1x` writes, read back from its main.tf.json
 * (as Terraform would send them: actors, groups, memberships, resources, policies) and rendered
 * literally as nftables for the lab's router, per device, from docs/firezone-1x.md's semantics:
 *
 * - allow-only, default deny (§1): everything a device sends through the tunnel is dropped unless
 *   an accept below lets it through;
 * - one accept per Resource granted to the device's user (through a Group it is a member of, or
 *   the Everyone group) and per protocol of its filters (§2): `tcp`/`udp` with ports accept those
 *   destination ports, without ports every port (0 too); `icmp` accepts ICMP (ICMPv6 for IPv6);
 *   a Resource without filters accepts every IP protocol. Nothing else: GRE and the rest are
 *   refused by a Resource with filters.
 *
 * Routing (§4): clients with firezone#12684 take, among the authorised Resources covering an
 * address, the first whose filter permits the packet; a packet passes when any of them permits
 * it, which for a list of accepts is just their union (`routing: 'filter'`). So the same
 * rendering models the new clients whether the Resources overlap (`--assume-filter-routing`) or
 * not. Older clients take the most specific prefix and apply only its filter (`routing:
 * 'prefix'`): each Resource's accepts, most specific first, each followed by a drop of the rest of
 * its block. Two Resources of one block with different filters are not modelled (see `prefixTies`).
 *
 * Nothing here reads src/migrate: only the JSON text.
 */

interface TfDocument {
  resource: {
    firezone_actor?: Record<string, { email: string; enabled: boolean }>;
    firezone_group_membership?: Record<string, { group_id: string; actor_id: string }>;
    firezone_resource?: Record<
      string,
      { type: 'cidr' | 'ip'; address: string; filters?: { protocol: 'tcp' | 'udp' | 'icmp'; ports?: string[] }[] }
    >;
    firezone_policy?: Record<string, { group_id: string; resource_id: string }>;
  };
}

/** A 0.7 device as a 1.x client of its user: the addresses its packets come from in the lab. */
export interface Client {
  email: string;
  addresses: string[];
}

/** A resource as the renderer uses it. */
export interface Resource1x {
  name: string;
  address: string;
  filters: { protocol: 'tcp' | 'udp' | 'icmp'; ports: [number, number][] | null }[] | null;
}

function referenced(text: string, type: string): string | null {
  const match = new RegExp(`^\\$\\{${type}\\.([A-Za-z0-9_-]+)\\.id\\}$`).exec(text);
  return match ? match[1]! : null;
}

/** `"80"`, `"8000 - 9000"` (the provider's spelling) as [low, high]. */
function portRange(text: string): [number, number] {
  const [low, high = low] = text.split('-').map((s) => Number(s.trim()));
  if (!Number.isInteger(low) || !Number.isInteger(high)) throw new Error(`not a port range: ${JSON.stringify(text)}`);
  return [low!, high!];
}

/**
 * The Resources each user's clients may reach: the policies of the groups the user's actor is a
 * member of, and of the Everyone group (`everyone`: its id, as --everyone-group gave it), which
 * holds every actor. A disabled actor, or a user without one, reaches nothing.
 */
export function resourcesByUser(text: string, everyone?: string): Map<string, Resource1x[]> {
  const doc = JSON.parse(text) as TfDocument;
  const r = doc.resource;
  const resources = new Map<string, Resource1x>();
  for (const [name, body] of Object.entries(r.firezone_resource ?? {}))
    resources.set(name, {
      name,
      address: body.address,
      filters: body.filters
        ? body.filters.map((f) => ({ protocol: f.protocol, ports: f.ports ? f.ports.map(portRange) : null }))
        : null,
    });
  const groupsOfActor = new Map<string, Set<string>>();
  for (const m of Object.values(r.firezone_group_membership ?? {})) {
    const actor = referenced(m.actor_id, 'firezone_actor');
    const group = referenced(m.group_id, 'firezone_group');
    if (!actor || !group) throw new Error(`membership with an unexpected reference: ${JSON.stringify(m)}`);
    if (!groupsOfActor.has(actor)) groupsOfActor.set(actor, new Set());
    groupsOfActor.get(actor)!.add(group);
  }
  const out = new Map<string, Resource1x[]>();
  for (const [actor, body] of Object.entries(r.firezone_actor ?? {})) {
    if (!body.enabled) continue;
    const groups = groupsOfActor.get(actor) ?? new Set<string>();
    const granted = new Map<string, Resource1x>();
    for (const p of Object.values(r.firezone_policy ?? {})) {
      const group = referenced(p.group_id, 'firezone_group');
      const resource = referenced(p.resource_id, 'firezone_resource');
      if (!resource || !resources.has(resource)) throw new Error(`policy for an unknown resource: ${p.resource_id}`);
      if (group === null && p.group_id !== everyone) throw new Error(`policy for an unknown group: ${p.group_id}`);
      if (group === null || groups.has(group)) granted.set(resource, resources.get(resource)!);
    }
    out.set(body.email, [...granted.values()]);
  }
  return out;
}

function family(address: string): 'ip' | 'ip6' {
  return address.includes(':') ? 'ip6' : 'ip';
}

/** The accepts of one Resource: one per protocol of its filters, or one for every protocol. */
function acceptsOf(resource: Resource1x): string[] {
  const f = family(resource.address);
  const to = `${f} daddr ${resource.address}`;
  if (resource.filters === null) return [`${to} accept`];
  return resource.filters.map(({ protocol, ports }) => {
    if (protocol === 'icmp') return `${to} meta l4proto ${f === 'ip' ? 'icmp' : 'ipv6-icmp'} accept`;
    if (ports === null) return `${to} meta l4proto ${protocol} accept`;
    const set = ports.map(([lo, hi]) => (lo === hi ? `${lo}` : `${lo}-${hi}`)).join(', ');
    return `${to} ${protocol} dport { ${set} } accept`;
  });
}

/**
 * The ruleset: table `inet firezone1x` with a forward chain and an input chain (the router's own
 * addresses are just more destinations in 1.x). Packets from the tunnel interface jump to their
 * device's user chain, then are dropped; other traffic (the lab's ICMP triggers towards devices,
 * IPv6 neighbour discovery that keeps the lab's links working) is left alone.
 */
function prefixOf(address: string): number {
  const [, length] = address.split('/');
  return length === undefined ? (address.includes(':') ? 128 : 32) : Number(length);
}

/** Resources of one list on the same block with different filters: the old clients' choice among them is not modelled. */
export function prefixTies(list: readonly Resource1x[]): number {
  let ties = 0;
  for (let i = 0; i < list.length; i++)
    for (let j = i + 1; j < list.length; j++)
      if (
        list[i]!.address === list[j]!.address &&
        JSON.stringify(list[i]!.filters) !== JSON.stringify(list[j]!.filters)
      )
        ties++;
  return ties;
}

export function render1x(
  byUser: Map<string, Resource1x[]>,
  clients: readonly Client[],
  routing: 'filter' | 'prefix' = 'filter',
  wg = 'wg-firezone',
): string {
  const chains: string[] = [];
  const jumps: string[] = [];
  const emails = [...new Set(clients.map((c) => c.email))];
  emails.forEach((email, i) => {
    const list = byUser.get(email) ?? [];
    const accepts =
      routing === 'filter'
        ? list.flatMap(acceptsOf)
        : [...list]
            .sort((a, b) => prefixOf(b.address) - prefixOf(a.address))
            .flatMap((r) => [...acceptsOf(r), `${family(r.address)} daddr ${r.address} drop`]);
    chains.push(`\tchain user${i} {`, ...accepts.map((a) => `\t\t${a}`), '\t}');
    for (const client of clients.filter((c) => c.email === email))
      for (const address of client.addresses) jumps.push(`\t\t${family(address)} saddr ${address} jump user${i}`);
  });
  const hook = (name: string, hookName: string, priority: number, extra: string[]) => [
    `\tchain ${name} {`,
    `\t\ttype filter hook ${hookName} priority ${priority}; policy accept;`,
    `\t\tiifname != "${wg}" accept`,
    ...extra,
    ...jumps,
    `\t\tdrop`,
    '\t}',
  ];
  return [
    // Replaces the previous state's table, if any.
    'table inet firezone1x',
    'delete table inet firezone1x',
    'table inet firezone1x {',
    ...chains,
    ...hook('forward', 'forward', 0, []),
    // Before the lab's own counting of what reaches the router (input, priority 0).
    ...hook('input', 'input', -10, ['\t\ticmpv6 type { nd-neighbor-solicit, nd-neighbor-advert } accept']),
    '}',
    '',
  ].join('\n');
}
