/**
 * The nftables ruleset a Firezone 0.7.36 server installs (src/nft/ruleset.ts), as an operation:
 * for the desired state, or for the server's users, devices and rules (`live`), in
 * `nft list ruleset` syntax.
 */
import { displayPath } from '../desired/index.js';
import type { DesiredState } from '../model/state.js';
import { NftStateError, nftStateOfDesired, nftStateOfLive, renderRuleset } from '../nft/ruleset.js';
import { loadDesired, loaderFor, type DesiredInput } from './desired.js';
import { OpError } from './errors.js';
import type { OpEvents } from './events.js';
import { readLiveState, type Connector } from './session.js';

export interface NftRequest {
  /** The desired state; with `connect`, only its `settings.port_rules` is used. */
  file?: string;
  /** The server whose state the ruleset is for (its user ids and device addresses: the exact ruleset). */
  connect?: Connector;
  /** The server's WireGuard interface, which filter rules match. */
  wgInterface: string;
  /** Where the file's secrets (and `-` for stdin) are read from. */
  input?: DesiredInput;
}

/** The ruleset's text. */
export async function nftRuleset(request: NftRequest, events: OpEvents = {}, signal?: AbortSignal): Promise<string> {
  // Secrets play no part in a ruleset: one that cannot be read now is only a warning of the load
  // (as for every command), which this ignores; a reference breaking a file rule is an error.
  const desired: DesiredState | undefined = request.file
    ? await loadDesired(request.file, events, loaderFor(request.input))
    : undefined;
  if (!request.connect)
    return renderRuleset(
      nftStateOfDesired(desired!, { wgInterface: request.wgInterface, files: displayPath(request.file!) }),
    );
  const session = await request.connect.open({ cancel: signal });
  try {
    const live = await readLiveState(session);
    const options = {
      portRules: desired?.settings.port_rules !== false,
      wgInterface: request.wgInterface,
      server: session.url,
    };
    try {
      return renderRuleset(nftStateOfLive(live, options));
    } catch (error) {
      // A value from the server that would become ruleset text: the whole ruleset is refused.
      if (error instanceof NftStateError) throw new OpError('server', error.message);
      throw error;
    }
  } finally {
    await session.close();
  }
}
