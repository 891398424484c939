/**
 * The nft commands Firezone 0.7.36's fz_wall issues when it starts (setup_firewall, then restore
 * of users, devices and rules), one after the other, as our own transcription of what its code at
 * that tag does (apps/fz_wall/lib/fz_wall/cli/live.ex, helpers/nft.ex and helpers/sets.ex): the
 * imperative path a real server takes, to compare with the declarative ruleset netform renders.
 * The postrouting (NAT) chain is left out, as netform leaves it out.
 */
import { parseCidrOrAddress } from '../../src/model/net.js';
import { nftAddress } from '../../src/nft/ruleset.js';
import { parsePortRange } from '../../src/model/ports.js';
import type { LiveState } from '../../src/model/state.js';

const T = 'inet firezone';

function filterSpecs(portRules: boolean) {
  // Portless sets first, then the layer-4 ones; within each (ip, drop), (ip, accept), (ip6, drop), (ip6, accept).
  const out: { family: 'ip' | 'ip6'; action: 'drop' | 'accept'; layer4: boolean }[] = [];
  for (const layer4 of portRules ? [false, true] : [false])
    for (const family of ['ip', 'ip6'] as const)
      for (const action of ['drop', 'accept'] as const) out.push({ family, action, layer4 });
  return out;
}

function setName(user: string | null, family: string, action: string, layer4: boolean): string {
  return `${user === null ? '' : `user${user}_`}${family}_${action}${layer4 ? '_layer4' : ''}`;
}

/**
 * The destination as fz_wall's standardized_inet writes it: a CIDR's network, or the address as
 * Erlang's :inet.ntoa prints it (dotted only for ::ffff:a.b.c.d and ::a.b.c.d, as glibc does).
 */
function standardized(destination: string): string {
  const parsed = parseCidrOrAddress(destination)!;
  return destination.includes('/') ? parsed.network : nftAddress(parsed.family, parsed.address);
}

export function fzWallCommands(live: LiveState, options: { portRules: boolean; wgInterface: string }): string {
  const lines: string[] = [];
  const specs = filterSpecs(options.portRules);
  const setupRules = (user: string | null) => {
    const chain = user === null ? 'forward' : `user${user}`;
    for (const s of specs) {
      const type = `${s.family === 'ip' ? 'ipv4_addr' : 'ipv6_addr'}${s.layer4 ? ' . inet_proto . inet_service' : ''}`;
      lines.push(`add set ${T} ${setName(user, s.family, s.action, s.layer4)} { type ${type} ; flags interval ; }`);
    }
    for (const s of specs) {
      const match = s.layer4 ? `${s.family} daddr . meta l4proto . th dport` : `${s.family} daddr`;
      lines.push(
        `insert rule ${T} ${chain} ${match} @${setName(user, s.family, s.action, s.layer4)} meta iifname ${options.wgInterface} ${s.action}`,
      );
    }
  };
  // setup_firewall
  lines.push(`create table ${T}`);
  lines.push(`add chain ${T} forward { type filter hook forward priority 0 ; policy accept ; }`);
  setupRules(null);
  // restore: users (an Erlang set of ids: for up to 32, in byte order), then devices, then rules.
  const users = live.users.map((u) => u.id).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  for (const user of users) {
    lines.push(`add set ${T} user${user}_ip_devices { type ipv4_addr ; flags interval ; }`);
    lines.push(`add set ${T} user${user}_ip6_devices { type ipv6_addr ; flags interval ; }`);
    lines.push(`add chain ${T} user${user}`);
    lines.push(`insert rule ${T} forward ip saddr @user${user}_ip_devices jump user${user}`);
    lines.push(`insert rule ${T} forward ip6 saddr @user${user}_ip6_devices jump user${user}`);
    setupRules(user);
  }
  for (const device of live.devices) {
    if (device.ipv4) lines.push(`add element ${T} user${device.user_id}_ip_devices { ${device.ipv4} }`);
    if (device.ipv6) lines.push(`add element ${T} user${device.user_id}_ip6_devices { ${device.ipv6} }`);
  }
  for (const rule of live.rules) {
    // Without port-rule support the server loads only the rules without ports.
    if (rule.port_type !== null && !options.portRules) continue;
    const family = parseCidrOrAddress(rule.destination)!.family === 4 ? 'ip' : 'ip6';
    const set = setName(rule.user_id, family, rule.action, rule.port_type !== null);
    let element = standardized(rule.destination);
    if (rule.port_type !== null) {
      const { low, high } = (parsePortRange(rule.port_range) as { ok: true; range: { low: number; high: number } })
        .range;
      element += ` . ${rule.port_type} . ${low === high ? low : `${low} - ${high}`}`;
    }
    lines.push(`add element ${T} ${set} { ${element} }`);
  }
  return `${lines.join('\n')}\n`;
}

/**
 * `nft list table inet firezone` text in a form two listings can be compared in: the elements of
 * each `_layer4` set sorted (nft lists those in the order they were added), comments dropped.
 */
export function comparableListing(text: string): string {
  const out: string[] = [];
  const lines = text.split('\n').filter((l) => !/^\s*#/.test(l));
  let layer4 = false;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    if (/^\s*set /.test(line)) layer4 = line.includes('_layer4');
    if (/^\s*elements = \{/.test(line)) {
      let joined = line;
      while (!joined.trimEnd().endsWith('}')) joined += ` ${lines[++i]!.trim()}`;
      const items = joined
        .replace(/^\s*elements = \{\s*/, '')
        .replace(/\s*\}\s*$/, '')
        .split(',')
        .map((s) => s.trim());
      if (layer4) items.sort();
      out.push(`elements = { ${items.join(', ')} }`);
      continue;
    }
    out.push(line);
  }
  return out.join('\n');
}
