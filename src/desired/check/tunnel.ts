/** `settings.tunnel_networks`: each a CIDR block of its family, and `server_addresses` inside them. */
import { parseIpAddress } from '../../model/net.js';
import type { DesiredState } from '../../model/state.js';
import { parseTunnelNetwork, TUNNEL_FAMILIES } from '../../model/tunnel.js';
import { tunnelNetworkProblemText } from '../../views/model-tunnel.js';
import type { Diagnostic } from '../types.js';
import { report, type Declared } from './report.js';

export function checkTunnelNetworks(state: DesiredState, into: Diagnostic[]): void {
  const networks = state.settings.tunnel_networks;
  if (!networks) return;
  const settings: Declared = { source: state.settings.source, fallbackPath: 'settings' };
  for (const { field, family } of TUNNEL_FAMILIES) {
    const text = networks[field];
    if (text === undefined) continue;
    const parsed = parseTunnelNetwork(text, family);
    if (!parsed.ok) {
      into.push(report(settings, `tunnel_networks.${field}`, tunnelNetworkProblemText(parsed.problem)));
      continue;
    }
    (state.settings.server_addresses ?? []).forEach((entry, i) => {
      const address = parseIpAddress(entry);
      if (!address || address.family !== family) return;
      if (address.value < parsed.block.start || address.value > parsed.block.end)
        into.push(
          report(
            settings,
            `server_addresses[${i}]`,
            `${address.text} is outside settings.tunnel_networks.${field} (${parsed.block.network}): the server's own tunnel address lies in its tunnel network`,
          ),
        );
    });
  }
}
